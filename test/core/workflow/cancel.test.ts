import assert from 'node:assert/strict';
import { Harness } from '../../../src/core/harness';
import type { SessionEvent } from '../../../src/core/session/events';
import { Isolate } from '../../../src/core/workflow/isolate';
import { until } from '../../support/harness';
import type { ChatBody, Reply } from '../../support/model-server';
import { dataOf, promptOf, workflowWorld } from './helpers';

const isChild = (b: ChatBody) => b.messages.some((m) => m.role === 'user' && String(m.content ?? '').startsWith('[Arbor runtime] You are a subagent'));
const FANOUT = 'phase("fan out"); return await parallel([1,2,3,4,5,6].map((i) => () => agent("slow " + i, { label: "s" + i })));';

/** The root calls `workflow` once (children are slow), then says done. */
function scripted(body: ChatBody): Reply {
  if (isChild(body)) return { text: `did ${promptOf(body)}`, delayMs: 1500 };
  if (body.messages[body.messages.length - 1].role === 'tool') return { text: 'done' };
  return { toolCalls: [{ name: 'workflow', arguments: { script: FANOUT, meta: { name: 'fan', description: 'six slow children' }, concurrency: 3 } }] };
}

describe('workflow cancellation: interrupt, Cancel workflow, harness close — nothing left behind', () => {
  const x = workflowWorld();
  let baseline: { resident: number };
  beforeEach(() => {
    x.replies((_p, body) => scripted(body));
    baseline = { resident: x.w.t.h.residentCount };
  });

  async function startAndWait(): Promise<string> {
    await x.root.accept('fan out please', { kind: 'user' });
    await until(() => x.events('workflow/agent').length >= 3, 10_000);
    return (x.events('workflow/start')[0] as unknown as { runId: string }).runId;
  }

  /** Every child the run's end counts has its `started` and its `done` (cancelled by the end), both before the end. */
  function assertPaired(events: readonly SessionEvent[], stop: string): void {
    const end = events.find((e) => e.type === 'workflow/end')!;
    const agents = events.filter((e) => e.type === 'workflow/agent');
    assert.ok(
      agents.every((e) => e.seq < end.seq),
      'every agent event before the end',
    );
    const started = agents.map(dataOf).filter((d) => d.status === 'started');
    const done = agents.map(dataOf).filter((d) => d.status === 'done');
    assert.equal(started.length, dataOf(end).agents);
    assert.deepEqual(done.map((d) => d.childId).sort(), started.map((d) => d.childId).sort());
    assert.ok(
      done.every((d) => d.stopReason === stop || d.stopReason === 'completed'),
      done.map((d) => String(d.stopReason)).join(' '),
    );
    assert.ok(
      done.some((d) => d.stopReason === stop),
      `some agent was cut short (${stop})`,
    );
  }

  async function assertClean(): Promise<void> {
    // A run leaves the engine's table once its outcome is out, just after `workflow/end` is written.
    await until(() => x.engine.active().length === 0, 5_000).catch(() => undefined);
    assert.deepEqual(x.engine.active(), [], 'no run is going');
    const { spares, ...left } = x.engine.stats();
    assert.deepEqual(left, { runs: 0, processes: 0, timers: 0 }, 'no run, script process, wall clock or watchdog is left');
    assert.ok(spares <= 1, `at most one spare script process is kept for the next run, not ${spares}`);
    assert.deepEqual(x.w.t.h.subagents.stats(), { activations: 0, oneShots: 0, timers: 0, background: 0 }, 'no child is resident');
    assert.equal(x.w.t.h.residentCount, baseline.resident, 'only the root is resident');
  }

  it("the parent's interrupt ends the run as interrupted and cancels its children", async () => {
    await startAndWait();
    await x.w.t.h.interruptSubtree(x.root.id);
    await until(() => x.events('workflow/end').length === 1, 10_000);
    await x.w.t.h.settle();
    const end = dataOf(x.events('workflow/end')[0]);
    assert.equal(end.status, 'interrupted');
    // Three held the run's slots and ran; the others were created at their agent() call and
    // waited, queued, at the run's gate (decision 0102; one still being created when the stop
    // came is never published): every child it made is counted, each with both events.
    assert.ok(Number(end.agents) >= 3, `${String(end.agents)} agents`);
    assert.equal(end.agents, x.w.t.h.store.children(x.root.id).length);
    const firstDone = x.events('workflow/agent').findIndex((e) => dataOf(e).status === 'done');
    assert.equal(firstDone, 3, 'three started before any ended: the queued three only began as the stop ended them');
    // The stop reached the children too (a subtree stop): they read interrupted.
    assertPaired(x.root.session.events, 'interrupted');
    await assertClean();
    for (const c of x.w.t.h.store.children(x.root.id)) {
      const s = await x.w.t.h.store.inspect(c.id);
      assert.equal(s.openTurnId, null, `${c.id}'s turn ended`);
    }
  });

  it('a human "Cancel workflow" ends the run as cancelled; the parent’s turn goes on with the failure', async () => {
    const runId = await startAndWait();
    assert.equal(await x.engine.cancel(runId), true);
    await x.w.t.h.settle();
    const end = dataOf(x.events('workflow/end')[0]);
    assert.equal(end.status, 'cancelled');
    assertPaired(x.root.session.events, 'cancelled');
    const result = x.root.session.events.find((e) => e.type === 'tool/result');
    assert.match((result as { content: string }).content, /CANCELLED/);
    assert.equal(x.root.lastTurn?.stopReason, 'completed', 'the parent read the failure and answered');
    await assertClean();
    assert.equal(await x.engine.cancel(runId), false, 'a second cancel finds nothing');
  });

  it('harness close ends the run as interrupted, durably, before the store closes', async () => {
    await startAndWait();
    await x.w.t.h.close();
    assert.equal(Isolate.alive, 0);
    const h = await Harness.open({ ...x.w.t.h.config });
    try {
      const s = await h.store.inspect(x.root.id);
      const ends = s.events.filter((e) => e.type === 'workflow/end').map(dataOf);
      assert.equal(ends.length, 1);
      assert.equal(ends[0].status, 'interrupted');
      assertPaired(s.events, 'cancelled');
      assert.equal(h.recovered.length, 0, 'a clean close left nothing for recovery');
    } finally {
      await h.close();
    }
  });
});

describe('workflow: a run ended before its script process started', () => {
  const x = workflowWorld();
  // The harness closed (or the turn was interrupted, or the run cancelled) while the run's
  // `workflow/start` was being written: the run ended, then its start armed a 30-minute wall
  // clock nothing cleared (it held the host's event loop: `arbor run` could not exit) and
  // started a script process for a run already over.
  it('leaves no wall clock, script process or watchdog behind', async () => {
    await x.run('return 1;'); // the sandbox probe is cached: the run reaches its start record at once
    const p = x.run('return await agent("x");');
    await x.w.t.h.close();
    const o = await p;
    assert.equal(o.status, 'interrupted');
    await until(() => x.engine.stats().processes === 0, 5_000).catch(() => undefined);
    const { spares: _, ...left } = x.engine.stats();
    assert.deepEqual(left, { runs: 0, processes: 0, timers: 0 }, 'no run, script process, wall clock or watchdog is left');
    assert.equal(Isolate.alive, 0);
  });
});
