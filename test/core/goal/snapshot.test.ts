import assert from 'node:assert/strict';
import { emptyGoalFold, foldGoalEvent, type GoalFold } from '../../../src/core/goal/snapshot';
import { SessionValidationError } from '../../../src/core/session/errors';
import type { GoalSnapshot, SessionEvent } from '../../../src/core/session/events';
import { Session } from '../../../src/core/session/session';

/** A whole log folded, as a session's summary folds it one event at a time. */
function foldGoal(events: readonly SessionEvent[]): GoalFold {
  const f = emptyGoalFold();
  for (const e of events) foldGoalEvent(f, e);
  return f;
}

const header = () => ({ id: 's1', createdAt: new Date().toISOString(), origin: 'user' as const });
const good: GoalSnapshot = { objective: 'ship it', phase: 'active', maxGoalRounds: 3, roundsStarted: 1, revision: 2, operation: 'round' };

describe('goal snapshots: a corrupt goal/change is refused at append', () => {
  const bad: [string, Record<string, unknown>][] = [
    ['an unknown phase', { phase: 'plan' }],
    ['an unknown operation', { operation: 'arm' }],
    ['maxGoalRounds 0', { maxGoalRounds: 0, roundsStarted: 0 }],
    ['maxGoalRounds -1', { maxGoalRounds: -1, roundsStarted: 0 }],
    ['maxGoalRounds 1.5', { maxGoalRounds: 1.5 }],
    ['maxGoalRounds 1e12', { maxGoalRounds: 1e12 }],
    ['more rounds started than allowed', { roundsStarted: 4 }],
    ['a fractional round count', { roundsStarted: 0.5 }],
    ['revision 0', { revision: 0 }],
    ['an empty objective', { objective: '' }],
    ['a 1 MB objective', { objective: 'x'.repeat(1_000_000) }],
    ['a block reason while active', { blocked: { code: 'round-limit', message: 'm' } }],
    ['blocked without a reason', { phase: 'blocked' }],
    ['an unknown block code', { phase: 'blocked', blocked: { code: 'tired', message: 'm' } }],
    ['an unknown key (activation is never durable)', { armed: true }],
  ];
  for (const [what, patch] of bad) {
    it(`refuses ${what}`, () => {
      const s = Session.create(header());
      assert.throws(
        () => s.append({ type: 'goal/change', goal: { ...good, ...patch } as GoalSnapshot }),
        (e: unknown) => e instanceof SessionValidationError && e.code === 'BAD_FIELD' && e.field === 'goal',
      );
      assert.equal(s.length, 0);
    });
  }

  it('accepts a whole snapshot, a blocked one with its reason, and the tombstone; the fold keeps revisions growing', () => {
    const s = Session.create(header());
    s.append({ type: 'goal/change', goal: good });
    s.append({ type: 'goal/change', goal: { ...good, phase: 'blocked', revision: 3, operation: 'block', blocked: { code: 'round-limit', message: 'limit' } } });
    s.append({ type: 'goal/change', goal: null });
    const f = foldGoal(s.events);
    assert.equal(f.goal, null);
    assert.equal(f.revision, 4);
  });
});
