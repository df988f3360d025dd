import * as assert from 'node:assert/strict';
import { Session, type SessionEvent } from '../../../src/core/session';
import { ev, expectError, header, sessionWith, wholeTurn } from './fixtures';

describe('Session.restore', () => {
  it('rebuilds the same log and the state to go on from', () => {
    const live = sessionWith([
      ev.accepted('m1'),
      ...wholeTurn('t1'),
      ev.compactionStart('c1'),
      ev.turnStart('t2'),
      ev.assistant('', [
        ['c1', 'read'],
        ['c2', 'grep'],
      ]),
      ev.result('c1', 'read'),
    ]);
    const back = Session.restore(live.header, structuredClone(live.events) as SessionEvent[]);
    assert.deepEqual(back.events, live.events);
    assert.equal(back.openTurnId, 't2');
    assert.deepEqual([...back.pendingCalls], [['c2', 'grep']]);
    assert.equal(back.openCompactionId, 'c1');
    assert.deepEqual(back.unclaimedInbox, ['m1']);
    // It goes on exactly where the live one would.
    assert.equal(back.append(ev.result('c2', 'grep')).seq, live.length);
    expectError(() => back.append(ev.result('c1', 'read')), { code: 'DUPLICATE_RESULT' });
  });

  it('re-checks every ordering rule, naming the stored seq', () => {
    const events = structuredClone(sessionWith([...wholeTurn('t1'), ev.turnStart('t2')]).events) as SessionEvent[];
    events.push({ seq: 5, at: events[0].at, type: 'turn/end', turnId: 't1', stopReason: 'completed' });
    expectError(() => Session.restore(header(), events), { code: 'TURN_MISMATCH', field: 'turnId', seq: 5 });
  });

  it('refuses a stored log with a gap: SEQ_GAP', () => {
    const events = sessionWith(wholeTurn('t1')).events;
    expectError(() => Session.restore(header(), [events[0], events[2]]), { code: 'SEQ_GAP', field: 'seq', seq: 1 });
  });

  describe('trusted', () => {
    it('skips shape checks on bytes the store already validated', () => {
      const events = structuredClone(sessionWith([ev.user('hi')]).events) as SessionEvent[];
      (events[0] as unknown as Record<string, unknown>).source = 'not an object';
      expectError(() => Session.restore(header(), events), { code: 'BAD_FIELD', field: 'source', seq: 0 });
      assert.equal(Session.restore(header(), events, { trusted: true }).length, 1);
    });

    it('still refuses a gap and still applies ordering rules', () => {
      const events = sessionWith(wholeTurn('t1')).events;
      expectError(() => Session.restore(header(), [events[0], events[2]], { trusted: true }), { code: 'SEQ_GAP', field: 'seq', seq: 1 });
      expectError(
        () =>
          Session.restore(
            header(),
            [events[0], events[1], events[2], events[0]].map((e, i) => ({ ...e, seq: i })),
            { trusted: true },
          ),
        {
          code: 'TURN_ALREADY_OPEN',
          seq: 3,
        },
      );
    });
  });
});
