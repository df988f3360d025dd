import * as fs from 'node:fs';
import * as os from 'node:os';
import { processRuns } from '../process/group';
import { bootId, namespaceHasProcess } from '../process/proc-stat';
import { isTokenName, tokenState } from './lock-token';

// Who holds a store lock, and whether that holder may still run (decision 0098). A pid means
// something only in its PID namespace, in one boot of one machine: a process in a container
// or sandbox (`unshare --pid`, bwrap) sees another namespace's pids as dead, or as unrelated
// processes. So a lock records the namespace, the boot and the host beside the pid: a lock from
// another host holds, one from an earlier boot here is stale, and one from a PID namespace this
// process can see running (a container or sandbox below ours) holds. Above all, a lock of this
// boot names its holder's liveness token (lock-token.ts), a socket whose listener the kernel closes
// when the holder dies: it answers from any namespace. Without one (an older Arbor, no sockets
// here), a namespace this process cannot see (gone, or above or beside ours) is judged by its pid.

/** What a lock file says about its holder. An old lock file is a bare pid (nothing else known). */
export interface LockOwner {
  pid: number;
  /** Inode of the holder's /proc/self/ns/pid (Linux). */
  pidns?: number;
  /** /proc/sys/kernel/random/boot_id of the holder's kernel (Linux). */
  boot?: string;
  host?: string;
  /** The holder's liveness token: a socket's name in the lock's folder (lock-token.ts). */
  live?: string;
}

function readOr<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    return undefined; // not Linux, or /proc not mounted: unknown
  }
}

let self: LockOwner | undefined;

/** This process, as its lock records it. */
export function thisOwner(): LockOwner {
  self ??= {
    pid: process.pid,
    pidns: readOr(() => fs.statSync('/proc/self/ns/pid').ino),
    boot: bootId() || undefined,
    host: readOr(() => os.hostname()),
  };
  return { ...self, pid: process.pid };
}

/** The lock file's text for `owner`: one JSON line, whole. */
export function ownerText(owner: LockOwner): string {
  return JSON.stringify(owner);
}

/** The holder a lock's text names, or undefined when unreadable (empty, torn, foreign). */
export function parseOwner(text: string): LockOwner | undefined {
  if (/^\d+$/.test(text)) {
    const pid = Number(text);
    return Number.isSafeInteger(pid) ? { pid } : undefined;
  }
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null) return undefined;
  const o = v as Record<string, unknown>;
  if (!Number.isSafeInteger(o.pid) || (o.pid as number) <= 0) return undefined;
  return {
    pid: o.pid as number,
    ...(Number.isSafeInteger(o.pidns) ? { pidns: o.pidns as number } : {}),
    ...(typeof o.boot === 'string' && o.boot !== '' ? { boot: o.boot } : {}),
    ...(typeof o.host === 'string' ? { host: o.host } : {}),
    ...(typeof o.live === 'string' && isTokenName(o.live) ? { live: o.live } : {}),
  };
}

/** A holder that may still run, and whether this process could check it (same namespace, same boot). */
export type Holder = { owner: LockOwner; checked: true } | { owner: LockOwner; checked: false; where: string };

/**
 * Whom a lock's text names, if that holder may still run; undefined when the lock is stale:
 * unreadable, its token refused, its pid dead here, our own pid (a leftover), or written in an
 * earlier boot of this host. A token that answers holds, from any namespace. A holder on another
 * host cannot be checked, so it holds; so does one in a PID namespace this process can see
 * running (below ours). A namespace it cannot see is judged by its pid.
 */
export async function liveHolder(text: string, dir: string): Promise<Holder | undefined> {
  const owner = parseOwner(text);
  if (!owner) return undefined;
  const me = thisOwner();
  if (owner.live !== undefined && owner.boot !== undefined && owner.boot === me.boot) {
    // This kernel's lock with a token: its listener answers for the holder from any PID namespace.
    const state = await tokenState(dir, owner.live);
    if (state === 'alive') return { owner, checked: true };
    if (state === 'gone') return undefined;
  }
  const sameHost = owner.host === undefined || owner.host === me.host;
  if (owner.boot !== undefined && me.boot !== undefined && owner.boot !== me.boot) {
    // Another kernel: this host rebooted since (stale), or another machine sharing the folder.
    return sameHost ? undefined : { owner, checked: false, where: `on host ${owner.host}` };
  }
  const sameBoot = owner.boot !== undefined && owner.boot === me.boot;
  if (!sameBoot && !sameHost) return { owner, checked: false, where: `on host ${owner.host}` };
  if (owner.pidns !== undefined && owner.pidns !== me.pidns && namespaceHasProcess(owner.pidns))
    // A namespace this process can see (one below ours: a container or sandbox it started) with a
    // process still in it: its pids mean nothing here, so it holds.
    return {
      owner,
      checked: false,
      where: `in another PID namespace (pid:[${owner.pidns}]${owner.host ? ` on host ${owner.host}` : ''}: a container or sandbox)`,
    };
  // Our namespace, or one this process cannot see: gone (a sandboxed `arbor acp` killed with its
  // namespace, whose successor runs in a new one), or above or beside ours. Only its pid can be
  // asked, here — the limit decision 0098 records.
  if (owner.pid === process.pid) return undefined; // our own pid, yet not our lock: a leftover
  return processRuns(owner.pid) ? { owner, checked: true } : undefined;
}
