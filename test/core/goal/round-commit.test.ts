import assert from 'node:assert/strict';
import type { SessionEvent } from '../../../src/core/session/events';
import { onEvents } from '../../support/changes';
import { harnessPerTest } from '../../support/harness';
import { journaled } from '../../support/journaled';

// Decision 0083: a goal round is judged when its turn opens, so its goal/change and message
// share the turn's first group commit — two fdatasyncs per round, as a human turn — and the
// model still hears a round only once all of its facts are in the journal on disk.

const goalOps = (evs: readonly SessionEvent[]) => evs.flatMap((e) => (e.type === 'goal/change' ? [e.goal] : []));
const texts = (evs: readonly SessionEvent[]) => evs.flatMap((e) => (e.type === 'user/message' ? [e.text] : []));

describe('goal rounds: one commit with their turn (decision 0083)', () => {
  const w = harnessPerTest();

  it('a round on an idle store costs two fdatasyncs, and the model hears it only once the round and its turn are on disk', async () => {
    const { h, storeDir } = w.t;
    const agent = await h.createSession();
    await agent.accept('warm up'); // the store's first write after open is not the idle case
    await agent.idle();
    const seenOnDisk: string[][] = [];
    w.server.setFallback(() => {
      // The request is here: the round's goal/change, its message and the turn's first facts must be on disk.
      seenOnDisk.push(journaled(storeDir, agent.id, agent.id).map((e) => e.type));
      return { text: 'working on it' };
    });
    const before = h.store.stats();
    try {
      await h.goals.set(agent.id, 'three rounds', 3);
      await h.settle();
    } finally {
      w.server.setFallback(() => ({ text: 'ok' })); // this test's store goes with it
    }
    const after = h.store.stats();
    const ops = goalOps(agent.session.events).map((g) => g?.operation);
    assert.deepEqual(ops, ['set', 'round', 'round', 'round', 'block']);
    // The set, three rounds of two (the round with its turn's start and header; the reply with
    // turn/end), the block at the limit: a round judged only once its accept landed paid three.
    const syncs = after.syncs - before.syncs;
    assert.ok(syncs <= 1 + 3 * 2 + 1, `${syncs} fdatasyncs for a set, three rounds and a block`);
    assert.equal(seenOnDisk.length, 3);
    for (const types of seenOnDisk) {
      const round = types.slice(types.lastIndexOf('goal/change'));
      assert.deepEqual(
        round,
        ['goal/change', 'inbox/accepted', 'inbox/claimed', 'turn/start', 'user/message', 'request/header'],
        'on disk when the request came',
      );
    }
    assert.deepEqual(
      journaled(storeDir, agent.id, agent.id).map((e) => e.seq),
      agent.session.events.map((e) => e.seq),
      'the whole log is in the journal',
    );
  });

  it('a message that comes once the round’s turn has opened waits behind the round, as behind any turn: the goal is not blocked by it', async () => {
    const agent = await w.t.h.createSession();
    let human: Promise<string> | undefined;
    onEvents(w.t.h, (id, e) => {
      // The round's turn has just opened (its commit is still on its way to disk).
      if (id === agent.id && e.type === 'turn/start' && !human) human = Promise.resolve().then(() => agent.accept('and this too', { kind: 'user' }));
    });
    await w.t.h.goals.set(agent.id, 'one round', 1);
    await w.t.h.settle();
    await human;
    const evs = agent.session.events;
    const said = texts(evs);
    assert.equal(said.length, 2);
    assert.match(said[0], /Goal round 1 of 1/);
    assert.equal(said[1], 'and this too');
    assert.equal(evs.filter((e) => e.type === 'turn/end').length, 2);
    // The round ran and the limit blocked the goal afterwards; the human's message did not reject a running round.
    assert.equal(goalOps(evs).at(-1)?.blocked?.code, 'round-limit');
  });
});
