import * as assert from 'node:assert/strict';
import type { SessionEvent } from '../../../src/core/session/events';
import { refusalSentence, refusedActions } from '../../../src/core/session/refusals';
import { createRunCommandTool } from '../../../src/core/tools/run-command';
import { call, makeWorkspace } from '../tools/fixture';

const AT = '2025-06-01T09:00:00.000Z';
const result = (seq: number, name: string, refusal?: { outcome: string; summary: string }): SessionEvent =>
  ({ seq, type: 'tool/result', at: AT, callId: `c${seq}`, name, content: 'x', isError: !!refusal, ...(refusal ? { refusal } : {}) }) as SessionEvent;

describe('refused actions (decision 0015)', () => {
  it('run_command marks a refusal with the approval outcome and what was asked', async () => {
    const ws = makeWorkspace();
    try {
      const r = await call(createRunCommandTool(), { command: 'npm test', outsideSandbox: true }, ws.ctx({ approvalPolicy: 'never' }));
      assert.equal(r.code, 'APPROVAL_DENIED');
      assert.deepEqual(r.refusal, { outcome: 'policy-never', summary: '$ npm test' });
      const ok = await call(createRunCommandTool(), { command: 'true' }, ws.ctx({ sandbox: 'full-access', approvalPolicy: 'never' }));
      assert.equal(ok.refusal, undefined, 'a command that ran is not a refusal');
    } finally {
      ws.cleanup();
    }
  });

  it('folds refusals from tool results, from a given seq on, and says them in one sentence', () => {
    const events = [
      result(0, 'run_command', { outcome: 'policy-never', summary: '$ rm -rf build' }),
      result(1, 'read_file'),
      result(2, 'run_command', { outcome: 'policy-never', summary: '$ npm test' }),
      result(3, 'write_file', { outcome: 'denied', summary: 'write_file: overwrite .vscode/settings.json (12 bytes)' }),
    ];
    const all = refusedActions(events);
    assert.deepEqual(
      all.map((a) => [a.seq, a.tool, a.what, a.outcome]),
      [
        [0, 'run_command', 'rm -rf build', 'policy-never'],
        [2, 'run_command', 'npm test', 'policy-never'],
        [3, 'write_file', 'overwrite .vscode/settings.json (12 bytes)', 'denied'],
      ],
    );
    const later = refusedActions(events, 2);
    assert.equal(later.length, 2, 'refusals before fromSeq (an earlier activation, a fork seed) are not counted');
    assert.equal(refusalSentence(later.slice(0, 1)), 'Finished, but 1 action was refused: run_command `npm test` (approval: never).');
    assert.equal(
      refusalSentence(all, 2),
      'Finished, but 3 actions were refused: run_command `rm -rf build` (approval: never); run_command `npm test` (approval: never); and 1 more.',
    );
    assert.equal(refusalSentence([]), '');
  });
});
