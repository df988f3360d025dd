import assert from 'node:assert/strict';
import { hold, ofType, subagentWorld, waitFor } from './helpers';

// A one-shot child answers once. A grandchild's settlement notice or a wakeup report that
// reaches it while it is still resident is kept in its log as history, never run as a turn.
describe('subagent: one-shot means one turn', () => {
  const w = subagentWorld();

  it("a continuable grandchild's settlement notice reaches a running one-shot as history; no second turn", async () => {
    w.script.on('root', { toolCalls: [{ name: 'subagent', arguments: { prompt: '[[c]] coordinate', label: 'c' } }] }, { text: 'root done' });
    w.script.on(
      'c',
      { toolCalls: [{ name: 'subagent', arguments: { prompt: '[[g]] quick job', label: 'g', mode: 'continuable' } }] },
      { toolCalls: [hold('c-busy')] },
      { text: 'c done' },
    );
    w.script.on('g', { text: 'g done' });
    await w.root.accept('[[root]] go');
    await w.gates.whenHeld('c-busy');
    const [c] = w.t.h.store.children(w.root.id);
    // Wait until g has settled and was released: its notice has gone to c, still in its one turn.
    await waitFor(() => w.t.h.store.children(c.id).length === 1, 'g to exist');
    const g = w.t.h.store.children(c.id)[0];
    await waitFor(() => w.t.h.resident(g.id) === undefined && !w.t.h.subagents.isActive(g.id), 'g to settle and be released');
    await new Promise((r) => setTimeout(r, 50));
    w.gates.release('c-busy');
    await w.t.h.settle();

    const cs = await w.t.h.store.inspect(c.id);
    assert.equal(ofType(cs.events, 'turn/start').length, 1, 'the one-shot child ran exactly one turn');
    assert.deepEqual(
      ofType(cs.events, 'turn/end').map((e) => e.stopReason),
      ['completed'],
    );
    const notice = ofType(cs.events, 'user/message').find((e) => e.source.kind === 'subagent-settled');
    assert.ok(notice, "g's settlement notice is kept in c's log");
    assert.ok(!ofType(cs.events, 'inbox/accepted').some((e) => e.source.kind === 'subagent-settled'), 'it never entered the inbox (nothing to run)');
    assert.equal(w.script.bodies('c').length, 3, 'c asked the model three times, all in its one turn');
    // The root got c's one answer.
    const result = ofType(w.root.session.events, 'tool/result').find((e) => e.name === 'subagent');
    assert.match(result?.content ?? '', /c done/);
  });

  it('a report that reaches a finished, still-resident one-shot is recorded, not run', async () => {
    w.script.on(
      'root',
      { toolCalls: [{ name: 'subagent', arguments: { prompt: '[[c]] work', label: 'c', mode: 'background' } }] },
      { text: 'root waits' },
      { text: 'root saw the result' },
    );
    w.script.on('c', { text: 'c done' });
    await w.root.accept('[[root]] go');
    await w.t.h.settle();
    const [c] = w.t.h.store.children(w.root.id);
    // Deliver straight to the child through the runtime (as a grandchild's wakeup report would).
    await w.t.h.subagents.deliver(c.id, '[report from subagent x]\nlate news', { kind: 'subagent-report', fromSession: `${c.id}.x`, mode: 'wakeup' });
    await w.t.h.settle();
    const cs = await w.t.h.store.inspect(c.id);
    assert.equal(ofType(cs.events, 'turn/start').length, 1);
    assert.ok(
      ofType(cs.events, 'user/message').some((e) => e.text.includes('late news')),
      'kept as history',
    );
  });
});
