import * as fs from 'node:fs';
import * as path from 'node:path';
import { median, now } from './support';

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

/**
 * What the disk alone takes to make a small append durable: `n` appends of a typical commit's
 * size (700 bytes) to a scratch file in `dir` (on the store's file system, not in its folder), each followed by an fdatasync on this thread (no
 * thread-pool round trip, nothing else around it); the median, ms. The floor of a commit
 * (decision 0063) on this file system, measured beside the figures that wait on commits.
 */
export function diskFsyncMs(dir: string, n = 200): number {
  const file = path.join(dir, `fsync-probe-${process.pid}`);
  const fd = fs.openSync(file, 'w');
  const record = Buffer.alloc(700, 0x61);
  const times: number[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const t = now();
      fs.writeSync(fd, record, 0, record.length, i * record.length);
      fs.fdatasyncSync(fd);
      times.push(now() - t);
    }
  } finally {
    fs.closeSync(fd);
    fs.rmSync(file, { force: true });
  }
  return median(times);
}
