import * as fs from 'node:fs';
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
}

export interface ResidentPoolOptions {
  /** The zygote binary (`arbor-zygote`). */
  zygote: string;
  /** How long a resident with nothing to do lives on (default 30 s). */
  idleMs?: number;
  /** Residents kept at most; past it the longest idle ones stop (default 8). */
  max?: number;
}

export class ResidentPool {
  private readonly entries = new Map<string, Entry>();
  /** Why residents cannot run here (the first one's hello said so): commands go back to a bubblewrap each. */
  private broken: string | undefined;

  constructor(private readonly options: ResidentPoolOptions) {}

  /** Why no resident is used here, once one failed to start; undefined while they work. */
  get unavailable(): string | undefined {
    return this.broken;
  }

  /** A resident for the state `args` describe, started if there is none; undefined when residents cannot run here. */
  async lease(spec: Omit<ResidentSpec, 'zygote'>): Promise<Lease | undefined> {
    if (this.broken !== undefined) return undefined;
    const key = stateKey(spec.args);
    let e = this.entries.get(key);
    if (!e || !e.resident.alive) {
      const resident = new Resident({ ...spec, zygote: this.options.zygote });
      const entry: Entry = { key, resident, leases: 0 };
      resident.onIdle = () => this.idle(entry);
      resident.onGone = () => this.drop(entry);
      this.entries.set(key, entry);
      e = entry;
    }
    const entry = e;
    entry.leases++;
    clearTimeout(entry.timer);
    this.trim();
    const error = await entry.resident.ready;
    if (error !== undefined) {
      entry.leases--;
      // Every resident would fail the same way here (a kernel or policy that refuses the namespaces).
      if (this.broken === undefined) this.broken = error;
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
  }

  private trim(): void {
    const max = this.options.max ?? 8;
    for (const e of this.entries.values()) {
      if (this.entries.size <= max) return;
      if (e.leases === 0 && e.resident.running === 0) this.close(e);
    }
  }
}

/** The state a bubblewrap line fixes: the line, and the device and inode of every folder or file it binds. */
export function stateKey(args: readonly string[]): string {
  const ids: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] !== '--bind' && args[i] !== '--ro-bind') continue;
    const source = args[i + 1];
    i += 2;
    if (source === '/' || source === '/dev/null') continue;
    try {
      const st = fs.statSync(source);
      ids.push(`${st.dev}:${st.ino}`);
    } catch {
      ids.push('missing');
    }
  }
  return `${args.join('\0')}\n${ids.join(',')}`;
}
