import assert from 'node:assert/strict';
import type { Agent } from '../../../src/core/agent/agent';
import { Harness } from '../../../src/core/harness';
import { listAgents } from '../../../src/core/subagent/control';
import { hold, ofType, stopReasons, subagentWorld, waitFor } from './helpers';

// "Interrupt" on a node stops that agent's turn and the turns of all its running descendants;
// inboxes are kept, nothing resurrects on its own; siblings and ancestors are untouched.
describe('subagent: stop a subtree', () => {
  const w = subagentWorld();
  const evs = async (id: string) => w.t.h.resident(id)?.session.events ?? (await w.t.h.store.inspect(id)).events;

  it('stops a child and its grandchild; the sibling runs on; the root is not interrupted', async () => {
    w.script.on(
      'root',
      {
        toolCalls: [
          { name: 'subagent', arguments: { prompt: '[[c]] middle', label: 'c', mode: 'continuable' } },
          { name: 'subagent', arguments: { prompt: '[[s]] sibling', label: 's', mode: 'continuable' } },
        ],
      },
      { text: 'root started both' },
    );
    w.script.on('c', { toolCalls: [{ name: 'subagent', arguments: { prompt: '[[g]] deep', label: 'g' } }] });
    w.script.on('g', { toolCalls: [hold('g')] });
    w.script.on('s', { toolCalls: [hold('s')] }, { text: 's finished' });
    await w.root.accept('[[root]] go');
    await w.gates.whenHeld('g');
    await w.gates.whenHeld('s');
    await w.root.idle();
    const ids = Object.fromEntries(w.t.h.store.children(w.root.id).map((h) => [h.title, h.id]));
    const g = w.t.h.store.children(ids.c)[0].id;

    const stopped = await w.t.h.interruptSubtree(ids.c);
    assert.deepEqual(new Set(stopped), new Set([ids.c, g]));
    assert.deepEqual(stopReasons(await evs(ids.c)), ['interrupted']);
    assert.deepEqual(stopReasons(await evs(g)), ['interrupted']);
    // list_agents says so too, once the child is released: interrupted, never settled.
    await waitFor(() => !w.t.h.subagents.isActive(ids.c), 'c to be released');
    const listed = await listAgents(w.t.h.subagents, w.root.id);
    assert.equal(listed.find((a) => a.id === ids.c)?.status, 'interrupted');
    assert.equal(w.t.h.resident(ids.s)?.activity, 'running', 'the sibling runs on');
    w.gates.release('s');
    await w.t.h.settle();
    assert.deepEqual(stopReasons(await evs(ids.s)), ['completed']);
    assert.ok(!stopReasons(w.root.session.events).includes('interrupted'), 'the root was not interrupted');
  });

  it('stopping the root stops everything under it; the notices wait in its inbox and nothing runs by itself', async () => {
    w.script.on('root', { toolCalls: [{ name: 'subagent', arguments: { prompt: '[[c]] bg', label: 'c', mode: 'continuable' } }, hold('root')] });
    w.script.on('c', { toolCalls: [hold('c')] });
    await w.root.accept('[[root]] go');
    await w.gates.whenHeld('root');
    await w.gates.whenHeld('c');
    const [c] = w.t.h.store.children(w.root.id);
    const stopped = await w.t.h.interruptSubtree(w.root.id);
    assert.deepEqual(stopped, [w.root.id, c.id]);
    await w.t.h.settle();
    const requests = w.server.requests.length;
    // The child's settlement notice reached the root's inbox but did not wake it.
    await waitFor(() => w.root.inboxSize === 1, "the child's notice to wait in the root's inbox");
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(w.root.activity, 'idle');
    assert.equal(w.server.requests.length, requests, 'no model request after the stop');
    assert.deepEqual(stopReasons(w.root.session.events), ['interrupted']);
    assert.deepEqual(stopReasons(await evs(c.id)), ['interrupted']);
    // The human decides: a new message wakes the root; the waiting notice goes first (FIFO).
    w.script.on('root', { text: 'after the notice' }, { text: 'after the user' });
    await w.root.accept('[[root]] carry on');
    await w.t.h.settle();
    const texts = ofType(w.root.session.events, 'user/message').map((e) => e.source.kind);
    assert.deepEqual(texts.slice(-2), ['subagent-settled', 'user']);
  });

  /** The root starts a continuable child held at its gate, and its own turn ends: it waits on the child. */
  async function rootIdleOverHeldChild(): Promise<void> {
    w.script.on('root', { toolCalls: [{ name: 'subagent', arguments: { prompt: '[[c]] bg', label: 'c', mode: 'continuable' } }] }, { text: 'started it' });
    w.script.on('c', { toolCalls: [hold('c')] });
    await w.root.accept('[[root]] go');
    await w.gates.whenHeld('c');
    await w.root.idle();
  }

  it('stopping a root whose turn ended while its child runs: the child stops, its notice waits, no model call follows (issue 21.2)', async () => {
    await rootIdleOverHeldChild();
    assert.deepEqual(stopReasons(w.root.session.events), ['completed'], "the root's own turn ended; it waits on its child");
    const [c] = w.t.h.store.children(w.root.id);
    const requests = w.server.requests.length;
    const stopped = await w.t.h.interruptSubtree(w.root.id);
    assert.deepEqual(stopped, [c.id]);
    await w.t.h.settle();
    await waitFor(() => w.root.inboxSize === 1, "the child's notice to wait in the root's inbox");
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(w.root.activity, 'idle');
    assert.equal(w.server.requests.length, requests, 'no model request after the stop');
    assert.deepEqual(stopReasons(w.root.session.events), ['completed'], 'no turn started by the notice');
    // The human decides: the next message runs, the notice first (FIFO).
    w.script.on('root', { text: 'after the notice' }, { text: 'after the user' });
    await w.root.accept('[[root]] carry on');
    await w.t.h.settle();
    const kinds = ofType(w.root.session.events, 'user/message').map((e) => e.source.kind);
    assert.deepEqual(kinds.slice(-2), ['subagent-settled', 'user']);
  });

  /**
   * The root's notice from its stopped child waits in its inbox; the window reloads: the root is
   * opened in a new harness, nothing has run by itself, and `then` goes on with it there.
   */
  async function afterRestart(why: string, then: (back: Agent, h2: Harness) => Promise<void>): Promise<void> {
    await waitFor(() => w.root.inboxSize === 1, "the child's notice to wait in the root's inbox");
    const rootId = w.root.id;
    await w.t.h.close();
    const h2 = await Harness.open({ ...w.t.h.config });
    try {
      const requests = w.server.requests.length;
      const back = await h2.openSession(rootId);
      await h2.settle();
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(w.server.requests.length, requests, why);
      assert.equal(back.isWaiting, true, 'the notice waits for the human');
      await then(back, h2);
    } finally {
      await h2.close();
    }
  }

  it('what that Stop kept waits across a restart too: the reopened root runs nothing by itself (decision 0011, amended in s49)', async () => {
    await rootIdleOverHeldChild();
    await w.t.h.interruptSubtree(w.root.id);
    await w.t.h.settle();
    await afterRestart('no model request after the reopen: the Stop still holds', async (back, h2) => {
      assert.deepEqual(stopReasons(back.session.events), ['completed'], 'no turn started by the notice');
      // The human decides: the next message runs, the notice first (FIFO).
      w.script.on('root', { text: 'after the notice' }, { text: 'after the user' });
      await back.accept('[[root]] carry on');
      await h2.settle();
      assert.deepEqual(stopReasons(back.session.events), ['completed', 'completed', 'completed']);
      const kinds = ofType(back.session.events, 'user/message').map((e) => e.source.kind);
      assert.deepEqual(kinds.slice(-2), ['subagent-settled', 'user']);
    });
  });

  it("a stopped root's own turn and its child's notice that came after: still waiting after a restart", async () => {
    w.script.on('root', { toolCalls: [{ name: 'subagent', arguments: { prompt: '[[c]] bg', label: 'c', mode: 'continuable' } }, hold('root')] });
    w.script.on('c', { toolCalls: [hold('c')] });
    await w.root.accept('[[root]] go');
    await w.gates.whenHeld('root');
    await w.gates.whenHeld('c');
    await w.t.h.interruptSubtree(w.root.id);
    await w.t.h.settle();
    await afterRestart("the child's notice, accepted after the Stop ended the turn, did not wake the root", async (back) => {
      assert.deepEqual(stopReasons(back.session.events), ['interrupted']);
    });
  });

  it('refuses an unknown session with a clear error', async () => {
    await assert.rejects(w.t.h.interruptSubtree('s-nope'), /No session s-nope/);
  });
});
