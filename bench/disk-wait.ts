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
 * What the disk alone takes to make a small append durable, sampled inside a figure's own rounds
 * (decision 0063's floor): after each round, an idle wait as long as that round's bare request
 * (a commit of a turn follows such a wait: the previous turn's end, the model's answer), then a
 * typical commit's 700 bytes appended to a scratch file in `dir` (on the store's file system, not in
 * its folder) and made durable. Two ways, alternating: `fdatasync` on this thread (the disk and
 * the kernel, nothing else) and through libuv's thread pool, as a non-blocking store must (the
 * thread's hand-offs added: on a busy machine the pool's thread and the woken event loop each wait
 * for a core). Back-to-back syncs with nothing between them measure faster than a commit can be
 * (the disk and the vCPU do not idle between them), so an earlier probe that ran them so made
 * the commit path look slower than the disk by more than it is.
 */
export class FsyncProbe {
  private readonly file: string;
  private readonly fd: number;
  private offset = 0;
  private readonly record = Buffer.alloc(700, 0x61);
  readonly onThread: number[] = [];
  readonly viaPool: number[] = [];

  constructor(dir: string) {
    this.file = path.join(dir, `fsync-probe-${process.pid}`);
    this.fd = fs.openSync(this.file, 'w');
  }

  /** One sample each way, each after `idleMs` of idle waiting. */
  async sample(idleMs: number): Promise<void> {
    const idle = () => new Promise<void>((resolve) => setTimeout(resolve, Math.max(1, Math.round(idleMs))));
    await idle();
    let t = now();
    this.append();
    fs.fdatasyncSync(this.fd);
    this.onThread.push(now() - t);
    await idle();
    t = now();
    this.append();
    await new Promise<void>((resolve, reject) => fs.fdatasync(this.fd, (err) => (err ? reject(err) : resolve())));
    this.viaPool.push(now() - t);
  }

  private append(): void {
    fs.writeSync(this.fd, this.record, 0, this.record.length, this.offset);
    this.offset += this.record.length;
  }

  private closed = false;

  /** The medians, ms; the scratch file is removed (a second call only answers). */
  close(): { onThread: number; viaPool: number } {
    if (!this.closed) {
      this.closed = true;
      fs.closeSync(this.fd);
      fs.rmSync(this.file, { force: true });
    }
    return { onThread: median(this.onThread), viaPool: median(this.viaPool) };
  }
}
