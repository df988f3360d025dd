import assert from 'node:assert/strict';
import type { HookRunEvent } from '../../src/core/session/events';
import { hookLine, toEntry } from '../../src/extension/presenter/transcript';

describe('presenter: a hook run is one compact line in the transcript (decision 0057)', () => {
  const base: HookRunEvent = {
    seq: 7,
    at: '2026-12-02T05:00:00.000Z',
    type: 'hook/run',
    event: 'PreToolUse',
    command: 'node .arbor/hooks/no-rm-rf.mjs',
    source: 'workspace',
    outcome: 'blocked',
    tool: 'run_command',
    exitCode: 2,
    durationMs: 41,
    reason: "'rm -rf' is blocked in this workspace",
  };

  it('a block names the event, the tool and the reason, and keeps its outcome for the style', () => {
    assert.deepEqual(toEntry(base), {
      kind: 'hook',
      seq: 7,
      at: base.at,
      text: "hook PreToolUse blocked run_command: 'rm -rf' is blocked in this workspace",
      outcome: 'blocked',
    });
  });

  it('a quiet run shows its time; an allow its decision; a long reason is cut at 300 characters', () => {
    assert.equal(hookLine({ ...base, outcome: 'ok', reason: undefined, exitCode: 0 }), 'hook PreToolUse ran run_command (41 ms)');
    assert.equal(hookLine({ ...base, outcome: 'ok', decision: 'allow', reason: 'trusted' }), 'hook PreToolUse ran run_command (allow): trusted');
    assert.equal(
      hookLine({ ...base, event: 'Stop', tool: undefined, outcome: 'timeout', reason: 'it ran past its timeout of 60 s and was killed' }),
      'hook Stop timed out: it ran past its timeout of 60 s and was killed',
    );
    const long = hookLine({ ...base, reason: 'x'.repeat(1000) });
    assert.ok(long.length < 360 && long.endsWith('…'));
  });
});
