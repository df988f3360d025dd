import * as assert from 'node:assert/strict';
import type { WorkflowRunView } from '../../src/protocol';
import { outcomeCounts, runSummary, sigmaText, viewCounts } from '../../webview/src/lib/run-words';

// Issue 21.6: a workflow run's row and tab say how its agents ended, from the counts the host
// folded out of the run's events.
describe('webview: a workflow run in words', () => {
  const run = (extra: Partial<Parameters<typeof runSummary>[0]>) => runSummary({ agents: 4, running: 0, status: 'completed', ...extra });

  it('"4 agents · done" when every agent is done; "3 done, 1 cancelled" when not', () => {
    assert.equal(run({ ended: { done: 4 } }), '4 agents · done');
    assert.equal(run({ status: 'cancelled', ended: { done: 3, cancelled: 1 } }), '3 done, 1 cancelled');
    assert.equal(run({ agents: 1, ended: { done: 1 } }), '1 agent · done');
    assert.equal(run({ agents: 0, ended: {} }), '0 agents · done');
    assert.equal(run({ status: 'failed', code: 'BUDGET', ended: { done: 2, 'over-budget': 1, failed: 1 } }), '2 done, 1 failed, 1 over budget (BUDGET)');
    assert.equal(run({ status: 'failed', code: 'AGENT_CAP', agents: 2, ended: { done: 2 } }), '2 agents · failed (AGENT_CAP)');
  });

  it('while running: the phase and how many run and ended', () => {
    assert.equal(run({ status: 'running', phase: 'review', running: 2, ended: { done: 1 } }), 'review · 2 running, 1 done');
    assert.equal(run({ status: 'running', phase: 'review', running: 3, ended: {} }), 'review · 3 running');
    assert.equal(run({ status: 'running', agents: 0, ended: {} }), 'starting · no agents yet');
  });

  it('a run folded before the counts existed says only how many agents there were', () => {
    assert.equal(run({ status: 'cancelled' }), '4 agents · cancelled');
  });

  it('counts a tab’s own view the same way, and writes the Σ with tokens and dollars', () => {
    const v = {
      status: 'cancelled',
      phases: [{ title: 'review', state: 'cancelled' }],
      agents: [
        { index: 0, childId: 'a', outcome: 'done' },
        { index: 1, childId: 'b', outcome: 'done' },
        { index: 2, childId: 'c', outcome: 'done' },
        { index: 3, childId: 'd', outcome: 'cancelled' },
      ],
    } as unknown as WorkflowRunView;
    assert.equal(runSummary(viewCounts(v)), '3 done, 1 cancelled');
    assert.equal(outcomeCounts({ cancelled: 1, done: 3 }), '3 done, 1 cancelled', 'said in a fixed order');
    assert.equal(sigmaText({ tokens: 12_345, cacheHit: 0, costUsd: 0.0031, savedUsd: 0 }), 'Σ $0.0031 · 12,345 tokens');
    assert.equal(sigmaText({ tokens: 12_345, cacheHit: 0, costUsd: 1.5, savedUsd: 0 }), 'Σ $1.50 · 12,345 tokens');
    assert.equal(sigmaText({ tokens: 12_345, cacheHit: 0 }), 'Σ 12,345 tokens', 'no dollar figure without a price');
    assert.equal(sigmaText({ tokens: 0, cacheHit: 0 }), undefined, 'nothing before any agent spent');
  });
});
