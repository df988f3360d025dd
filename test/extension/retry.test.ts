import assert from 'node:assert/strict';
import type { MessageSource, SessionEvent } from '../../src/core/session/events';
import { retryText } from '../../src/extension/presenter/retry';

// "Retry" on a failed turn sends the human's message again; anything else is refused in words.
const at = '2026-01-01T00:00:00.000Z';
function turn(source: MessageSource, stopReason = 'error'): SessionEvent[] {
  return [
    { seq: 0, at, type: 'turn/start' },
    { seq: 1, at, type: 'user/message', text: 'do it', source },
    { seq: 2, at, type: 'turn/end', stopReason },
  ] as unknown as SessionEvent[];
}

describe('presenter: retry a failed turn', () => {
  it("sends the human's (or a follow-up's) message again", () => {
    assert.equal(retryText(turn({ kind: 'user' }), 2), 'do it');
    assert.equal(retryText(turn({ kind: 'followup', fromSession: 'p' }), 2), 'do it');
  });

  it('refuses a turn another kind of message started, naming it in words (never the raw kind)', () => {
    const cases: [MessageSource, RegExp][] = [
      [{ kind: 'goal', revision: 1, round: 2 }, /started by a goal round, not by you/],
      [{ kind: 'subagent-settled', fromSession: 'c', stopReason: 'completed' }, /started by a subagent's settlement notice/],
      [{ kind: 'subagent-result', fromSession: 'c', stopReason: 'completed' }, /started by a background subagent's result/],
      [{ kind: 'delegation', fromSession: 'p' }, /started by a task/],
    ];
    for (const [source, words] of cases) {
      assert.throws(
        () => retryText(turn(source), 2),
        (err: Error) => words.test(err.message) && !/subagent-/.test(err.message),
      );
    }
  });

  it('refuses what is not a failed turn', () => {
    assert.throws(() => retryText(turn({ kind: 'user' }, 'completed'), 2), /ended completed, not with an error/);
    assert.throws(() => retryText(turn({ kind: 'user' }), 1), /not the end of a turn/);
  });
});
