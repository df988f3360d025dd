import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { RESIDENT_PROC } from './bwrap-args';
import { Resident, type ResidentSpec } from './resident';

// The resident sandboxes of this process, one per workspace state (decision 0103). A state is
// everything a sandbox fixes at its start: its bubblewrap line (the mode, the roots, every
// protected mount, the hidden sockets, the network) and the identity of each folder it binds
// (device and inode: a folder deleted and made again under the same name is another state, or
// the sandbox would show the deleted one). A command whose state has no resident starts one;
// a resident with nothing to do for `idleMs` stops. Stand-ins for missing protected folders are
// not part of a state: each command mounts its own (`shadows.ts`), so they stand on the host only
// while a command runs, as with a bubblewrap per command.

/** A resident lent to one command: `release` once the command has ended. */
export interface Lease {
  resident: Resident;
  release(): void;
}

interface Entry {
  key: string;
  resident: Resident;
  leases: number;
  timer?: NodeJS.Timeout;
  /** Closes the inodes held for the resident's life. */
  unhold: () => void;
  /** Its failure to start is counted (`ResidentPool.failures`). */
  counted?: boolean;
}

export interface ResidentPoolOptions {
  /** The zygote binary (`arbor-zygote`). */
  zygote: string;
  /** How long a resident with nothing to do lives on (default 30 s). */
  idleMs?: number;
  /** Residents kept at most; past it the idle ones used longest ago stop (default 8). */
  max?: number;
}

/** Paths a resident may hold open (with at most `max` residents, 8 × this many descriptors). */
export const MAX_HELD = 512;

/** Residents that failed to start (other than by a hello saying why) before the pool stops trying. */
const MAX_FAILURES = 3;

/** `SANDBOX_RACE`: a sandbox's mounts did not come out as planned; nothing ran in it. */
export class SandboxRaceError extends Error {
  readonly code = 'SANDBOX_RACE';
  constructor(why: string) {
    super(
      `the workspace's sandbox was refused: ${why}. Nothing ran. Something running in the workspace is replacing its folders with links: stop it, then run the command again.`,
    );
  }
}

/** Commands a resident runs at once, at most (`MAX_CMDS` in native/zygote.c). */
export const MAX_COMMANDS = 256;

export class ResidentPool {
  private readonly entries = new Map<string, Entry>();
  /**
   * By bubblewrap binary, why residents cannot run with it (a hello said so, or three failed to
   * start): its commands go back to a bubblewrap each. Per binary, so that one that cannot start
   * (a broken install, a wrong setting) does not end residents for the working one.
   */
  private readonly broken = new Map<string, string>();
  /** Residents that failed to start for another reason (killed, a fork refused for a moment). */
  private readonly failures = new Map<string, number>();

  constructor(private readonly options: ResidentPoolOptions) {}

  /** The zygote binary's real path (undefined when it cannot be resolved): never one a command can write (`CommandSandbox`). */
  get zygote(): string | undefined {
    if (this.zygoteReal === null) {
      try {
        this.zygoteReal = fs.realpathSync(this.options.zygote);
      } catch {
        this.zygoteReal = undefined;
      }
    }
    return this.zygoteReal;
  }
  private zygoteReal: string | undefined | null = null;

  /** Why residents are not used (with the first bubblewrap they failed with); undefined while they work. */
  get unavailable(): string | undefined {
    return this.broken.values().next().value;
  }

  /** A resident for the state `args` describe, started if there is none; undefined when residents cannot run here. */
  async lease(spec: Omit<ResidentSpec, 'zygote'>): Promise<Lease | undefined> {
    if (this.broken.has(spec.bwrap)) return undefined;
    // Each mounted path is held open while its resident lives: a workspace with more gets a bubblewrap per command.
    const paths = mountedPaths(spec.args);
    if (paths.length > MAX_HELD) return undefined;
    // The bubblewrap binary too: two sandboxes set up with different ones never share a resident.
    const key = `${spec.bwrap}\n${stateKey(spec.args, paths)}`;
    let e = this.entries.get(key);
    if (!e?.resident.alive) {
      // Without every inode held, a folder made again could take a number of the key: no resident then.
      const unhold = holdInodes(paths);
      if (!unhold) return undefined;
      const resident = new Resident({ ...spec, zygote: this.options.zygote });
      const entry: Entry = { key, resident, leases: 0, unhold };
      resident.onIdle = () => this.idle(entry);
      resident.onGone = () => this.drop(entry);
      e = entry;
    }
    // The map's order is the order of use: `trim` closes the idle one used longest ago.
    this.entries.delete(key);
    this.entries.set(key, e);
    const entry = e;
    // A lease lasts from before its command starts until after it ends: past what the zygote runs at once, a bubblewrap of its own.
    if (entry.leases >= MAX_COMMANDS) return undefined;
    entry.leases++;
    clearTimeout(entry.timer);
    this.trim();
    const error = await entry.resident.ready;
    if (error !== undefined) {
      entry.leases--;
      // Its mounts were raced (a folder swapped for a link as bubblewrap bound it): not a fault of
      // residents here, and not a reason to run the command in a bubblewrap of its own, where the
      // same race would be checked again; the command is refused.
      if (entry.resident.raced) throw new SandboxRaceError(error);
      // A hello that says the namespaces cannot be made is what every resident here would say (a
      // kernel or policy that refuses them); anything else may pass, until three residents failed
      // (counted once each, however many commands waited on one).
      if (entry.counted) return undefined;
      entry.counted = true;
      const failures = (this.failures.get(spec.bwrap) ?? 0) + 1;
      this.failures.set(spec.bwrap, failures);
      if (!this.broken.has(spec.bwrap) && (entry.resident.refused || failures >= MAX_FAILURES)) this.broken.set(spec.bwrap, error);
      return undefined;
    }
    let released = false;
    return {
      resident: entry.resident,
      release: () => {
        if (released) return;
        released = true;
        entry.leases--;
        this.idle(entry);
      },
    };
  }

