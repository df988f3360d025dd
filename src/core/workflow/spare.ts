import type { Confinement } from './confine';
import { Isolate, type IsolateLimits } from './isolate';

// A script process started ahead for the next run (decision 0096). A confined Node takes
// ~100 ms to start (bubblewrap, then Node itself), and the run waited for it before its first
// agent() — the head of every workflow. After a run ends, the engine starts one process for
// the next run, with the settings that run would start with; the next run takes it already
// `ready`. Nothing in it has run: it was started exactly as a run's own would be (same
// program, flags, confinement, empty environment), and it serves one run only, as every
// script process does. No workspace, file or setting of a session reaches a script process
// at its start (confine.ts: it sees only Node and its entry), so one started before the run
// is the same process as one started for it.

/** A spare nobody took within this long is ended (its memory, ~40 MB, given back). */
export const SPARE_IDLE_MS = 5 * 60_000;

/** What a script process is started with: a spare serves a run only when the run would start the same. */
export interface SpareKey {
  limits: IsolateLimits;
  permission: boolean;
  confinement: Confinement;
}

const keyOf = (k: SpareKey): string => JSON.stringify([k.limits.heapMb, k.permission, k.confinement]);

/** At most one spare per engine; `take` hands it to a run, `refill` starts the next. */
export class SpareIsolates {
  /** Spares alive in this host (leak checks: a spare is expected between runs, never after close). */
  static alive = 0;
  /** Spares handed to runs in this host (what shows a run started on one). */
  static served = 0;
  /** Spares started in this host, and the milliseconds of this event loop their starts took (the host's fork: benches). */
  static started = 0;
  static startMs = 0;
  private spare?: { iso: Isolate; key: string; idle: NodeJS.Timeout };
  private closed = false;
  /** A spare that never became ready (a Node refusing the flags, bubblewrap failing): none is started again. */
  private failed = false;

  constructor(
    private readonly idleMs = SPARE_IDLE_MS,
    private readonly make: (k: SpareKey) => Isolate = (k) => new Isolate(undefined, k.limits, k.permission, k.confinement),
  ) {}

  /** The spare when it was started with `k` and still runs; a spare started otherwise is ended. */
  take(k: SpareKey): Isolate | undefined {
    const s = this.spare;
    if (!s) return undefined;
    this.drop(s);
    if (s.key !== keyOf(k) || s.iso.gone) {
      s.iso.kill();
      return undefined;
    }
    SpareIsolates.served++;
    return s.iso;
  }

  /** Start one with `k` for the next run, unless one is kept or the engine closed. */
  refill(k: SpareKey): void {
    if (this.closed || this.failed || this.spare) return;
    const t = performance.now();
    const iso = this.make(k);
    SpareIsolates.startMs += performance.now() - t;
    SpareIsolates.started++;
    const s = { iso, key: keyOf(k), idle: setTimeout(() => this.expire(s), this.idleMs) };
    s.idle.unref();
    this.spare = s;
    SpareIsolates.alive++;
    // One that could not start (or died waiting) is forgotten; the next run starts its own.
    void iso.ready.then((ok) => {
      if (ok) return;
      this.failed = true;
      if (this.spare === s) this.drop(s);
    });
    void iso.ended.then(() => {
      if (this.spare === s) this.drop(s);
    });
  }

  /** Resolves once the kept spare is ready (false: none is kept, or it could not start). */
  async ready(): Promise<boolean> {
    return this.spare ? this.spare.iso.ready : false;
  }

  /** The engine closes: the spare ends, and none is started again. */
  async close(): Promise<void> {
    this.closed = true;
    const s = this.spare;
    if (!s) return;
    this.drop(s);
    s.iso.kill();
    await s.iso.ended;
  }

  private expire(s: NonNullable<SpareIsolates['spare']>): void {
    if (this.spare !== s) return;
    this.drop(s);
    s.iso.kill();
  }

  private drop(s: NonNullable<SpareIsolates['spare']>): void {
    if (this.spare !== s) return;
    this.spare = undefined;
    clearTimeout(s.idle);
    SpareIsolates.alive--;
  }
}

/** Script processes serving runs now: every one alive but the spares (leak checks: 0 when no run goes). */
export function runProcesses(): number {
  return Isolate.alive - SpareIsolates.alive;
}
