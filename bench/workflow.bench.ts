// Workflow figures (issue 12, decision 0027): the cost of an agent() against a plain one-shot
// child, how a fan-out scales, how well slots are used, and how little a spinning script
// disturbs the host's event loop. The model is the real test server through the real client.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Harness } from '../src/core/harness';
import { OpenAICompatibleClient } from '../src/core/model/openai-client';
import type { ModelClient } from '../src/core/model/types';
import type { StoreStats } from '../src/core/store/stats';
import { type Confinement, scriptConfinement } from '../src/core/workflow/confine';
import { DEFAULT_ISOLATE, Isolate } from '../src/core/workflow/isolate';
import { SpareIsolates } from '../src/core/workflow/spare';
import { ModelServer } from '../test/support/model-server';
import { ModelServerProcess } from '../test/support/model-server-process';
import { type BenchOptions, type Figure, type FigureSpec, fmt, median, missed, now, tempDir } from './support';
import { bareFanoutMs, CapturingClient, clientCpuPerRequest } from './timed-client';
import { ceilingNote, cpuVerdict, loopCpu } from './verdicts';

export const name = 'workflow';

const VS_ONESHOT: FigureSpec = { id: 'workflow.agent.vs_oneshot', op: '<=', target: 1.5 };
const SCALE: FigureSpec = { id: 'workflow.fanout.scale', op: '<=', target: 1.5 };
const EFFICIENCY: FigureSpec = { id: 'workflow.parallel.efficiency', op: '>=', target: 0.9 };
const HOST_LAG: FigureSpec = { id: 'workflow.host_lag.ratio', op: '<=', target: 3 };
const CONFINED_START: FigureSpec = { id: 'workflow.confined_start.vs_bare', op: '<=', target: 1.5 };
export const figures: readonly FigureSpec[] = [VS_ONESHOT, SCALE, EFFICIENCY, HOST_LAG, CONFINED_START];

async function open(server: { baseURL: string }, extra: Parameters<typeof Harness.open>[0]['workflow'] = {}, client?: ModelClient): Promise<Harness> {
  const dir = tempDir('arbor-bench-wf-');
  const ws = path.join(dir, 'ws');
  fs.mkdirSync(ws, { recursive: true });
  return Harness.open({
    storeDir: path.join(dir, 'store'),
    workspace: [ws],
    model: client ? { client, name: 'bench' } : { baseURL: server.baseURL, name: 'bench', apiKey: 'k', maxRetries: 0 },
    sandbox: 'workspace-write',
    approval: 'never',
    releaseDelayMs: 0,
    workflow: extra,
  });
}

async function runScript(h: Harness, sessionId: string, script: string, concurrency: number): Promise<number> {
  const t = now();
  const o = await h.workflows.engine.run(
    { script, meta: { name: 'bench', description: 'bench' }, concurrency },
    { sessionId, signal: new AbortController().signal },
  );
  if (o.status !== 'completed') throw new Error(`the bench workflow ended ${o.status}: ${o.code} ${o.error}`);
  return now() - t;
}

/** 200 sequential agent() calls ÷ 200 sequential one-shot children started directly (same harness, zero-latency model). */
async function vsOneshot(opts: BenchOptions, server: ModelServer): Promise<Figure> {
  server.setFallback(() => ({ text: 'ok' }));
  const h = await open(server);
  try {
    const parent = await h.createSession();
    const n = 200;
    const direct = async () => {
      const t = now();
      for (let i = 0; i < n; i++) {
        const run = await h.subagents.start(parent, 'spawn', { prompt: `task ${i}` });
        await run.result;
        await run.dispose();
      }
      return now() - t;
    };
    const script = `for (let i = 0; i < ${n}; i++) await agent("task " + i); return 1;`;
    await direct(); // warm-up of both paths
    await runScript(h, parent.id, script, 1);
    const reps = opts.quick ? 1 : 3;
    let wf = 0;
    let one = 0;
    for (let r = 0; r < reps; r++) {
      one += await direct();
      wf += await runScript(h, parent.id, script, 1);
    }
    opts.note(`workflow: ${n} agent() ${(wf / reps / n).toFixed(2)} ms each, one-shot child ${(one / reps / n).toFixed(2)} ms each`);
    return { ...VS_ONESHOT, value: wf / one };
  } finally {
    await h.close();
  }
}

