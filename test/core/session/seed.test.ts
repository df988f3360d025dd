import * as assert from 'node:assert/strict';
import { type EndSeedEvent, Session, type SessionEvent, type UserMessageEvent } from '../../../src/core/session';
import { ev, expectError, expectRefusal, forkHeader, header, raw, sessionWith, wholeTurn } from './fixtures';

/** A parent with two whole turns (seq 0–7) and its events as the seed. */
function parentOfTwoTurns(): Session {
  return sessionWith([...wholeTurn('t1', 'first question'), ...wholeTurn('t2')]);
}

describe('forks: Session.fromSeed', () => {
  it('copies the seed and closes it with session/end-seed at seq seedLength', () => {
    const parent = parentOfTwoTurns();
    const fork = Session.fromSeed(forkHeader(), parent.events);
    assert.equal(fork.length, 9);
    assert.deepEqual(fork.events.slice(0, 8), parent.events);
    const end = fork.events[8] as EndSeedEvent;
    assert.equal(end.type, 'session/end-seed');
    assert.equal(end.seq, 8);
    assert.equal(end.seedLength, 8);
    assert.ok(!Number.isNaN(Date.parse(end.at)));
  });

  it('records seedLength in the header and starts live events after the end-seed', () => {
    const fork = Session.fromSeed(forkHeader(), parentOfTwoTurns().events);
    assert.equal(fork.header.seedLength, 8);
    assert.equal(fork.seedLength, 8);
    assert.equal(fork.firstLiveSeq, 9);
    assert.equal(fork.openTurnId, null);
    const first = fork.append(ev.turnStart('t3'));
    assert.equal(first.seq, fork.firstLiveSeq);
  });

  it('leaves a session that is not a fork with seedLength 0 and firstLiveSeq 0', () => {
    const s = parentOfTwoTurns();
    assert.equal(s.seedLength, 0);
    assert.equal(s.firstLiveSeq, 0);
  });

  it('is a deep copy: mutating the source afterwards does not change the fork', () => {
    const parent = parentOfTwoTurns();
    const seed = structuredClone(parent.events) as SessionEvent[];
    const fork = Session.fromSeed(forkHeader(), seed);
    const before = structuredClone(fork.events);
    (seed[1] as UserMessageEvent).text = 'rewritten';
    (seed[1] as UserMessageEvent).source.kind = 'goal';
    seed.length = 2;
    assert.deepEqual(fork.events, before);
    assert.equal((fork.events[1] as UserMessageEvent).text, 'first question');
  });

  it('does not change the parent when the fork goes on', () => {
    const parent = parentOfTwoTurns();
    const snapshot = structuredClone(parent.events);
    const fork = Session.fromSeed(forkHeader(), parent.events);
    fork.append(ev.turnStart('t3'));
    assert.deepEqual(parent.events, snapshot);
    assert.equal(parent.length, 8);
  });

  it("never carries the parent's queue: accepted, unclaimed messages stay the parent's (seed 000 §三)", () => {
    const parent = sessionWith([ev.accepted('m1'), ...wholeTurn('t1'), ev.accepted('m2')]);
    // m1 was accepted before the turn and never claimed (a message typed mid-turn, a notice).
    const fork = Session.fromSeed(forkHeader(), parent.events.slice(0, 5));
    assert.deepEqual(parent.unclaimedInbox, ['m1', 'm2']);
    assert.deepEqual(fork.unclaimedInbox, []);
    const end = fork.events[fork.seedLength];
    assert.equal(end.type, 'session/end-seed');
    assert.deepEqual(end.type === 'session/end-seed' && end.droppedInbox, ['m1']);
    // The fork cannot claim the parent's message: it is not in its inbox.
    expectError(() => fork.append(ev.claimed('m1')), { code: 'INBOX_STATE', field: 'messageId', seq: fork.length });
    // The seed itself is the parent's bytes, unchanged (the prefix cache depends on it).
    assert.deepEqual(fork.events.slice(0, 5), parent.events.slice(0, 5));
    // Restored from the store, the fork still has an empty inbox.
    const back = Session.restore(fork.header, fork.events);
    assert.deepEqual(back.unclaimedInbox, []);
  });

  it('restores a fork written before the rule (no droppedInbox) with the inbox it had', () => {
    const parent = sessionWith([ev.accepted('m1'), ...wholeTurn('t1')]);
    const fork = Session.fromSeed(forkHeader(), parent.events);
    const legacy = fork.events.map((e) => (e.type === 'session/end-seed' ? { seq: e.seq, type: e.type, at: e.at, seedLength: e.seedLength } : e));
    const back = Session.restore(fork.header, legacy as typeof fork.events);
    assert.deepEqual(back.unclaimedInbox, ['m1']);
  });

  describe('refused seeds', () => {
    it('refuses an empty seed: BAD_SEED', () => {
      const err = expectError(() => Session.fromSeed(forkHeader(), []), { code: 'BAD_SEED', field: undefined, seq: undefined });
      assert.match(err.message, /at least one whole turn/);
    });

    it('refuses a half turn: the seed must end at a turn/end', () => {
      const parent = sessionWith([...wholeTurn('t1'), ev.turnStart('t2'), ev.user('half'), ev.assistant('', [['c1', 'read']])]);
      for (const cut of [5, 6, 7]) {
        const err = expectError(() => Session.fromSeed(forkHeader(), parent.events.slice(0, cut)), {
          code: 'BAD_SEED',
          field: 'type',
          seq: cut - 1,
        });
        assert.match(err.message, /must end at a turn\/end, not /);
      }
    });

    it('refuses a seed with a gap', () => {
      const events = parentOfTwoTurns().events;
      const gap = [...events.slice(0, 3), ...events.slice(4)];
      const err = expectError(() => Session.fromSeed(forkHeader(), gap), { code: 'BAD_SEED', field: 'seq', seq: 3 });
      assert.match(err.message, /contiguous from seq 0 \(position 3 holds seq 4\)/);
    });

    it('refuses a seed that does not start at seq 0', () => {
      const events = parentOfTwoTurns().events;
      expectError(() => Session.fromSeed(forkHeader(), events.slice(4)), { code: 'BAD_SEED', field: 'seq', seq: 0 });
    });

    it('refuses a seed with events out of order', () => {
      const events = [...parentOfTwoTurns().events];
      [events[1], events[2]] = [events[2], events[1]];
      expectError(() => Session.fromSeed(forkHeader(), events), { code: 'BAD_SEED', field: 'seq', seq: 1 });
    });

    it('refuses a seed that ends inside a compaction', () => {
      const parent = sessionWith([...wholeTurn('t1'), ev.compactionStart('c1'), ...wholeTurn('t2')]);
      const err = expectError(() => Session.fromSeed(forkHeader(), parent.events), { code: 'BAD_SEED', field: 'type', seq: 8 });
      assert.match(err.message, /inside a compaction/);
    });

    it('accepts a seed whose compaction was closed before its last turn ended', () => {
      const parent = sessionWith([...wholeTurn('t1'), ev.compactionStart('c1'), ev.replacement('c1', 0, 3), ev.compactionEnd('c1'), ...wholeTurn('t2')]);
      assert.equal(Session.fromSeed(forkHeader(), parent.events).seedLength, 11);
    });

    it('accepts a seed that ends at a compaction made right after its last turn (decision 0003, amended)', () => {
      const parent = sessionWith([...wholeTurn('t1'), ...wholeTurn('t2'), ev.compactionStart('c1'), ev.replacement('c1', 0, 3), ev.compactionEnd('c1')]);
      const fork = Session.fromSeed(forkHeader(), parent.events);
      assert.equal(fork.seedLength, 11);
      assert.equal(fork.openTurnId, null);
      assert.deepEqual(
        fork.deriveMessages().map((m) => m.role),
        parent.deriveMessages().map((m) => m.role),
        'the fork starts from the compacted surface',
      );
    });

    it('refuses a seed that ends at a compaction/end inside a turn', () => {
      const parent = sessionWith([...wholeTurn('t1'), ev.turnStart('t2'), ev.compactionStart('c1'), ev.compactionEnd('c1')]);
      const err = expectError(() => Session.fromSeed(forkHeader(), parent.events), { code: 'BAD_SEED', field: 'type' });
      assert.match(err.message, /inside a turn/);
    });

    it('validates every seed event like an append', () => {
      const good = parentOfTwoTurns().events;
      const broken = structuredClone(good) as SessionEvent[];
      (broken[2] as unknown as Record<string, unknown>).model = 7;
      expectError(() => Session.fromSeed(forkHeader(), broken), { code: 'BAD_FIELD', field: 'model', seq: 2 });

      const unknownCall = structuredClone(good) as SessionEvent[];
      unknownCall.splice(2, 1, { seq: 2, at: good[2].at, type: 'tool/result', callId: 'c1', name: 'read', content: '', isError: false });
      expectError(() => Session.fromSeed(forkHeader(), unknownCall), { code: 'UNKNOWN_CALL', field: 'callId', seq: 2 });
    });

    it('refuses a fork header that is not valid', () => {
      const { parentSession: _, ...noParent } = forkHeader();
      expectError(() => Session.fromSeed(noParent, parentOfTwoTurns().events), { code: 'BAD_HEADER', field: 'parentSession' });
    });
  });

  describe('session/end-seed', () => {
    it('cannot be appended by hand, to a fresh session or a fork', () => {
      const fresh = sessionWith(wholeTurn('t1'));
      const err = expectRefusal(fresh, (x) => x.append(raw({ type: 'session/end-seed', seedLength: 4 })), { code: 'BAD_SEED', field: 'type', seq: 4 });
      assert.match(err.message, /only by Session\.fromSeed/);
      const fork = Session.fromSeed(forkHeader(), fresh.events);
      expectRefusal(fork, (x) => x.append(raw({ type: 'session/end-seed', seedLength: 5 })), { code: 'BAD_SEED', field: 'type', seq: 5 });
    });
  });

  describe('a fork of a fork', () => {
    it('seeds from the whole fork, its end-seed included, and closes with its own', () => {
      const root = sessionWith(wholeTurn('t1'));
      const child = Session.fromSeed(forkHeader({ id: 'child' }), root.events); // 0–3 seed, 4 end-seed
      appendAllTurn(child, 't2'); // 5–8
      const grandchild = Session.fromSeed(forkHeader({ id: 'grandchild', parentSession: 'child' }), child.events);
      assert.equal(grandchild.seedLength, 9);
      assert.equal(grandchild.firstLiveSeq, 10);
      assert.deepEqual(
        grandchild.events.filter((e) => e.type === 'session/end-seed').map((e) => [e.seq, (e as EndSeedEvent).seedLength]),
        [
          [4, 4],
          [9, 9],
        ],
      );
      assert.deepEqual(grandchild.events.slice(0, 9), child.events);
      assert.equal(grandchild.append(ev.turnStart('t3')).seq, 10);
    });
  });
});

