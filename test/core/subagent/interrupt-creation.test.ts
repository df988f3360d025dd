import assert from 'node:assert/strict';
import { hold, ofType, stopReasons, subagentWorld, waitFor } from './helpers';

// Seed 002: a start carries the caller's abort signal. A parent interrupted while its child is
// being created leaves no child running a model turn; interrupting a parent's turn stops every
// running descendant that the turn waits on.
describe('subagent: interrupt reaches a child being created, and every descendant waited on', () => {
  const w = subagentWorld();

  function gatePublish() {
    const store = w.t.h.store;
    const orig = store.createSession.bind(store);
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    let reached = false;
    store.createSession = async (header, events) => {
      reached = true;
      await gate;
      await orig(header, events);
    };
    return { open, reached: () => reached, restore: () => (store.createSession = orig) };
  }

  it('interrupted while the child is being published: the child runs no model turn and its log ends interrupted', async () => {
    w.script.on('root', { toolCalls: [{ name: 'subagent', arguments: { prompt: '[[c]] task', label: 'c' } }] });
    const g = gatePublish();
    await w.root.accept('[[root]] delegate');
    await waitFor(g.reached, 'the child publish to begin');
    await w.root.cancel('interrupted');
    g.open();
    g.restore();
    await w.t.h.settle();
    assert.deepEqual(stopReasons(w.root.session.events), ['interrupted']);
    const [c] = w.t.h.store.children(w.root.id);
    assert.ok(c, 'the child was published (the interrupt came during the write)');
    const cs = await w.t.h.store.inspect(c.id);
    assert.deepEqual(stopReasons(cs.events), ['interrupted'], "the child's log ends interrupted");
    assert.equal(ofType(cs.events, 'request/header').length, 0, 'no model request for the child');
    assert.equal(w.script.bodies('c').length, 0);
    assert.equal(w.t.h.resident(c.id), undefined, 'nothing of it is left running');
  });

  it('interrupted before the publish: nothing is created (CANCELLED)', async () => {
    const ac = new AbortController();
    ac.abort('interrupted');
    await assert.rejects(
      w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: '[[c]] x' }, { signal: ac.signal }),
      (e: Error & { code?: string }) => e.code === 'CANCELLED',
    );
    await assert.rejects(
      w.t.h.subagents.start(w.root, 'spawn', { prompt: '[[c]] x' }, { signal: ac.signal }),
      (e: Error & { code?: string }) => e.code === 'CANCELLED',
    );
    assert.equal(w.t.h.store.children(w.root.id).length, 0);
    assert.equal(w.t.h.residentCount, 1);
  });

  it('interrupting the root stops the child and the grandchild its turn waits on', async () => {
    w.script.on('root', { toolCalls: [{ name: 'subagent', arguments: { prompt: '[[c]] middle', label: 'c' } }] });
    w.script.on('c', { toolCalls: [{ name: 'subagent', arguments: { prompt: '[[g]] deep', label: 'g' } }] });
    w.script.on('g', { toolCalls: [hold('g')] });
    await w.root.accept('[[root]] go');
    await w.gates.whenHeld('g');
    await w.root.cancel('interrupted');
    await w.t.h.settle();
    const [c] = w.t.h.store.children(w.root.id);
    const [g] = w.t.h.store.children(c.id);
    for (const id of [w.root.id, c.id, g.id]) {
      const evs = w.t.h.resident(id)?.session.events ?? (await w.t.h.store.inspect(id)).events;
      assert.deepEqual(stopReasons(evs), ['interrupted'], `${id} ended interrupted`);
    }
    assert.equal(w.t.h.residentCount, 1, 'only the root is resident');
  });
});