/** Per-agent wall time at 1,000 agents ÷ at 100, concurrency 16. */
async function fanoutScale(opts: BenchOptions, server: ModelServer): Promise<Figure> {
  server.setFallback(() => ({ text: 'ok' }));
  const h = await open(server);
  try {
    const parent = await h.createSession();
    const fan = (n: number) => `return (await parallel(Array.from({ length: ${n} }, (_, i) => () => agent("t" + i)))).length;`;
    await runScript(h, parent.id, fan(50), 16);
    const small = (await runScript(h, parent.id, fan(100), 16)) / 100;
    const large = (await runScript(h, parent.id, fan(1000), 16)) / 1000;
    opts.note(`workflow: fan-out per agent ${small.toFixed(2)} ms at 100, ${large.toFixed(2)} ms at 1000 (concurrency 16)`);
    return { ...SCALE, value: large / small };
  } finally {
    await h.close();
  }
}

/**
 * Ideal ÷ measured wall time: 64 agents, 50 ms model latency, concurrency 8 (ideal 8 waves × 50 ms).
 * The model server runs in a process of its own (same server, wire and latency), as a real
 * model is elsewhere: this process's CPU is the runtime's and the client's alone (decision 0088).
 */
async function parallelEfficiency(opts: BenchOptions): Promise<Figure> {
  const server = await ModelServerProcess.start();
  await server.setFallback({ text: 'ok', delayMs: 50 });
  // The harness's own client for a base URL (harness/client.ts), kept to replay a request bare.
  const client = new CapturingClient(new OpenAICompatibleClient({ baseURL: server.baseURL, apiKey: 'k', maxRetries: 0 }), true);
  const h = await open(server, {}, client);
  try {
    const parent = await h.createSession();
    const script = 'return (await parallel(Array.from({ length: 64 }, (_, i) => () => agent("t" + i)))).length;';
    await runScript(h, parent.id, script, 8);
    await h.workflows.engine.spareReady(); // the warm-up's spare, forked before the CPU below is counted
    const reps = opts.quick ? 1 : 3;
    const times: number[] = [];
    const before = h.store.stats();
    const serverBefore = await server.cpuMs();
    const stopCpu = loopCpu();
    const heads: number[] = [];
    const gaps: number[] = [];
    let spares = 0;
    const forks = { n: SpareIsolates.started, ms: SpareIsolates.startMs };
    for (let r = 0; r < reps; r++) {
      // Each run starts as one does after a model's turn since the last: on the script process
      // kept for it (decision 0096), already started. A run with none pays the confined start
      // that workflow.confined_start.vs_bare measures.
      if (await h.workflows.engine.spareReady()) spares++;
      client.mark();
      const t = now();
      times.push(await runScript(h, parent.id, script, 8));
      heads.push((client.firstAt ?? t) - t);
      gaps.push(...slotGaps(client.spans, 8));
    }
    await h.workflows.engine.spareReady(); // the last run's spare too: its fork is this loop's CPU, counted below
    const used = stopCpu();
    const serverMs = (await server.cpuMs()) - serverBefore;
    const after = h.store.stats();
    const forked = { n: SpareIsolates.started - forks.n, ms: SpareIsolates.startMs - forks.ms };
    if (!client.lastRequest) throw new Error('the workflow agents sent no model request');
    const clientMs = await clientCpuPerRequest(client.inner, client.lastRequest, 64, 8);
    const bare: number[] = [];
    for (let r = 0; r < reps; r++) bare.push(await bareFanoutMs(client.inner, client.lastRequest, 64, 8));
    const measured = Math.min(...times);
    const perAgent = used.loopMs / reps / 64;
    opts.note(
      `workflow: 64 agents at 50 ms, concurrency 8: ${measured.toFixed(0)} ms (ideal 400 ms); Arbor's CPU ${perAgent.toFixed(2)} ms per agent on the event loop's thread${used.thread ? '' : ' (the whole process: no per-thread clock here)'} ` +
        `(runtime and client; ${fmt(used.processMs / reps / 64)} ms with V8's and libuv's threads beside it; the model server in its own process took ${(serverMs / reps / 64).toFixed(2)} ms per request); ` +
        `${((after.syncs - before.syncs) / (after.events - before.events)).toFixed(3)} fdatasyncs per event (group commit); ` +
        `the first request left ${median(heads).toFixed(1)} ms after the run's start (${spares} of ${reps} runs started on the spare script process kept from the run before, the rest started their own; then the first agent created and its turn open); ` +
        `each run's spare for the next was forked by this host after its outcome was handed back, outside the timed run (decision 0096 amended): ${fmt(forked.ms / Math.max(1, forked.n))} ms of this event loop a fork (${forked.n} forks, counted in the CPU per agent above)` +
        slotNote(gaps, before, after, median(heads), measured, Math.min(...bare)) +
        cpuVerdict(EFFICIENCY, 64, 8, 50, perAgent, clientMs) +
        ceilingNote(EFFICIENCY, 400, measured, Math.min(...bare)) +
        waitsBeyondCpu(measured, perAgent),
    );
    return { ...EFFICIENCY, value: 400 / measured };
  } finally {
    await h.close();
    await server.stop();
  }
}

