import assert from 'node:assert/strict';
import { ofType, subagentWorld } from './helpers';

// Children run on their parent's model unless the delegation names one; a fork of a child
// keeps the child's request head (model included), so the provider's prefix cache holds.
describe("subagent: children inherit the parent's model", () => {
  const w = subagentWorld({}, { gates: false });

  it("a child with its own model passes it on: its spawned child and its fork run on it, and the fork's head hits the cache", async () => {
    const LONG = `[[c]] study ${'the store journal and its checkpoint rules '.repeat(40)}`;
    w.script.on(
      'c',
      { text: `long study ${'observations '.repeat(80)}` },
      {
        toolCalls: [
          { name: 'subagent', arguments: { prompt: '[[g]] grandchild task', label: 'g' } },
          { name: 'subagent_fork', arguments: { prompt: '[[f]] fork task' } },
        ],
      },
      { text: 'c done' },
    );
    w.script.on('g', { text: 'g done' });
    w.script.on('f', { text: 'f done' });
    // The runtime's API names a model (a deployment's provider row or a workflow may).
    const started = await w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: LONG, label: 'c', model: 'special-model' });
    await w.t.h.settle();
    const c = w.t.h.store.header(started.childId)!;
    // The child's second turn is started by a follow-up (its first turn answers the study).
    await w.t.h.send(c.id, '[[c]] now delegate');
    await w.t.h.settle();
    const kids = w.t.h.store.children(c.id);
    assert.equal(kids.length, 2);
    for (const tag of ['c', 'g', 'f']) {
      const models = w.script.bodies(tag).map((b) => b.model);
      assert.ok(models.length > 0 && models.every((m) => m === 'special-model'), `${tag} ran on ${JSON.stringify(models)}`);
    }
    for (const k of kids) {
      const s = await w.t.h.store.inspect(k.id);
      const d = ofType(s.events.slice(s.seedLength), 'subagent/descriptor')[0];
      assert.equal(d.model, 'special-model', 'recorded in the descriptor, for cold resume');
    }
    // The fork's first request shares the child's prefix: cache hits on the same model.
    const forkIndex = w.script.indexes('f')[0];
    const hit = w.server.requests[forkIndex].cacheHitTokens;
    assert.ok(hit > 500, `the fork's first request hit ${hit} cached tokens`);
  });

  it('the same prefix on another model misses the simulated cache, as a real provider would', async () => {
    const agent = w.root;
    const LONG = `[[root]] ${'a long shared question about prefix caches '.repeat(40)}`;
    await agent.accept(LONG);
    await agent.idle();
    const first = w.server.requests.length;
    w.t.h.setModel({ baseURL: w.server.baseURL, name: 'other-model', apiKey: 'test', maxRetries: 0 });
    await agent.accept('[[root]] again');
    await agent.idle();
    assert.equal(w.server.requests[first].body.model, 'other-model');
    assert.equal(w.server.requests[first].cacheHitTokens, 0, 'a different model shares no cache');
  });
});
