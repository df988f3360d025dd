import { now } from './support';

/**
 * Wall time during which at least one durable store write was in flight. Concurrent writes
 * (group-committed appends of several sessions) are counted once, so the time can be
 * subtracted from the wall time of the work that awaited them.
 */
export class DiskWait {
  ms = 0;
  private inFlight = 0;
  private since = 0;

  /** Wraps `obj[key]` (an async method) so its calls are timed. */
  wrap<K extends string, T extends { [k in K]: (...args: never[]) => Promise<unknown> }>(obj: T, key: K): void {
    const fn = obj[key].bind(obj) as (...args: unknown[]) => Promise<unknown>;
    (obj as Record<K, unknown>)[key] = async (...args: unknown[]) => {
      if (this.inFlight++ === 0) this.since = now();
      try {
        return await fn(...args);
      } finally {
        if (--this.inFlight === 0) this.ms += now() - this.since;
      }
    };
  }

  /** The time so far, counting a write still in flight up to now; then starts again from 0. */
  take(): number {
    const t = now();
    const ms = this.ms + (this.inFlight > 0 ? t - this.since : 0);
    this.ms = 0;
    if (this.inFlight > 0) this.since = t;
    return ms;
  }
}