/**
 * A slot's turnover, from the client's side: with FIFO slots each reply that ends frees the slot
 * the next agent takes, so the k-th request to leave after the first `concurrency` follows the
 * k-th reply to end. The gap between them is what an `agent()` costs its slot beyond the model:
 * the finished child's turn end made durable and its "done" written, then the next child's
 * request built. (Before decision 0102 the next child was also created, its tree and catalog
 * commits, and its turn opened, one more, all inside the gap; now that happens while it waits queued.)
 */
function slotGaps(spans: readonly { start: number; end?: number }[], concurrency: number): number[] {
  const starts = spans.map((s) => s.start).sort((a, b) => a - b);
  const ends = spans.flatMap((s) => (s.end === undefined ? [] : [s.end])).sort((a, b) => a - b);
  return starts.slice(concurrency).map((s, k) => s - ends[k]);
}

/**
 * What the slots' turnover adds to the run, beside what one of the store's commits waits on the
 * disk; AT ITS FLOOR when the target leaves a turnover less than one commit (a child's facts are
 * on disk before its request leaves: decision 0063).
 */
function slotNote(gaps: number[], before: StoreStats, after: StoreStats, headMs: number, measuredMs: number, bareMs: number): string {
  if (!gaps.length) return '';
  const commitMs = (after.commitMs - before.commitMs) / Math.max(1, after.commits - before.commits);
  const turnover = median(gaps);
  // The cycle each slot may take for the target: 8 of them and the head in 400 ms ÷ target.
  const allowed = (400 / EFFICIENCY.target - headMs) / 8 - bareMs / 8;
  return (
    `; a slot's turnover (a reply's end to the next agent's request in that slot) ${fmt(turnover)} ms median, ` +
    `on a path of one commit (the finished turn's end; the next child was created and its turn opened while it waited queued, decision 0102) at ${fmt(commitMs)} ms here (write to fdatasync's answer, shared by group commit); ` +
    `the head and 7 turnovers a slot explain ${fmt(headMs + 7 * turnover)} of the ${fmt(measuredMs - bareMs)} ms the run takes over the bare requests` +
    (allowed < commitMs
      ? `; AT ITS FLOOR: ≥ ${EFFICIENCY.target} leaves a slot ${fmt(Math.max(0, allowed))} ms a turnover beside the bare request, less than one commit takes here`
      : '')
  );
}

/**
 * Where the wall time exceeds what the host's CPU can explain (8 waves, each its 50 ms model
 * wait plus its 8 agents' CPU one after another), the rest is waiting off this event loop.
 */
