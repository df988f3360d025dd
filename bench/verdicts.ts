// What a figure that misses says of why (decision 0080): the durable commits against bare ones
// (`floorVerdict`), a fan-out's CPU on its one event loop (`cpuVerdict`, measured by `loopCpu`)
// and the ceiling the wire leaves it (`ceilingNote`).
import * as fs from 'node:fs';
import { type FigureSpec, fmt } from './support';

/** A bare commit's cost here (FsyncProbe), ms: the fdatasync on the event loop's thread, and through the thread pool. */
export interface FsyncFloor {
  onThread: number;
  viaPool: number;
}

/**
 * The context a durable-floor figure (a turn, a one-shot child ÷ a bare request) adds when its
 * commits put it past its target: without the durable writes it meets the target, but its
 * `syncs` commits wait `commitMs` in all (append to durable: the group's tick, the record's
 * encoding and write, the fdatasync through the thread pool, the in-memory apply beside it).
 * AT ITS FLOOR when even commits that cost only a bare append and fdatasync through the thread
 * pool (`fsync.viaPool` each, sampled in the figure's own rounds after the same idle wait:
 * FsyncProbe) would miss: then only fewer commit points (decision 0063) or a faster disk meet it,
 * a decision about the target or the design. When the bare commit would fit, the line says the
 * commits' own path misses, and by how much: that is code. The floor counts the commits one after
 * another, as a turn's and a one-shot child's run (each waits for the one before); commits that
 * overlapped would make it an overstatement. Empty otherwise.
 */
export function floorVerdict(spec: FigureSpec, withoutDisk: number, bareMs: number, syncs: number, commitMs: number, fsync: FsyncFloor): string {
  if (spec.op !== '<=' || withoutDisk > spec.target || withoutDisk + commitMs / bareMs <= spec.target) return '';
  const diskOnly = withoutDisk + (syncs * fsync.viaPool) / bareMs;
  const facts =
    `without the durable writes the figure is ${fmt(withoutDisk)} (target ≤ ${spec.target}); its ${fmt(syncs)} commits wait ${fmt(commitMs)} ms, ` +
    `of which bare commits would take ${fmt(syncs * fsync.viaPool)} ms (a 700-byte append and its fdatasync after the same idle wait, sampled in the same rounds: ` +
    `${fmt(fsync.viaPool)} ms each through the thread pool, ${fmt(fsync.onThread)} ms on the event loop's own thread)`;
  if (diskOnly > spec.target) {
    return (
      `; AT ITS FLOOR: ${facts}; were each commit only that, the figure would still be ${fmt(diskOnly)}: ` +
      `out of reach on this disk with this many commit points; the target needs a decision`
    );
  }
  return `; the commits' own path misses, not the disk: ${facts}; were each commit only that, the figure would be ${fmt(diskOnly)}`;
}

/**
 * CPU time so far of the calling thread, ms: called from JavaScript, the event loop's own thread
 * (`/proc/thread-self/schedstat`, its first field). `process.cpuUsage` counts every thread of the
 * process — V8's compiler and collector threads, libuv's pool running the fdatasyncs — which run
 * beside the loop on another core and are not what a fan-out's waves queue for (about 30 % more
 * here). Where the file is missing (not Linux), the process's CPU stands in, and says so.
 */
export function threadCpuMs(): { ms: number; thread: boolean } {
  try {
    return { ms: Number(fs.readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e6, thread: true };
  } catch {
    const u = process.cpuUsage();
    return { ms: (u.user + u.system) / 1000, thread: false };
  }
}

/** The event loop's CPU and the whole process's since `threadCpuMs()`/`process.cpuUsage()` were taken together: `start()`, then `stop()`. */
export function loopCpu(): () => { loopMs: number; processMs: number; thread: boolean } {
  const t0 = threadCpuMs();
  const p0 = process.cpuUsage();
  return () => {
    const p = process.cpuUsage(p0);
    const t = threadCpuMs();
    return { loopMs: t.ms - t0.ms, processMs: (p.user + p.system) / 1000, thread: t.thread };
  };
}

/**
 * The context a fan-out efficiency figure (ideal ÷ measured wall time: waves of `concurrency`
 * children, each waiting `modelMs` on the model) adds when this process's CPU alone puts it past
 * its target: the children of a wave start and finish together, so their CPU runs one after
 * another on the one event loop, and the target leaves (ideal ÷ target − ideal) ÷ waves of it a
 * wave. Empty when the CPU fits. `cpuPerChildMs` is the event loop's own CPU (`loopCpu`; where the
 * model server runs elsewhere, Arbor's own); with `clientMs`, what the model client alone costs a request
 * (measured bare), the line says what dominates and whether the client alone is past the target.
 */
export function cpuVerdict(spec: FigureSpec, children: number, concurrency: number, modelMs: number, cpuPerChildMs: number, clientMs?: number): string {
  const waves = Math.ceil(children / concurrency);
  const ideal = waves * modelMs;
  const perWave = (ideal / spec.target - ideal) / waves;
  if (spec.op !== '>=' || concurrency * cpuPerChildMs <= perWave) return '';
  const split =
    clientMs === undefined
      ? ''
      : `; of it, the model client alone (node:http and its SSE reader, decision 0094, the same request ${concurrency} at a time, nothing else running) takes ${fmt(clientMs)} ms a request, ` +
        `the runtime and the store the other ${fmt(Math.max(0, cpuPerChildMs - clientMs))} ms` +
        (concurrency * clientMs > perWave
          ? `: the client alone needs ${fmt(concurrency * clientMs)} ms a wave, past the target with no runtime at all (its floor on this machine)`
          : `: the floor with this client is ${fmt(concurrency * clientMs)} ms a wave`);
  return (
    `; CPU-BOUND: the ${concurrency} children of a wave need ${concurrency} × ${fmt(cpuPerChildMs)} = ${fmt(concurrency * cpuPerChildMs)} ms of the one event loop ` +
    `each wave, where ≥ ${spec.target} leaves ${fmt(perWave)} ms a wave beside its ${fmt(modelMs)} ms model wait (≤ ${fmt(perWave / concurrency)} ms of CPU per child)` +
    split
  );
}

/**
 * A fan-out figure beside its ceiling: the same requests with no runtime (`bareFanoutMs`, paired
 * with the measured runs). When even the bare fan-out misses the target, the model server's time
 * over its latency and the wire are the floor, and the line says so; either way it names the
 * runtime's own share (measured ÷ bare).
 */
export function ceilingNote(spec: FigureSpec, idealMs: number, measuredMs: number, bareMs: number): string {
  const bare = idealMs / bareMs;
  const line = `; with no runtime at all the same requests, ${fmt(bareMs)} ms (${fmt(bare)} of the ideal), so the runtime's own share is ${fmt(measuredMs / bareMs)} × that`;
  if (spec.op !== '>=' || bare >= spec.target) return line;
  return `${line}; AT THE WIRE'S CEILING: the model server's time over its latency and the HTTP round trips alone leave ${fmt(bare)}, below the target of ${spec.target}, before any runtime runs`;
}