function appendAllTurn(s: Session, turnId: string): void {
  for (const d of wholeTurn(turnId)) s.append(d);
}

describe('Session.restore and the seed', () => {
  it('restores a fork from its header and events', () => {
    const fork = Session.fromSeed(forkHeader(), parentOfTwoTurns().events);
    appendAllTurn(fork, 't3');
    const back = Session.restore(fork.header, fork.events);
    assert.deepEqual(back.events, fork.events);
    assert.equal(back.seedLength, 8);
    assert.equal(back.firstLiveSeq, 9);
  });

  it('refuses a header seedLength whose end-seed is missing: BAD_SEED on seedLength', () => {
    const fork = Session.fromSeed(forkHeader(), parentOfTwoTurns().events);
    const h = fork.header;
    // The log stops before the end-seed.
    const err = expectError(() => Session.restore(h, fork.events.slice(0, 8)), { code: 'BAD_SEED', field: 'seedLength', seq: 8 });
    assert.match(err.message, /seedLength 8 but seq 8 is not session\/end-seed/);
    // The header points at an ordinary event.
    expectError(() => Session.restore({ ...h, seedLength: 4 }, fork.events), { code: 'BAD_SEED', field: 'seedLength', seq: 4 });
    // A seeded header over a log that was never forked.
    const plain = parentOfTwoTurns();
    expectError(() => Session.restore({ ...forkHeader(), seedLength: 4 }, plain.events), { code: 'BAD_SEED', field: 'seedLength', seq: 4 });
  });

  it('refuses an end-seed that does not sit at seq seedLength: BAD_SEED', () => {
    const events = structuredClone(Session.fromSeed(forkHeader(), parentOfTwoTurns().events).events) as SessionEvent[];
    (events[8] as EndSeedEvent).seedLength = 7;
    expectError(() => Session.restore({ ...forkHeader(), seedLength: 8 }, events), { code: 'BAD_SEED', field: 'seedLength', seq: 8 });
  });

  it('does not let Session.create make a seeded session', () => {
    expectError(() => Session.create({ ...header(), origin: 'fork', parentSession: 'p', seedLength: 0 }), { code: 'BAD_HEADER', field: 'seedLength' });
  });
});
