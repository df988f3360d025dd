import assert from 'node:assert/strict';
import type { SessionEvent } from '../../src/core/session/events';
import { TAB_LOG_LINES, TAB_RESULT_CHARS, workflowRunView } from '../../src/extension/presenter/workflow-view';
import { assertDemoRunDone } from '../support/demo-run';

// Issue 21.6: a workflow run's tab is a fold of its parent's log — the run's `workflow/*`
// events and the tool result that answered the call that started it.
const AT = (s: number) => `2026-01-01T00:00:${String(s).padStart(2, '0')}.000Z`;
let seq = 0;
const wf = (type: string, data: Record<string, unknown>, runId = 'r1') => ({ seq: seq++, at: AT(seq % 60), type, runId, data }) as unknown as SessionEvent;
const result = (callId: string, content: string, isError = false) =>
  ({ seq: seq++, at: AT(seq % 60), type: 'tool/result', callId, name: 'workflow', content, isError }) as unknown as SessionEvent;
const START = {
  callId: 'call_wf',
  name: 'review-parts',
  description: 'Review three parts, then summarise.',
  scriptSha256: 'ab',
  scriptBytes: 10,
  limits: { maxTotalAgents: 1000, concurrency: 3, wallClockMs: 60_000 },
};
const started = (i: number, label: string) => wf('workflow/agent', { index: i, childId: `root.c${i}`, label, status: 'started' });
const done = (i: number, label: string, stopReason: string) => wf('workflow/agent', { index: i, childId: `root.c${i}`, label, status: 'done', stopReason });
const end = (status: string, extra: Record<string, unknown> = {}) =>
  wf('workflow/end', { status, agents: 4, tokens: 100, resultBytes: 10, logsDropped: 0, ...extra });

/** The demo scene's log: review with three agents in parallel, then a summary agent. */
function demoRun(): SessionEvent[] {
  seq = 0;
  return [
    wf('workflow/start', START),
    wf('workflow/phase', { index: 0, title: 'review' }),
    wf('workflow/log', { message: 'reviewing 3 parts' }),
    started(0, 'parser'),
    started(1, 'store'),
    started(2, 'webview'),
    done(1, 'store', 'completed'),
    done(0, 'parser', 'completed'),
    done(2, 'webview', 'completed'),
    wf('workflow/phase', { index: 1, title: 'summarise' }),
    started(3, 'summary'),
    done(3, 'summary', 'completed'),
  ];
}

describe('workflow run tab: the view folded from the parent log', () => {
  it('a finished run: phases done in order, agents with their phase and outcome, the log, the result', () => {
    const events = [...demoRun(), end('completed'), result('call_wf', JSON.stringify({ runId: 'r1', status: 'completed', agents: 4, result: { parts: 3 } }))];
    const v = workflowRunView('root', events, 'r1', false)!;
    assert.equal(v.name, 'review-parts');
    assert.equal(v.parentId, 'root');
    assert.equal(v.status, 'completed');
    assertDemoRunDone(v);
    assert.deepEqual(v.result, { text: '{\n  "parts": 3\n}', truncated: false }, 'the script’s return value, not the tool’s envelope');
    assert.equal(v.error, undefined);
    assert.ok(v.endedAt);
  });

  it('while it runs: the current phase is running, agents not done are running, no result yet', () => {
    const events = demoRun().slice(0, 7); // review; store done, parser and webview running
    const v = workflowRunView('root', events, 'r1', true)!;
    assert.equal(v.status, 'running');
    assert.deepEqual(v.phases, [{ title: 'review', state: 'running' }]);
    assert.deepEqual(
      v.agents.map((a) => a.outcome),
      ['running', 'done', 'running'],
    );
    assert.equal(v.result, undefined);
  });

  it('cancelled: the agents the end cancelled read cancelled (no done event of their own), the phase too', () => {
    const events = [
      ...demoRun().slice(0, 8),
      end('cancelled', { code: 'CANCELLED', error: 'Cancelled by the user.' }),
      result('call_wf', 'workflow: CANCELLED', true),
    ];
    const v = workflowRunView('root', events, 'r1', false)!;
    assert.equal(v.status, 'cancelled');
    assert.deepEqual(v.phases, [{ title: 'review', state: 'cancelled' }]);
    assert.deepEqual(
      v.agents.map((a) => [a.label, a.outcome]),
      [
        ['parser', 'done'],
        ['store', 'done'],
        ['webview', 'cancelled'],
      ],
    );
    assert.equal(v.code, 'CANCELLED');
    assert.equal(v.error, 'Cancelled by the user.');
    assert.equal(v.result, undefined, 'a failed call has no result (its error is the end’s)');
  });

  it('each stop reason has its outcome: error and max-tokens failed, budget over budget, interrupted cancelled', () => {
    seq = 0;
    const events = [
      wf('workflow/start', START),
      ...['error', 'max-tokens', 'budget', 'interrupted'].flatMap((r, i) => [started(i, r), done(i, r, r)]),
      end('failed', { code: 'BUDGET', error: 'Agent 2 was stopped by its budget.' }),
    ];
    const v = workflowRunView('root', events, 'r1', false)!;
    assert.deepEqual(
      v.agents.map((a) => a.outcome),
      ['failed', 'failed', 'over-budget', 'cancelled'],
    );
    assert.deepEqual(v.phases, [], 'a run with no phase() has none');
  });

  it('a run a crash or reload left without an end reads interrupted once nothing runs it', () => {
    const events = demoRun().slice(0, 7);
    const v = workflowRunView('root', events, 'r1', false)!;
    assert.equal(v.status, 'interrupted');
    assert.deepEqual(v.phases, [{ title: 'review', state: 'interrupted' }]);
    assert.deepEqual(
      v.agents.map((a) => a.outcome),
      ['cancelled', 'done', 'cancelled'],
    );
  });

  it('keeps only its own run, the newest log lines (counting the rest) and a bounded result', () => {
    seq = 0;
    const big = 'x'.repeat(TAB_RESULT_CHARS + 10);
    const events = [
      wf('workflow/start', { ...START, callId: 'call_other' }, 'r0'),
      wf('workflow/log', { message: 'not mine' }, 'r0'),
      wf('workflow/start', START),
      ...Array.from({ length: TAB_LOG_LINES + 5 }, (_, i) => wf('workflow/log', { message: `line ${i}` })),
      end('completed', { logsDropped: 2 }),
      result('call_other', 'not mine either'),
      result('call_wf', big),
    ];
    const v = workflowRunView('root', events, 'r1', false)!;
    assert.equal(v.logs.length, TAB_LOG_LINES);
    assert.equal(v.logs[0], 'line 5');
    assert.equal(v.logsDropped, 5 + 2, 'lines the tab dropped and lines the engine dropped');
    assert.equal(v.result!.text.length, TAB_RESULT_CHARS);
    assert.equal(v.result!.truncated, true);
    assert.equal(workflowRunView('root', events, 'nope', true), undefined, 'an unknown run has no view');
  });
});
