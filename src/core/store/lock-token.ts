import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

// The lock holder's liveness token (decision 0098, amended): a FIFO beside the lock that the
// holder keeps open for reading while it holds the lock. The kernel closes that reader when the
// holder dies, however it dies, so a checker's non-blocking open for writing answers "alive"
// while the holder runs and fails with ENXIO once it is gone — from any PID namespace of the same
// kernel (a sandbox or container below, above or beside the holder), where a pid means nothing.
// Only asked when the lock was written in this boot of this kernel: a FIFO has no reader on
// another machine sharing the folder.

/** A token's file name in the lock's folder: nothing else is ever opened from a lock's text. */
const NAME = /^arbor\.lock\.live-[0-9a-f]{16}$/;

export function isTokenName(name: string): boolean {
  return NAME.test(name);
}

/** The FIFO this process holds open for reading while it holds a lock. */
export class LiveToken {
  private constructor(
    private readonly file: string,
    private fd: number | undefined,
  ) {}

  /** The token's name in the lock's folder (what the lock records). */
  get name(): string {
    return path.basename(this.file);
  }

  /**
   * A new token in `dir`, open for reading; undefined where none can be made (Windows, a file
   * system without FIFOs, no `mkfifo`): the lock is then judged by its pid alone.
   */
  static async make(dir: string): Promise<LiveToken | undefined> {
    if (process.platform === 'win32') return undefined;
    const file = path.join(dir, `arbor.lock.live-${randomBytes(8).toString('hex')}`);
    // Node has no mkfifo(3): the program, bounded (it ends in a few ms).
    const made = await new Promise<boolean>((resolve) => execFile('mkfifo', ['-m', '600', file], { timeout: 5000, windowsHide: true }, (err) => resolve(!err)));
    if (!made) return undefined;
    try {
      // A read end opened non-blocking returns at once, with or without a writer.
      return new LiveToken(file, fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | fs.constants.O_NOFOLLOW));
    } catch {
      fs.rmSync(file, { force: true });
      return undefined;
    }
  }

  /** Let go: the reader closed (a checker now sees the holder gone), the FIFO removed. */
  close(): void {
    if (this.fd === undefined) return;
    fs.closeSync(this.fd);
    this.fd = undefined;
    fs.rmSync(this.file, { force: true });
  }
}

/**
 * What a holder's token says: 'alive' (a reader has it open), 'gone' (no reader: the holder is
 * dead) or 'unknown' (no such FIFO, or it cannot be asked: the pid decides). Never blocks, never
 * follows a link, and opens nothing but a FIFO with a token's name in `dir`.
 */
export function tokenState(dir: string, name: string): 'alive' | 'gone' | 'unknown' {
  if (!isTokenName(name)) return 'unknown';
  const file = path.join(dir, name);
  try {
    if (!fs.lstatSync(file).isFIFO()) return 'unknown';
    fs.closeSync(fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK | fs.constants.O_NOFOLLOW));
    return 'alive';
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENXIO' ? 'gone' : 'unknown';
  }
}

/** Remove a dead holder's token (after its lock was taken over): only a FIFO with a token's name. */
export function removeToken(dir: string, name: string | undefined): void {
  if (!name || !isTokenName(name)) return;
  const file = path.join(dir, name);
  try {
    if (fs.lstatSync(file).isFIFO()) fs.rmSync(file, { force: true });
  } catch {
    // gone already
  }
}
