import assert from 'node:assert/strict';
import type { SessionEvent } from '../../../src/core/session/events';
import { spawnProvider } from '../../../src/core/subagent/spawn-provider';
import type { SubagentProvider } from '../../../src/core/subagent/types';
import { contents, delivered, hold, ofType, subagentWorld, turnsEnded, waitFor } from './helpers';

/** The user/message texts of each turn, in order. */
function turns(evs: readonly SessionEvent[]): string[][] {
  const out: string[][] = [];
  let cur: string[] | null = null;
  for (const e of evs) {
    if (e.type === 'turn/start') cur = [];
    else if (e.type === 'user/message' && cur) cur.push(e.text);
    else if (e.type === 'turn/end' && cur) {
      out.push(cur);
      cur = null;
    }
  }
  return out;
}

describe('subagent: follow-ups to a running child queue as later FIFO turns', () => {
  const w = subagentWorld({}, { perTest: true });
  let prepared: number;

  async function setup(releaseDelayMs: number): Promise<void> {
    await w.setup({ releaseDelayMs });
    prepared = 0;
    const counting: SubagentProvider = { ...spawnProvider, prepare: (p) => (prepared++, spawnProvider.prepare(p)) };
    w.t.h.subagents.registerProvider(counting);
  }

  it('queues follow-ups in the inbox while the child runs; each runs as its own later turn, in order', async () => {
    await setup(5);
    w.script.on('c', { toolCalls: [hold('c')] }, { text: 'task done' }, { text: 'f1 done' }, { text: 'f2 done' });
    const start = await w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: '[[c]] task' });
    await w.gates.whenHeld('c');
    const child = w.t.h.resident(start.childId)!;
    assert.equal(child.activity, 'running');
    const sessions = w.t.h.store.list().length;

    const f1 = await w.t.h.subagents.followup(w.root.id, start.childId, '[[c]] f1');
    const f2 = await w.t.h.subagents.followup(w.root.id, start.childId, '[[c]] f2');
    assert.equal(f1.path, 'inbox');
    assert.equal(f2.path, 'inbox');
    assert.equal(child.inboxSize, 2, 'both wait in the inbox');
    assert.equal(ofType(child.session.events, 'turn/start').length, 1, 'no new turn while one runs');

    w.gates.release('c');
    await w.t.h.settle();
    const evs = await w.t.h.store.readEvents(start.childId);
    assert.deepEqual(turns(evs), [['[[c]] task'], ['[[c]] f1'], ['[[c]] f2']]);
    assert.deepEqual(
      ofType(evs, 'inbox/claimed').map((e) => e.messageId),
      [start.messageId, f1.messageId, f2.messageId],
    );
    assert.deepEqual(
      ofType(evs, 'turn/end').map((e) => e.stopReason),
      ['completed', 'completed', 'completed'],
    );

    // The running turn never saw them: its second request (after the gate) holds neither.
    const bodies = w.script.bodies('c');
    assert.equal(bodies.length, 4);
    assert.ok(!contents(bodies[1]).some((c) => c.includes('[[c]] f1') || c.includes('[[c]] f2')));
    assert.equal(contents(bodies[2]).at(-1), '[[c]] f1');
    assert.ok(!contents(bodies[2]).includes('[[c]] f2'));
    assert.equal(contents(bodies[3]).at(-1), '[[c]] f2');

    assert.equal(prepared, 1, 'the provider was called once, at start');
    assert.equal(w.t.h.store.list().length, sessions, 'no new session for a follow-up');
    assert.equal(delivered(w.root.session.events, 'subagent-settled', start.childId).length, 1, 'one Activation, one notice');
  });

  it('the parent model can queue several follow-ups in one step; they run in call order', async () => {
    await setup(5);
    let childId = '';
    w.script.on('c', { toolCalls: [hold('c')] }, { text: 'task done' });
    w.script.on(
      'root',
      { toolCalls: [{ name: 'subagent', arguments: { prompt: '[[c]] task', mode: 'continuable' } }] },
      (body) => {
        childId = JSON.parse(String(body.messages.at(-1)!.content)).childId;
        return {
          toolCalls: [
            { name: 'send_message', arguments: { agentId: childId, message: '[[c]] a' } },
            { name: 'send_message', arguments: { agentId: childId, message: '[[c]] b' } },
          ],
        };
      },
      { toolCalls: [hold('root')] },
      { text: 'root done' },
    );
    await w.root.accept('[[root]] go');
    await w.gates.whenHeld('root');
    const sends = ofType(w.root.session.events, 'tool/result').filter((e) => e.name === 'send_message');
    assert.deepEqual(
      sends.map((e) => JSON.parse(e.content).delivered),
      ['inbox', 'inbox'],
    );
    w.gates.release('c');
    w.gates.release('root');
    await w.t.h.settle();
    const evs = await w.t.h.store.readEvents(childId);
    assert.deepEqual(turns(evs), [['[[c]] task'], ['[[c]] a'], ['[[c]] b']]);
    assert.equal(prepared, 1);
  });

  it('a child that is idle but not yet released is woken (path wake) and its release timer is disarmed', async () => {
    await setup(60_000);
    w.script.on('c', { text: 'first' }, { toolCalls: [hold('c2')] }, { text: 'second' });
    const start = await w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: '[[c]] task' });
    const child = w.t.h.resident(start.childId)!;
    await turnsEnded(child, 1);
    await waitFor(() => w.t.h.subagents.stats().timers === 1, 'the release timer');
    const r = await w.t.h.subagents.followup(w.root.id, start.childId, '[[c]] more');
    assert.equal(r.path, 'wake');
    assert.equal(w.t.h.resident(start.childId), child, 'the same Agent, not a resume');
    await w.gates.whenHeld('c2');
    assert.equal(w.t.h.subagents.stats().timers, 0, 'the release timer was disarmed');
    w.gates.release('c2');
    await turnsEnded(child, 2);
    assert.deepEqual(turns(child.session.events), [['[[c]] task'], ['[[c]] more']]);
    assert.equal(prepared, 1);
    assert.equal(delivered(w.root.session.events, 'subagent-settled').length, 0, 'not released, so no notice yet');
  });
});
