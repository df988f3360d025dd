import * as fs from 'node:fs';

// A lock between the Arbor processes of one user: a file made exclusively (`wx`) holding the
// holder's pid, removed when done; one whose holder died (or one cut short as it was written, once
// stale) is taken over. Synchronous: its users (the stand-in registry around a command, the MCP
// trust book) read, change and write a small file in one go.

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
  const until = Date.now() + waitMs;
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
      let holder = Number.NaN;
      try {
        holder = Number(fs.readFileSync(lock, 'utf8'));
      } catch (r) {
        if ((r as NodeJS.ErrnoException).code === 'ENOENT') continue; // released meanwhile
        // Unreadable (another user's file, a folder): judged as a lock cut short, below, and
        // waited for no longer than any other (a `continue` here spun for ever).
      }
      // A holder that died (or a lock file cut short as it was written, holder 0 or NaN, once stale).
      if ((Number.isInteger(holder) && holder > 0 && !alive(holder)) || (!(holder > 0) && Date.now() > until - waitMs / 2)) {
        if (unlink(lock)) continue;
      }
      if (Date.now() > until) return false;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2);
    }
  }
  try {
    act();
  } finally {
    unlink(lock);
  }
  return true;
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