function waitsBeyondCpu(measuredMs: number, cpuPerAgentMs: number): string {
  const lockstep = 8 * (50 + 8 * cpuPerAgentMs);
  if (measuredMs <= lockstep) return '';
  return (
    `; this loop's CPU explains at most ${lockstep.toFixed(0)} ms (8 waves of 50 ms + 8 × ${cpuPerAgentMs.toFixed(2)} ms), the other ${(measuredMs - lockstep).toFixed(0)} ms ` +
    `are waits off it: each agent() is a round trip to the script process (whose CPU is not counted here) and the fdatasyncs, ` +
    `on ${os.cpus().length} cores at load average ${os.loadavg()[0].toFixed(1)}`
  );
}

/** Host p99 event-loop delay while a script spins (`while(true){}` until its wall clock) ÷ the same window idle. */
async function hostLag(opts: BenchOptions, server: ModelServer): Promise<Figure> {
  const windowMs = opts.quick ? 1500 : 3000;
  const h = await open(server, { wallClockMs: windowMs });
  try {
    const parent = await h.createSession();
    const p99 = async (during: () => Promise<unknown>) => {
      const m = monitorEventLoopDelay({ resolution: 5 });
      m.enable();
      await during();
      m.disable();
      return m.percentile(99) / 1e6;
    };
    const idle = await p99(() => new Promise((r) => setTimeout(r, windowMs)));
    const spinning = await p99(() =>
      h.workflows.engine.run(
        { script: 'while (true) {}', meta: { name: 'spin', description: 'spin' } },
        { sessionId: parent.id, signal: new AbortController().signal },
      ),
    );
    opts.note(`workflow: host event-loop p99 ${idle.toFixed(1)} ms idle, ${spinning.toFixed(1)} ms while a script spins`);
    return { ...HOST_LAG, value: spinning / idle };
  } finally {
    await h.close();
  }
}

/** One script process from spawn to its first message (`ready`), then ended. */
async function startToReady(confinement: Confinement): Promise<number> {
  const t = now();
  const iso = new Isolate({ onMessage: () => undefined, onBadMessage: () => undefined }, DEFAULT_ISOLATE, true, confinement);
  const ok = await iso.ready;
  const ms = now() - t;
  iso.kill();
  await iso.ended;
  if (!ok) throw new Error(`the ${confinement.kind} script process did not start: ${iso.stderrTail}`);
  return ms;
}

/** Median start-to-first-message of the bubblewrap-confined script process ÷ the plain child process (interleaved). */
async function confinedStart(opts: BenchOptions): Promise<Figure> {
  const { confinement } = await scriptConfinement(undefined);
  if (confinement.kind !== 'bubblewrap') return missed(CONFINED_START, `no bubblewrap here: ${confinement.reason}`);
  const bare: Confinement = { kind: 'none', reason: 'bench baseline' };
  await startToReady(confinement);
  await startToReady(bare);
  const n = opts.quick ? 10 : 30;
  const a: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < n; i++) {
    a.push(await startToReady(confinement));
    b.push(await startToReady(bare));
  }
  opts.note(`workflow: script process start-to-ready median ${median(a).toFixed(1)} ms confined, ${median(b).toFixed(1)} ms bare (n=${n})`);
  return { ...CONFINED_START, value: median(a) / median(b) };
}

export async function run(opts: BenchOptions): Promise<Figure[]> {
  const server = await ModelServer.start();
  const out: Figure[] = [];
  try {
    for (const [spec, f] of [
      [VS_ONESHOT, vsOneshot],
      [SCALE, fanoutScale],
      [EFFICIENCY, parallelEfficiency],
      [HOST_LAG, hostLag],
      [CONFINED_START, (o: BenchOptions) => confinedStart(o)],
    ] as const) {
      server.reset();
      try {
        out.push(await f(opts, server));
      } catch (err) {
        out.push(missed(spec, err instanceof Error ? err.message : String(err)));
      }
    }
  } finally {
    await server.stop();
  }
  return out;
}
