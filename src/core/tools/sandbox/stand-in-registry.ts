import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { alive, withFileLock, withFileLockAsync } from '../../store/file-lock';

// Which stand-ins the Arbor processes of this user stand on now, across processes (decision 0103,
// amended in session 48). A stand-in is an empty folder on the host with a read-only mount on it
// in each command's namespaces; a host that deletes it dissolves that mount in every namespace,
// and the command still running there can then make the folder itself (`.vscode/tasks.json`).
// Each process counts its own commands (`shadows.ts`), but two Arbor processes on one workspace
// (the extension and a CLI) did not know of each other: the first removed its stand-in when its
// command ended, while the second's command stood on the same folder. So each process that
// stands on a stand-in says so here (a file named by the folder's digest and its pid) before the
// folder is made, and a folder is removed only under this registry's lock, only when no other
// live process stands on it, and before this process's entry goes (so a walk elsewhere that sees
// the folder sees it registered). The registry is in the host's /dev/shm (a tmpfs: a few
// microseconds an entry; else the temporary folder), which no confined command sees (its /dev/shm
// and /tmp are its own).

let known: string | undefined;

/** The registry folder of this user (0700, owned by this user), or undefined when it cannot be trusted. */
function registry(): string | undefined {
  if (known && fs.existsSync(known)) return known;
  known = undefined;
  const uid = process.getuid?.() ?? 0;
  const base = fs.existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir();
  const dir = path.join(base, `arbor-stand-ins-${uid}`);
  try {
    fs.mkdirSync(dir, { mode: 0o700 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') return undefined;
  }
  try {
    const st = fs.lstatSync(dir);
    // Another user's folder (made first in a shared /tmp), or a link: not ours to trust.
    if (!st.isDirectory() || st.uid !== uid || (st.mode & 0o077) !== 0) return undefined;
  } catch {
    return undefined;
  }
  known = dir;
  return dir;
}

/** A stand-in's name in the registry: two 32-bit FNV-1a digests of its path (a collision only makes a folder read as a stand-in: still covered). */
function digest(standIn: string): string {
  let cached = digests.get(standIn);
  if (cached) return cached;
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ standIn.length;
  for (let i = 0; i < standIn.length; i++) {
    const c = standIn.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995) ^ (b >>> 15);
  }
  cached = `${(a >>> 0).toString(16).padStart(8, '0')}${(b >>> 0).toString(16).padStart(8, '0')}`;
  if (digests.size > 4096) digests.clear();
  digests.set(standIn, cached);
  return cached;
}
const digests = new Map<string, string>();
const ENTRY = /^([0-9a-f]{16})\.(\d+)$/;

/** The digests of stand-ins a live process other than this one stands on now (`standsOn` asks it). */
export function othersStandIns(): Set<string> {
  const out = new Set<string>();
  const dir = registry();
  if (!dir) return out;
  for (const n of readdir(dir)) {
    const m = ENTRY.exec(n);
    if (m && Number(m[2]) !== process.pid && alive(Number(m[2]))) out.add(m[1]);
  }
  return out;
}

/** Whether `standIn` is among `others` (`othersStandIns`). */
export const standsOn = (others: ReadonlySet<string>, standIn: string): boolean => others.size > 0 && others.has(digest(standIn));

/** Say that this process stands on each of `standIns` (before their folders are made); those it could say so for. */
export function register(standIns: readonly string[]): Promise<string[]> {
  const dir = registry();
  if (!dir || standIns.length === 0) return Promise.resolve([]);
  return queued(() => {
    const said: string[] = [];
    const say = (): void => {
      for (const s of standIns) {
        try {
          fs.closeSync(fs.openSync(path.join(dir, `${digest(s)}.${process.pid}`), 'w', 0o600));
          said.push(s);
        } catch {
          // not said: its folder is then left in place when this process is done with it
        }
      }
    };
    withFileLock(lockOf(dir), say, LOCK_WAIT_MS);
    return said;
  });
}

/**
 * This process no longer stands on each of `standIns` (each one `register` said): under the lock,
 * each one no other live process stands on is removed with `remove` first, then this process's
 * entry goes. The removals run at once (each `rmdir` frees the folder's block, which on a disk
 * mounted with `discard` waits for the device: 1.5–2 ms each here, one after another on the
 * command's path), and the lock is held until all have settled. Without the lock (2 s), the folders
 * are left in place and the entries stay until the next removal finds this process gone.
 */
export function unregister(standIns: readonly string[], remove: (standIn: string) => Promise<void>): Promise<void> {
  const dir = registry();
  if (!dir || standIns.length === 0) return Promise.resolve();
  return queued(async () => {
    await withFileLockAsync(
      lockOf(dir),
      async () => {
        const standing = new Set<string>();
        for (const n of readdir(dir)) {
          const m = ENTRY.exec(n);
          if (!m || Number(m[2]) === process.pid) continue;
          if (alive(Number(m[2]))) standing.add(m[1]);
          else unlink(path.join(dir, n)); // left by a process that died
        }
        await Promise.all(
          standIns.map((s) =>
            standing.has(digest(s))
              ? undefined
              : (async () => remove(s))().catch(() => {
                  // Not there, not empty (someone made it real) or a parent swapped for a link: leave it.
                }),
          ),
        );
        for (const s of standIns) unlink(path.join(dir, `${digest(s)}.${process.pid}`));
      },
      LOCK_WAIT_MS,
    );
  });
}

/**
 * This process's calls on the registry's lock, one at a time: `unregister` holds it across its
 * removals, and a `register` meanwhile would wait for it synchronously, blocking the loop that
 * ends them (`withFileLockAsync`).
 */
let tail: Promise<unknown> = Promise.resolve();
function queued<T>(op: () => T | Promise<T>): Promise<T> {
  const run = tail.then(op);
  tail = run.catch(() => undefined);
  return run;
}

function readdir(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}

function unlink(p: string): void {
  try {
    fs.unlinkSync(p);
  } catch {
    // gone already
  }
}

/** The registry's lock (`withFileLock`); a call that cannot have it within `LOCK_WAIT_MS` is skipped. */
const lockOf = (dir: string): string => path.join(dir, 'lock');
const LOCK_WAIT_MS = 2000;