  /** Stop every resident (what they run is killed). */
  closeAll(): void {
    for (const e of [...this.entries.values()]) this.close(e);
  }

  private idle(e: Entry): void {
    if (e.leases > 0 || e.resident.running > 0) return;
    clearTimeout(e.timer);
    e.timer = setTimeout(() => this.close(e), this.options.idleMs ?? 30_000);
    e.timer.unref();
  }

  private close(e: Entry): void {
    clearTimeout(e.timer);
    e.resident.close();
    this.drop(e);
  }

  private drop(e: Entry): void {
    if (this.entries.get(e.key) === e) this.entries.delete(e.key);
    e.unhold();
  }

  private trim(): void {
    const max = this.options.max ?? 8;
    for (const e of this.entries.values()) {
      if (this.entries.size <= max) return;
      if (e.leases === 0 && e.resident.running === 0) this.close(e);
    }
  }
}

/** Options of bubblewrap that mount on a path (their path operands: source and target, or the target). */
const MOUNTS: Record<string, number> = { '--bind': 2, '--ro-bind': 2, '--tmpfs': 1, '--remount-ro': 1, '--dev': 1, '--proc': 1 };
/** Paths bubblewrap makes its own (a new tmpfs, /dev, /proc) or binds from a device node: nothing on the host to tell apart. */
const OWN = new Set(['/', '/dev', '/dev/null', '/tmp', '/proc', RESIDENT_PROC]);

/** Every host path a bubblewrap line mounts from or onto, once each. */
export function mountedPaths(args: readonly string[]): string[] {
  const out = new Set<string>();
  for (let i = 0; i < args.length; i++) {
    const n = MOUNTS[args[i]];
    if (n === undefined) continue;
    for (let k = 1; k <= n; k++) if (!OWN.has(args[i + k])) out.add(args[i + k]);
    i += n;
  }
  return [...out];
}

/**
 * The state a bubblewrap line fixes: the line, the device and inode of every path it mounts
 * from or onto, and the host's mounts. A mount on a folder deleted on the host is gone from the
 * sandbox too, so a folder made again at that path must read as another state: the pool holds
 * each path of a live resident open (`holdInodes`), so its inode number cannot be handed to a new
 * folder meanwhile. And a mount the host makes later under a shared mount (all of them, on a
 * systemd machine: a USB drive, sshfs) reaches a live resident with its own flags, writable,
 * where bubblewrap's `--ro-bind / /` made every mount there at its start read-only: a resident
 * serves only commands that start under the host's mounts it started with.
 */
export function stateKey(args: readonly string[], paths: readonly string[] = mountedPaths(args)): string {
  const ids: string[] = [];
  for (const p of paths) {
    const st = fs.statSync(p, { throwIfNoEntry: false });
    ids.push(st ? `${st.dev}:${st.ino}` : '-');
  }
  return `${args.join('\0')}\n${ids.join(',')}\n${hostMounts()}`;
}

/** A digest of this process's mount table (`/proc/self/mountinfo`: a few kilobytes, read in tens of microseconds). */
function hostMounts(): string {
  try {
    return createHash('sha256').update(fs.readFileSync('/proc/self/mountinfo')).digest('base64');
  } catch {
    return '?';
  }
}

/** O_PATH (Linux, the same on x86_64 and aarch64): a reference to the inode that reads nothing and blocks on nothing (a socket, a FIFO). */
const O_PATH = 0o10000000;

/**
 * Hold each path's inode open (its number stays taken while the resident lives); the result
 * closes them. Undefined when one could not be held for another reason than its absence or
 * being a link (out of descriptors, say): everything held so far is closed again.
 */
export function holdInodes(paths: readonly string[]): (() => void) | undefined {
  const fds: number[] = [];
  for (const p of paths) {
    try {
      fds.push(fs.openSync(p, O_PATH | fs.constants.O_NOFOLLOW));
    } catch (e) {
      // Gone already, or a link (real paths are mounted, and bubblewrap follows a link anyway): its stat in the key says so.
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ELOOP' || code === 'ENOTDIR') continue;
      for (const fd of fds) fs.closeSync(fd);
      return undefined;
    }
  }
  return () => {
    for (const fd of fds.splice(0)) fs.closeSync(fd);
  };
}
