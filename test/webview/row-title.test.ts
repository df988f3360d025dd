// lib/row-title.ts: the hover texts and labels a tree row carries (moved out of TreeRow.svelte),
// as plain functions of the node — the same words the UI flows read from the rows' attributes.
import * as assert from 'node:assert/strict';
import type { TreeNode } from '../../src/protocol';
import { approvalsLabel, approvalsTitle, costTitle, refusedText, reportsTitle, rowLabel, worktreeTitle } from '../../webview/src/lib/row-title';

const node = (over: Partial<TreeNode> = {}): TreeNode => ({
  id: 's-1',
  origin: 'user',
  depth: 0,
  status: 'idle',
  tokens: { prompt: 1200, completion: 300, cacheHit: 0 },
  reports: 0,
  createdAt: '2025-06-01T09:00:00.000Z',
  ...over,
});

describe('webview row titles', () => {
  it("says whose spend the cost badge shows: the subtree's, the node's, a remote program's own bill, or tokens without a price", () => {
    assert.equal(costTitle(node({ costUsd: 0.5 }), { text: 'Σ $1.00', subtree: true }), 'Cost of this node and everything below it');
    assert.equal(costTitle(node({ costUsd: 0.5 }), { text: '$0.50', subtree: false }), 'Cost of this node');
    assert.equal(costTitle(node(), { text: '1.5k', subtree: false }), 'Prompt + completion tokens (no price for its model)');
    assert.equal(
      costTitle(node({ remote: { program: 'claude-code' } }), { text: 'billed by Claude Code', subtree: false }),
      '1500 tokens; the cost is billed by Claude Code, on its own account',
    );
  });

  it('tells an approval this node waits for from one a subagent below waits for, and counts them', () => {
    assert.equal(approvalsTitle(node({ activity: 'waiting for approval', pendingApprovals: 1 })), 'Waiting for your approval');
    assert.equal(approvalsTitle(node({ activity: 'waiting for children', pendingApprovals: 2 })), 'A subagent below needs your approval');
    assert.equal(approvalsLabel(1), '1 approval waiting');
    assert.equal(approvalsLabel(3), '3 approvals waiting');
  });

  it('names the worktree branch and counts reports', () => {
    assert.equal(worktreeTitle({ state: 'open', branch: 'arbor/abc' }), 'Works in its own git worktree, branch arbor/abc (open)');
    assert.equal(reportsTitle(1), '1 report');
    assert.equal(reportsTitle(2), '2 reports');
  });

  it('keeps refusals in the outcome: "completed" alone would read as done as asked', () => {
    assert.equal(refusedText(node({ refused: 2, lastStopReason: 'completed' })), 'completed · 2 refused');
    assert.equal(refusedText(node({ refused: 1 })), 'completed · 1 refused');
    assert.equal(refusedText(node({ refused: 1, lastStopReason: 'error' })), 'stopped: error · 1 refused');
  });

  it('labels a row with its name, status words, refusals and running time', () => {
    assert.equal(rowLabel('surveyor', node({ status: 'running' }), '1m 05s'), 'surveyor, running, 1m 05s');
    assert.equal(rowLabel('surveyor', node({ status: 'approval', refused: 2 }), undefined), 'surveyor, needs approval, 2 refused');
    assert.equal(rowLabel('3f9a1c', undefined, undefined), '3f9a1c, unknown');
  });
});
