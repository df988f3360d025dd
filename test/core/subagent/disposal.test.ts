import assert from 'node:assert/strict';
import type { Agent } from '../../../src/core/agent/agent';
import type { SessionEvent } from '../../../src/core/session/events';
import { ownScopeOf } from '../../../src/core/subagent/composition';
import { onEvents } from '../../support/changes';
import { delivered, hold, ofType, stopReasons, subagentWorld } from './helpers';

const idle = { activations: 0, oneShots: 0, timers: 0, background: 0 };

/** Listener counts of an agent and its writer (internals: the leak this spec is about has no public face). */
function listeners(agent: Agent): { writer: number; turn: number; idle: number } {
  const a = agent as unknown as { turnListeners: Set<unknown>; idleListeners: Set<unknown> };
  const w = (agent as unknown as { cfg: { writer: { listeners: Set<unknown> } } }).cfg.writer;
  return { writer: w.listeners.size, turn: a.turnListeners.size, idle: a.idleListeners.size };
}

describe('subagent: disposal is child-first and leaves nothing behind', () => {
  const w = subagentWorld();
  let seen: { session: string; event: SessionEvent }[];
  beforeEach(() => {
    seen = [];
    onEvents(w.t.h, (session, event) => seen.push({ session, event }));
  });

  it('disposing a one-shot disposes its live continuable grandchild first, and nobody is notified', async () => {
    w.script.on('o', { toolCalls: [hold('o')] });
    w.script.on('g', { toolCalls: [hold('g')] });
    const once = await w.t.h.subagents.start(w.root, 'spawn', { prompt: '[[o]] task' });
    await w.gates.whenHeld('o');
    const { childId: gId } = await w.t.h.subagents.startContinuable(once.localAgent, 'spawn', { prompt: '[[g]] leaf' });
    await w.gates.whenHeld('g');
    const g = w.t.h.resident(gId)!;
    const order: string[] = [];
    for (const a of [g, once.localAgent]) {
      const dispose = a.dispose.bind(a);
      a.dispose = () => {
        order.push(a.id);
        return dispose();
      };
    }
    assert.equal(w.t.h.subagents.stats().activations, 1);

    await once.dispose();
    assert.deepEqual(order, [gId, once.id], 'the grandchild went first');
    assert.equal((await once.result).stopReason, 'cancelled');
    assert.deepEqual(stopReasons(await w.t.h.store.readEvents(gId)), ['cancelled']);
    assert.deepEqual(stopReasons(await w.t.h.store.readEvents(once.id)), ['cancelled']);
    assert.equal(delivered(await w.t.h.store.readEvents(once.id), 'subagent-settled').length, 0);
    assert.equal(delivered(w.root.session.events, 'subagent-settled').length, 0);
    assert.deepEqual(w.t.h.subagents.stats(), idle);
    assert.equal(w.t.h.residentCount, 1);
    assert.equal(w.t.h.resident(gId), undefined);
    await w.t.h.settle();
    assert.equal(delivered(w.root.session.events, 'subagent-settled').length, 0, 'not later either');
    assert.equal(w.root.session.length, 0);
  });

  it('20 one-shots started and disposed, 5 Activations released: nothing resident, no listeners, no scopes', async () => {
    const before = { stats: w.t.h.subagents.stats(), resident: w.t.h.residentCount, tools: w.t.h.tools.view({}).map((x) => x.name) };
    assert.deepEqual(before.stats, idle);
    const runs = await Promise.all(
      Array.from({ length: 20 }, (_, i) => w.t.h.subagents.start(w.root, 'spawn', { prompt: `[[o${i}]] task`, outputSchema: { type: 'object' } })),
    );
    assert.equal(w.t.h.subagents.stats().oneShots, 20);
    const results = await Promise.all(runs.map((r) => r.result));
    assert.ok(results.every((r) => r.stopReason === 'completed'));
    await Promise.all(runs.map((r) => r.dispose()));
    const starts = await Promise.all(Array.from({ length: 5 }, (_, i) => w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: `[[c${i}]] task` })));
    const activations = starts.map((s) => w.t.h.resident(s.childId)!);
    await w.t.h.settle();

    assert.deepEqual(w.t.h.subagents.stats(), idle);
    assert.equal(w.t.h.residentCount, before.resident);
    for (const a of [...runs.map((r) => r.localAgent), ...activations]) {
      assert.ok(a.isDisposed);
      assert.equal(w.t.h.resident(a.id), undefined);
      assert.deepEqual(listeners(a), { writer: 0, turn: 0, idle: 0 }, `listeners left on ${a.id}`);
      assert.deepEqual(
        w.t.h.tools.view({ own: ownScopeOf(a.id) }).map((x) => x.name),
        before.tools,
        `scope of ${a.id} left behind`,
      );
    }
    // A write through a disposed child's writer still reaches the change stream, once: every
    // write to a log is reported, resident or not (decision 0054) — and nothing else was left on it.
    const stale = runs[0].localAgent;
    const count = seen.length;
    await stale.append({ type: 'goal/change', goal: null });
    assert.deepEqual(
      seen.slice(count).map((s) => [s.session, s.event.type]),
      [[stale.id, 'goal/change']],
    );
    // Each Activation still told the root, once.
    for (const s of starts) assert.equal(delivered(w.root.session.events, 'subagent-settled', s.childId).length, 1);
  });

  it('a one-shot whose model fails resolves its result with stopReason error (never rejects)', async () => {
    w.script.on('e1', { fault: { kind: 'status', status: 500, message: 'model down' } });
    w.script.on('e2', { text: 'partial answ', chunkSize: 4, fault: { kind: 'disconnect', afterChunks: 2 } });
    for (const tag of ['e1', 'e2']) {
      const run = await w.t.h.subagents.start(w.root, 'spawn', { prompt: `[[${tag}]] task` });
      const r = await run.result;
      assert.equal(r.stopReason, 'error');
      assert.ok(r.error && r.error.length > 0);
      assert.equal(r.childId, run.id);
      await run.dispose();
    }
    assert.deepEqual(w.t.h.subagents.stats(), idle);
    assert.equal(ofType(w.root.session.events, 'turn/start').length, 0);
  });

  it('through the tool: a failed foreground child is an error result; a background one reports its failure as a job result', async () => {
    w.script.on(
      'root',
      {
        toolCalls: [
          { name: 'subagent', arguments: { prompt: '[[w]] wait' } },
          { name: 'subagent', arguments: { prompt: '[[b]] bg', mode: 'background' } },
        ],
      },
      { text: 'root saw' },
    );
    w.script.on('w', { fault: { kind: 'status', status: 500 } });
    w.script.on('b', { fault: { kind: 'status', status: 503 } });
    await w.root.accept('[[root]] go');
    await w.t.h.settle();
    const [wait, bg] = ofType(w.root.session.events, 'tool/result');
    assert.ok(wait.isError);
    assert.equal(JSON.parse(wait.content).stopReason, 'error');
    assert.ok(!bg.isError);
    // Seed 000 §二: a background one-shot's answer is an ordinary job result, not a settlement
    // notice (that one belongs to an Activation ending, and a one-shot has none).
    assert.equal(delivered(w.root.session.events, 'subagent-settled').length, 0, 'no settlement notice for a one-shot');
    const [n] = delivered(w.root.session.events, 'subagent-result') as { text: string; source: { stopReason?: string } }[];
    assert.equal(n.source.stopReason, 'error');
    assert.match(n.text, /finished: error/);
    assert.equal(JSON.parse(n.text.slice(n.text.indexOf('\n') + 1)).stopReason, 'error');
    assert.deepEqual(w.t.h.subagents.stats(), idle);
    assert.equal(w.t.h.residentCount, 1);
  });
});
