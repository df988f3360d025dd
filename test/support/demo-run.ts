import assert from 'node:assert/strict';
import type { WorkflowRunView } from '../../src/protocol';

/**
 * The demo's workflow scene as its run tab shows it once finished: review with three agents in
 * parallel, then a summary agent; one log line. Shared by the fold's unit test and the tab's test
 * over a real harness.
 */
export function assertDemoRunDone(v: Pick<WorkflowRunView, 'phases' | 'agents' | 'logs'>): void {
  assert.deepEqual(v.phases, [
    { title: 'review', state: 'done' },
    { title: 'summarise', state: 'done' },
  ]);
  assert.deepEqual(
    v.agents.map((a) => [a.label, a.phase, a.outcome]),
    [
      ['parser', 'review', 'done'],
      ['store', 'review', 'done'],
      ['webview', 'review', 'done'],
      ['summary', 'summarise', 'done'],
    ],
  );
  assert.deepEqual(v.logs, ['reviewing 3 parts']);
}
