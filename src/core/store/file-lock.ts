import * as fs from 'node:fs';
import * as path from 'node:path';
import { processRuns } from '../process/group';
import { startedAtMs } from '../process/proc-stat';

// A lock between the Arbor processes of one user: a file made exclusively (`wx`) holding the
// holder's pid, removed when done; one whose holder died (or one cut short as it was written, once
// stale) is taken over. Synchronous: its users (the stand-in registry around a command, the MCP
// trust book, the made-by-commands record's compaction) read, change and write a small file in one go.
//
// A pid outlives its process: a lock left by a process killed mid-hold names a pid the kernel hands
// out again — to this very process (a sandbox's or container's PID namespace numbers its processes
// alike: each `arbor` in one is pid 2), or to an unrelated one. So a holder is judged with the lock
// file's own age (its mtime: when the holder wrote its pid): our own pid is a leftover unless this
// thread holds the lock, or the lock was written after this process started; another live pid is a
// leftover when that process started after the lock was written (`START_SLACK_MS` allowed).
// The text stays a bare pid, as older Arbor processes read it (one that cannot parse a lock takes it
// over after half its wait).

/** How much later than its lock a holder may seem to have started and still be its writer: /proc's boot time is whole seconds (early, never late), this is for the clock stepped meanwhile. */
const START_SLACK_MS = 1000;

/** The locks this thread holds now (resolved paths): a lock naming our own pid and not among them is a leftover. */
const held = new Set<string>();

/** Whether a process is alive (EPERM: alive, another user's). */
export function alive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Runs `act` holding the lock file `lock`, waiting for it at most `waitMs`. Returns false, without
 * running `act`, when the lock could not be had in that time (or cannot be made at all).
 */
export function withFileLock(lock: string, act: () => void, waitMs = 2000): boolean {
  if (!acquire(lock, waitMs)) return false;
  const key = path.resolve(lock);
  held.add(key);
  try {
    act();
  } finally {
    held.delete(key);
    unlink(lock);
  }
  return true;
}

/**
 * `withFileLock` for an act that waits (the stand-in registry removes its folders in parallel on
 * libuv's thread pool): the lock is held until `act` settles. This thread must not ask for the same
 * lock meanwhile — a nested call waits synchronously, blocking the very loop that would end `act` —
 * so the caller queues its calls on that lock (`stand-in-registry.ts`).
 */
export async function withFileLockAsync(lock: string, act: () => Promise<void>, waitMs = 2000): Promise<boolean> {
  if (!acquire(lock, waitMs)) return false;
  const key = path.resolve(lock);
  held.add(key);
  try {
    await act();
  } finally {
    held.delete(key);
    unlink(lock);
  }
  return true;
}

/** Makes the lock file `lock` (ours now), waiting for it at most `waitMs`; false when it could not be had in that time (or cannot be made at all). */
function acquire(lock: string, waitMs: number): boolean {
  const until = Date.now() + waitMs;
  const key = path.resolve(lock);
  for (;;) {
    try {
      const fd = fs.openSync(lock, 'wx', 0o600);
      try {
        fs.writeSync(fd, String(process.pid));
      } finally {
        fs.closeSync(fd);
      }
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') return false;
      const seen = holderOf(lock);
      if (seen === 'gone') continue; // released meanwhile
      // Unreadable (another user's file, a folder): judged as a lock cut short, below, and waited
      // for no longer than any other (a `continue` here spun for ever).
      const holder = seen?.pid ?? Number.NaN;
      // A holder that died, or a leftover whose pid runs again (or a lock file cut short as it was written, holder 0 or NaN, once stale).
      const cutShort = (s: Holder | undefined) => !(s && s.pid > 0) && Date.now() > until - waitMs / 2 && (!s || Date.now() - s.mtimeMs > waitMs / 2);
      if ((seen && holder > 0 && leftover(key, seen)) || cutShort(seen)) {
        if (takeOver(lock, (again) => (again && again.pid > 0 && leftover(key, again)) || cutShort(again))) continue;
      }
      if (Date.now() > until) return false;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2);
    }
  }
  return true;
}

interface Holder {
  pid: number;
  mtimeMs: number;
  ino: number;
}

/** What a lock file says (its pid, when it was written, its inode: one open), 'gone' when there is none, undefined when unreadable. */
function holderOf(lock: string): Holder | 'gone' | undefined {
  let fd: number;
  try {
    fd = fs.openSync(lock, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'gone' : undefined;
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) return undefined;
    const buf = Buffer.alloc(32);
    const n = fs.readSync(fd, buf, 0, buf.length, 0);
    const pid = Number(buf.subarray(0, n).toString('latin1'));
    return { pid: Number.isInteger(pid) ? pid : Number.NaN, mtimeMs: st.mtimeMs, ino: st.ino };
  } catch {
    return undefined;
  } finally {
    fs.closeSync(fd);
  }
}

/** Whether the lock's holder cannot be holding it: gone, our own pid not held here and older than us, or a pid whose process started after the lock was written. */
function leftover(key: string, seen: { pid: number; mtimeMs: number }): boolean {
  // This thread's own lock is held (a nested call waits, as for any holder); written before this
  // process began, no thread of ours wrote it.
  if (seen.pid === process.pid) return !held.has(key) && seen.mtimeMs < performance.timeOrigin; // the process's start, in a worker thread too
  if (!processRuns(seen.pid)) return true;
  const started = startedAtMs(seen.pid);
  return started !== undefined && started > seen.mtimeMs + START_SLACK_MS;
}

/**
 * Remove a lock judged a leftover, judged again under `<lock>.break` (made exclusively, held for
 * the judgement and the removal). Two waiters that judged the same leftover must not both remove
 * a lock: the second would remove the one the first has just made, and both would hold it (its
 * inode cannot tell them apart: ext4 hands a removed file's inode to the next file made). Only a
 * holder of the break removes another's lock, and no one else removes a lock but its own holder —
 * gone, as judged — so what it removes is what it judged. Whether to try the lock again at once.
 * A break left by a waiter killed in those microseconds is taken over as a lock is (its pid gone,
 * or cut short and a second old): two waiters meeting that at once is the one race left.
 */
function takeOver(lock: string, stale: (seen: Holder | undefined) => boolean): boolean {
  const brk = `${lock}.break`;
  let fd: number;
  try {
    fd = fs.openSync(brk, 'wx', 0o600);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') return false;
    const b = holderOf(brk);
    if (b !== 'gone' && b && (b.pid > 0 ? leftover(path.resolve(brk), b) : Date.now() - b.mtimeMs > BREAK_CUT_SHORT_MS)) unlinkIfSame(brk, b.ino);
    return false;
  }
  try {
    try {
      fs.writeSync(fd, String(process.pid));
    } finally {
      fs.closeSync(fd);
    }
    const again = holderOf(lock);
    if (again === 'gone') return true;
    return stale(again) && unlink(lock);
  } finally {
    unlink(brk);
  }
}

/** How old a break naming no pid (its waiter killed between making it and writing its pid) must be to be taken over. */
const BREAK_CUT_SHORT_MS = 1000;

/** Remove a leftover break, unless another's has replaced the one judged (its inode differs). */
function unlinkIfSame(lock: string, ino: number): boolean {
  try {
    if (fs.lstatSync(lock).ino !== ino) return true; // another's now: asked again
  } catch {
    return true; // gone meanwhile
  }
  return unlink(lock);
}

/** Whether nothing is at `p` now (removed, or gone already). */
function unlink(p: string): boolean {
  try {
    fs.unlinkSync(p);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ENOENT';
  }
  return true;
}
