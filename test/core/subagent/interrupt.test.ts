import assert from 'node:assert/strict';
import type { Agent } from '../../../src/core/agent/agent';
import { interruptAgent } from '../../../src/core/subagent/control';
import { hold, lastToolJson, ofType, stopReasons, subagentWorld, turnsEnded, waitFor } from './helpers';

describe('subagent: interrupt_agent — who may stop whose turn', () => {
  const w = subagentWorld();

  const rt = () => w.t.h.subagents;

  /** A continuable child of `parent` parked at gate `tag` inside its first turn. */
  async function heldChild(parent: Agent, tag: string): Promise<Agent> {
    w.script.on(tag, { toolCalls: [hold(tag)] }, { text: `${tag} finished its work` });
    const { childId } = await rt().startContinuable(parent, 'spawn', { prompt: `[[${tag}]] task` });
    await w.gates.whenHeld(tag);
    return w.t.h.resident(childId)!;
  }

  it('the direct parent interrupts a running child: the turn ends interrupted, the inbox is kept', async () => {
    const c = await heldChild(w.root, 'c');
    const queued = await rt().followup(w.root.id, c.id, '[[c]] queued while running');
    assert.equal(queued.path, 'inbox');
    assert.deepEqual(await interruptAgent(rt(), w.root, c.id), { accepted: true, effect: 'interrupted' });
    await c.idle();
    assert.deepEqual(stopReasons(c.session.events), ['interrupted']);
    assert.equal(c.inboxSize, 1, 'the queued message stays');
    await w.t.h.settle();
    assert.equal(w.t.h.resident(c.id), undefined, 'interrupt is not dispose, but a paused child settles and is released');
    // The kept message is still there in the log: the next follow-up runs it first, then itself.
    w.script.on('c', { text: 'ran the queued one' }, { text: 'ran the new one' });
    await rt().followup(w.root.id, c.id, '[[c]] new');
    await w.t.h.settle();
    const evs = await w.t.h.store.readEvents(c.id);
    assert.deepEqual(
      ofType(evs, 'inbox/claimed')
        .map((e) => e.messageId)
        .slice(1, 2),
      [queued.messageId],
    );
    assert.deepEqual(stopReasons(evs), ['interrupted', 'completed', 'completed']);
    assert.deepEqual(
      ofType(evs, 'user/message')
        .slice(-2)
        .map((e) => e.text),
      ['[[c]] queued while running', '[[c]] new'],
    );
  });

  it('a live grandparent interrupts a grandchild; the child in between keeps running', async () => {
    const c = await heldChild(w.root, 'c');
    const g = await heldChild(c, 'g');
    assert.deepEqual(await interruptAgent(rt(), w.root, g.id), { accepted: true, effect: 'interrupted' });
    await g.idle();
    assert.deepEqual(stopReasons(g.session.events), ['interrupted']);
    assert.equal(c.activity, 'running');
    assert.ok(w.gates.isHeld('c'));
  });

  it('refuses a sibling, a stranger, self, and a child reaching up; the target keeps running', async () => {
    const a = await heldChild(w.root, 'a');
    const b = await heldChild(w.root, 'b');
    const stranger = await w.t.h.createSession();
    assert.deepEqual(await interruptAgent(rt(), a, b.id), { accepted: false, reason: 'not-ancestor' });
    assert.deepEqual(await interruptAgent(rt(), stranger, a.id), { accepted: false, reason: 'not-ancestor' });
    assert.deepEqual(await interruptAgent(rt(), a, a.id), { accepted: false, reason: 'self' });
    assert.deepEqual(await interruptAgent(rt(), w.root, w.root.id), { accepted: false, reason: 'self' });
    assert.deepEqual(await interruptAgent(rt(), a, w.root.id), { accepted: false, reason: 'not-ancestor' });
    assert.equal(a.activity, 'running');
    assert.equal(b.activity, 'running');
    assert.ok(w.gates.isHeld('a') && w.gates.isHeld('b'));
    assert.equal(ofType(a.session.events, 'turn/end').length + ofType(b.session.events, 'turn/end').length, 0);
  });

  it('refuses a stale handle: a released Activation, a disposed one-shot', async () => {
    w.script.on('x', { text: 'x first' }, { toolCalls: [hold('x2')] }, { text: 'x second' });
    const { childId } = await rt().startContinuable(w.root, 'spawn', { prompt: '[[x]] task' });
    const stale = w.t.h.resident(childId)!;
    await w.t.h.settle();
    assert.ok(stale.isDisposed);
    await rt().followup(w.root.id, childId, '[[x]] more');
    await w.gates.whenHeld('x2');
    const fresh = w.t.h.resident(childId)!;
    assert.notEqual(fresh, stale);
    const g = await heldChild(fresh, 'g');
    assert.deepEqual(await interruptAgent(rt(), stale, g.id), { accepted: false, reason: 'stale-handle' });
    assert.equal(g.activity, 'running');
    assert.deepEqual(await interruptAgent(rt(), fresh, g.id), { accepted: true, effect: 'interrupted' });

    const once = await rt().start(w.root, 'spawn', { prompt: '[[o]] once' });
    await once.result;
    await once.dispose();
    assert.deepEqual(await interruptAgent(rt(), once.localAgent, fresh.id), { accepted: false, reason: 'stale-handle' });
  });

  it('accepts as no-ops: an unknown id, a one-shot child (it keeps running), a finished child', async () => {
    assert.deepEqual(await interruptAgent(rt(), w.root, 'no-such-agent'), { accepted: true, effect: 'noop', reason: 'unknown' });

    w.script.on('o', { toolCalls: [hold('o')] }, { text: 'o done' });
    const once = await rt().start(w.root, 'spawn', { prompt: '[[o]] once' });
    await w.gates.whenHeld('o');
    assert.deepEqual(await interruptAgent(rt(), w.root, once.id), { accepted: true, effect: 'noop', reason: 'one-shot' });
    assert.equal(once.localAgent.activity, 'running');
    w.gates.release('o');
    assert.equal((await once.result).stopReason, 'completed');
    await once.dispose();
    assert.deepEqual(await interruptAgent(rt(), w.root, once.id), { accepted: true, effect: 'noop', reason: 'one-shot' });

    w.script.on('f', { text: 'f done' });
    const { childId } = await rt().startContinuable(w.root, 'spawn', { prompt: '[[f]] quick' });
    const f = w.t.h.resident(childId)!;
    await turnsEnded(f, 1);
    await f.idle(); // the turn/end is in the log; let its loop finish too
    assert.deepEqual(await interruptAgent(rt(), w.root, childId), { accepted: true, effect: 'noop', reason: 'not-running' });
    await w.t.h.settle();
    assert.deepEqual(await interruptAgent(rt(), w.root, childId), { accepted: true, effect: 'noop', reason: 'not-running' });
    assert.deepEqual(stopReasons(await w.t.h.store.readEvents(childId)), ['completed']);
  });

  it('through the model: interrupt_agent stops a running child and refuses self', async () => {
    let childId = '';
    w.script.on(
      'root',
      { toolCalls: [{ name: 'subagent', arguments: { prompt: '[[c]] long task', mode: 'continuable' } }] },
      (body) => {
        childId = lastToolJson<{ childId: string }>(body).childId;
        return { toolCalls: [hold('root')] };
      },
      () => ({
        toolCalls: [
          { name: 'interrupt_agent', arguments: { agentId: childId } },
          { name: 'interrupt_agent', arguments: { agentId: w.root.id } },
        ],
      }),
      { text: 'stopped it' },
    );
    w.script.on('c', { toolCalls: [hold('c')] });
    await w.root.accept('[[root]] start and stop a child');
    await w.gates.whenHeld('root');
    await w.gates.whenHeld('c');
    w.gates.release('root');
    await turnsEnded(w.root, 1);
    const [stop, self] = ofType(w.root.session.events, 'tool/result').filter((e) => e.name === 'interrupt_agent');
    assert.ok(!stop.isError, stop.content);
    assert.deepEqual(JSON.parse(stop.content), { agentId: childId, effect: 'interrupted' });
    assert.ok(self.isError);
    assert.match(self.content, /refused: you cannot interrupt yourself/);
    await waitFor(() => stopReasons(w.t.h.resident(childId)?.session.events ?? []).length > 0 || !w.t.h.resident(childId), 'the child turn to end');
    await w.t.h.settle();
    assert.deepEqual(stopReasons(await w.t.h.store.readEvents(childId)), ['interrupted']);
  });
});
