import assert from 'node:assert/strict';
import { subagentWorld } from './subagent/helpers';

describe('harness: a user fork is named after what the user sees, distinct from earlier forks', () => {
  const w = subagentWorld({}, { gates: false });

  async function lastTurnEnd(id: string): Promise<number> {
    const s = w.t.h.resident(id)?.session ?? (await w.t.h.store.inspect(id));
    const end = [...s.events].reverse().find((e) => e.type === 'turn/end');
    if (!end) throw new Error(`${id} has no finished turn`);
    return end.seq;
  }

  it('"Fork of <label>" for a subagent, then "(2)", "(3)"; a fork of a fork is "Fork 2 of <label>" (no stacking), a titled conversation reads the same way', async () => {
    const c = await w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: '[[c]] survey', label: 'surveyor' });
    await w.t.h.settle();
    const seq = await lastTurnEnd(c.childId);
    const titles: string[] = [];
    for (let i = 0; i < 3; i++) titles.push((await w.t.h.forkSession(c.childId, seq)).session.header.title ?? '');
    assert.deepEqual(titles, ['Fork of surveyor', 'Fork of surveyor (2)', 'Fork of surveyor (3)']);

    // A fork carries its source's descriptor only in its seed: it is named by its own title.
    const first = w.t.h.store.list().find((h) => h.title === 'Fork of surveyor')!;
    const ff = await w.t.h.forkSession(first.id, await lastTurnEnd(first.id));
    // Names do not stack (issue 21.6): a fork of a fork is "Fork 2 of …", then "Fork 3 of …".
    assert.equal(ff.session.header.title, 'Fork 2 of surveyor');
    const fff = await w.t.h.forkSession(ff.session.header.id, await lastTurnEnd(ff.session.header.id));
    assert.equal(fff.session.header.title, 'Fork 3 of surveyor');

    const titled = await w.t.h.createSession({ title: 'hello Arbor' });
    await titled.accept('[[t]] hi');
    await w.t.h.settle();
    const tf = await w.t.h.forkSession(titled.id, await lastTurnEnd(titled.id));
    assert.equal(tf.session.header.title, 'Fork of hello Arbor');
    // An explicit title is kept as given.
    const named = await w.t.h.forkSession(titled.id, await lastTurnEnd(titled.id), { title: 'my experiment' });
    assert.equal(named.session.header.title, 'my experiment');
  });

  it('an untitled conversation forks as "Fork of Conversation", its name is in the stored header', async () => {
    await w.root.accept('[[r]] hi');
    await w.t.h.settle();
    const f = await w.t.h.forkSession(w.root.id, await lastTurnEnd(w.root.id));
    assert.equal(f.session.header.title, 'Fork of Conversation');
    assert.equal(w.t.h.store.header(f.session.header.id)?.title, 'Fork of Conversation');
  });
});
