import assert from 'node:assert/strict';
import type { Agent } from '../../../src/core/agent/agent';
import type { SessionEvent } from '../../../src/core/session/events';
import { spawnProvider } from '../../../src/core/subagent/spawn-provider';
import type { SubagentProvider } from '../../../src/core/subagent/types';
import { ModelServer } from '../../support/model-server';
import { makeHarness, type TestHarness } from '../../support/harness';
import { contents, delivered, Gates, hold, ofType, Script, turnsEnded, waitFor } from './helpers';

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
  let server: ModelServer;
  let t: TestHarness;
  let script: Script;
  let gates: Gates;
  let root: Agent;
  let prepared: number;
  before(async () => (server = await ModelServer.start()));
  after(() => server.stop());
  afterEach(async () => {
    gates.releaseAll();
    await t.cleanup();
  });

  async function setup(releaseDelayMs: number): Promise<void> {
    server.reset();
    script = new Script(server);
    t = await makeHarness(server, { releaseDelayMs });
    gates = new Gates().install(t.h);
    root = await t.h.createSession();
    prepared = 0;
    const counting: SubagentProvider = { ...spawnProvider, prepare: (p) => (prepared++, spawnProvider.prepare(p)) };
    (t.h.subagents.providers as Map<string, SubagentProvider>).set('spawn', counting);
  }

  it('queues follow-ups in the inbox while the child runs; each runs as its own later turn, in order', async () => {
    await setup(5);
    script.on('c', { toolCalls: [hold('c')] }, { text: 'task done' }, { text: 'f1 done' }, { text: 'f2 done' });
    const start = await t.h.subagents.startContinuable(root, 'spawn', { prompt: '[[c]] task' });
    await gates.whenHeld('c');
    const child = t.h.resident(start.childId)!;
    assert.equal(child.status, 'running');
    const sessions = t.h.store.list().length;

    const f1 = await t.h.subagents.followup(root.id, start.childId, '[[c]] f1');
    const f2 = await t.h.subagents.followup(root.id, start.childId, '[[c]] f2');
    assert.equal(f1.path, 'inbox');
    assert.equal(f2.path, 'inbox');
    assert.equal(child.inboxSize, 2, 'both wait in the inbox');
    assert.equal(ofType(child.session.events, 'turn/start').length, 1, 'no new turn while one runs');

    gates.release('c');
    await t.h.settle();
    const evs = await t.h.store.readEvents(start.childId);
    assert.deepEqual(turns(evs), [['[[c]] task'], ['[[c]] f1'], ['[[c]] f2']]);
    assert.deepEqual(
      ofType(evs, 'inbox/claimed').map((e) => e.messageId),
      [start.messageId, f1.messageId, f2.messageId],
    );
    assert.deepEqual(ofType(evs, 'turn/end').map((e) => e.stopReason), ['completed', 'completed', 'completed']);

    // The running turn never saw them: its second request (after the gate) holds neither.
    const bodies = script.bodies('c');
    assert.equal(bodies.length, 4);
    assert.ok(!contents(bodies[1]).some((c) => c.includes('[[c]] f1') || c.includes('[[c]] f2')));
    assert.equal(contents(bodies[2]).at(-1), '[[c]] f1');
    assert.ok(!contents(bodies[2]).includes('[[c]] f2'));
    assert.equal(contents(bodies[3]).at(-1), '[[c]] f2');

    assert.equal(prepared, 1, 'the provider was called once, at start');
    assert.equal(t.h.store.list().length, sessions, 'no new session for a follow-up');
    assert.equal(delivered(root.session.events, 'subagent-settled', start.childId).length, 1, 'one Activation, one notice');
  });

  it('the parent model can queue several follow-ups in one step; they run in call order', async () => {
    await setup(5);
    let childId = '';
    script.on('c', { toolCalls: [hold('c')] }, { text: 'task done' });
    script.on(
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
    await root.accept('[[root]] go');
    await gates.whenHeld('root');
    const sends = ofType(root.session.events, 'tool/result').filter((e) => e.name === 'send_message');
    assert.deepEqual(sends.map((e) => JSON.parse(e.content).delivered), ['inbox', 'inbox']);
    gates.release('c');
    gates.release('root');
    await t.h.settle();
    const evs = await t.h.store.readEvents(childId);
    assert.deepEqual(turns(evs), [['[[c]] task'], ['[[c]] a'], ['[[c]] b']]);
    assert.equal(prepared, 1);
  });

  it('a child that is idle but not yet released is woken (path wake) and its release timer is disarmed', async () => {
    await setup(60_000);
    script.on('c', { text: 'first' }, { toolCalls: [hold('c2')] }, { text: 'second' });
    const start = await t.h.subagents.startContinuable(root, 'spawn', { prompt: '[[c]] task' });
    const child = t.h.resident(start.childId)!;
    await turnsEnded(child, 1);
    await waitFor(() => t.h.subagents.residency.stats().timers === 1, 'the release timer');
    const r = await t.h.subagents.followup(root.id, start.childId, '[[c]] more');
    assert.equal(r.path, 'wake');
    assert.equal(t.h.resident(start.childId), child, 'the same Agent, not a resume');
    await gates.whenHeld('c2');
    assert.equal(t.h.subagents.residency.stats().timers, 0, 'the release timer was disarmed');
    gates.release('c2');
    await turnsEnded(child, 2);
    assert.deepEqual(turns(child.session.events), [['[[c]] task'], ['[[c]] more']]);
    assert.equal(prepared, 1);
    assert.equal(delivered(root.session.events, 'subagent-settled').length, 0, 'not released, so no notice yet');
  });
});
