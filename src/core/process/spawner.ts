import { type ChildProcess, fork, spawn } from 'node:child_process';
import { EventEmitter, once } from 'node:events';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import type { FromSpawner, ToSpawner } from './spawner-wire';
import { killGroupAndStrays } from './strays';

// Starting a short-lived program as the leader of its own process group (decision 0095). On
// Linux, Node forks the whole host to start a program; a host of hundreds of megabytes (the
// extension host, the CLI with a big store) pays for copying its page tables, and then for a
// copy-on-write fault on each page it writes next — measured here, a plain turn right after a
// spawn took 15 ms instead of 6–9. So the host keeps one small Node, the spawner
// (`spawner-child.ts`), that starts the programs for it and relays their output and exit. Until
// the spawner is ready, after it is lost, and off Linux, programs start directly as before.
// Everything else about a program — its group signalled as a whole, its strays, its wait — stays
// where it was (`process/group.ts`, `tools/command-process.ts`).

/** What `runInGroup` starts. */
export interface GroupSpawn {
  file: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Written to the program's stdin, then closed; absent: stdin is closed from the start. */
  stdin?: Buffer;
  /** Written to a pipe on the program's fd 3, then closed. */
  fd3?: Buffer;
}

/**
 * A program leading its own group, as `runInGroup` watches it: Node's ChildProcess, or one the
 * spawner started, with the same events ('spawn' once its pid is known, 'error', 'exit', then
 * 'close' once its output has all been read).
 */
export interface GroupChild {
  readonly pid: number | undefined;
  readonly stdout: Readable;
  readonly stderr: Readable;
  on(event: 'spawn' | 'close', fn: () => void): this;
  on(event: 'error', fn: (err: Error) => void): this;
  on(event: 'exit', fn: (code: number | null, signal: NodeJS.Signals | null) => void): this;
  /** Set when the program was killed because the spawner that ran it was lost: why, in words for the user. */
  readonly lostReason?: string;
  /**
   * A program whose pid is not this host's (a command in a resident sandbox, decision 0103) is
   * stopped and watched through these instead of its group: `signal` ends it with everything it
   * started, `alive` says whether anything of it may still run.
   */
  signal?(sig: NodeJS.Signals): void;
  alive?(): boolean;
}

/** Why a program was killed under a lost spawner (said by `run_command`, hooks and git errors). */
export const SPAWNER_LOST =
  "Arbor's process spawner stopped while this ran, so it was killed with everything it started; nothing of it is left running, and it is safe to run it again";

/** Start `spec` as a group leader: through the spawner when it is ready, else directly. Throws as `spawn` does on arguments it refuses. */
export function spawnGroupLeader(spec: GroupSpawn): GroupChild {
  const s = current();
  return s?.ready ? s.spawn(spec) : spawnDirect(spec);
}

/** The program started by this process itself (Node forks the host). */
export function spawnDirect(spec: GroupSpawn): GroupChild {
  const child = spawn(spec.file, spec.args, {
    cwd: spec.cwd,
    env: spec.env,
    detached: true,
    stdio: [spec.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe', ...(spec.fd3 ? ['pipe' as const] : [])],
  });
  for (const [w, bytes] of [
    [child.stdin, spec.stdin],
    [child.stdio[3], spec.fd3],
  ] as const) {
    if (!w || !bytes || !('end' in w)) continue;
    // A program that exits before reading it (bubblewrap refusing its arguments) closes the pipe: its exit says why.
    w.on('error', () => undefined);
    w.end(bytes);
  }
  return child as ChildProcess & GroupChild;
}

/** A program the spawner started, seen from the host. */
class RelayedChild extends EventEmitter implements GroupChild {
  pid: number | undefined;
  lostReason: string | undefined;
  readonly stdout = new PassThrough();
  readonly stderr = new PassThrough();
  private exited = false;
  private closed = false;

  constructor(release: () => void) {
    super();
    // runInGroup gives up on output something left behind still holds: the spawner stops reading it too.
    const onDestroyed = () => {
      if (!this.closed) release();
    };
    this.stdout.once('close', onDestroyed);
    this.stderr.once('close', onDestroyed);
  }

  take(m: ChildMessage): void {
    (TAKE[m.op] as (c: RelayedChild, m: ChildMessage) => void)(this, m);
  }

  spawned(pid: number): void {
    this.pid = pid;
    this.emit('spawn');
  }

  data(fd: 1 | 2, data: Uint8Array): void {
    const s = fd === 1 ? this.stdout : this.stderr;
    if (!s.destroyed && !s.writableEnded) s.write(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
  }

  failed(message: string, code?: string): void {
    this.emit('error', Object.assign(new Error(message), code ? { code } : {}));
  }

  exit(code: number | null, signal: NodeJS.Signals | null): void {
    this.exited = true;
    this.emit('exit', code, signal);
  }

  /** The spawner is gone: a program it started is stopped (its group and what it started outside it killed) and reported so. */
  lost(): void {
    if (this.closed) return;
    if (this.pid !== undefined) {
      // (One that already exited is left to its watcher: what it left behind is runInGroup's linger.)
      if (!this.exited) {
        this.lostReason = SPAWNER_LOST;
        killGroupAndStrays(this.pid);
        this.exit(null, 'SIGKILL');
      }
    } else if (this.listenerCount('error') > 0) {
      // The spawner died between starting it and saying so: it may have run for an instant.
      this.failed(
        "Arbor's process spawner stopped as the program was being started, so it may have begun; check its effects before running it again",
        'ESPAWNER',
      );
    }
    void this.close();
  }

  /** 'close' once both output streams have delivered what they hold (as a ChildProcess's comes after its stdio). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const drained = [this.stdout, this.stderr].map(async (s) => {
      if (s.destroyed || s.readableEnded) return;
      s.end();
      // Read as it comes (runInGroup's way): 'close' after its last 'data'. Unread: what it holds stays readable.
      if (s.readableFlowing) await once(s, 'end').catch(() => undefined);
    });
    await Promise.all(drained);
    this.emit('close');
  }
}

type ChildMessage = Exclude<FromSpawner, { op: 'ready' }>;

/** What each message of the spawner does to the program it names (every kind handled: the compiler checks). */
const TAKE: { [K in ChildMessage['op']]: (c: RelayedChild, m: Extract<ChildMessage, { op: K }>) => void } = {
  spawned: (c, m) => c.spawned(m.pid),
  data: (c, m) => c.data(m.fd, m.data),
  error: (c, m) => c.failed(m.message, m.code),
  exit: (c, m) => c.exit(m.code, m.signal),
  close: (c) => void c.close(),
};

/** The spawner process and the programs it runs for this host. */
class Spawner {
  ready = false;
  private readonly proc: ChildProcess;
  private readonly live = new Map<number, RelayedChild>();
  private next = 1;

  /** Stopped on purpose (`stopSpawner`): its end is no loss. */
  private stopped = false;

  constructor(entry: string, onLost: (deliberate: boolean) => void) {
    this.proc = fork(entry, [], {
      // Nothing of the host's environment: each program gets the one it is given.
      env: process.versions.electron ? { ELECTRON_RUN_AS_NODE: '1' } : {},
      execArgv: [],
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
    });
    let gone = false;
    const lost = () => {
      if (gone) return;
      gone = true;
      this.ready = false;
      if (this.proc.exitCode === null && this.proc.signalCode === null) this.proc.kill('SIGKILL');
      for (const c of this.live.values()) c.lost();
      this.live.clear();
      onLost(this.stopped);
    };
    this.proc.on('message', (m: FromSpawner) => {
      if (m.op === 'ready') {
        this.ready = true;
        return;
      }
      const c = this.live.get(m.id);
      if (!c) return;
      if (m.op === 'close') this.forget(m.id);
      c.take(m);
    });
    this.proc.on('exit', lost);
    this.proc.on('error', lost);
    this.proc.on('disconnect', lost);
    this.idle();
  }

  spawn(spec: GroupSpawn): GroupChild {
    const id = this.next++;
    const child = new RelayedChild(() => this.send({ op: 'release', id }));
    this.live.set(id, child);
    if (this.live.size === 1) this.busy();
    const { file, args, cwd, env, stdin, fd3 } = spec;
    if (!this.send({ op: 'spawn', id, file, args, cwd, env: { ...env }, ...(stdin ? { stdin } : {}), ...(fd3 ? { fd3 } : {}) })) {
      // The channel closed under us: this one starts directly (the loss is being handled).
      this.forget(id);
      return spawnDirect(spec);
    }
    return child;
  }

  private send(m: ToSpawner): boolean {
    if (!this.proc.connected) return false;
    try {
      this.proc.send(m);
      return true;
    } catch {
      return false;
    }
  }

  private forget(id: number): void {
    this.live.delete(id);
    if (this.live.size === 0) this.idle();
  }

  /** With no program running, the spawner keeps nothing alive (a CLI exits when its work is done). */
  private idle(): void {
    this.proc.unref();
    this.proc.channel?.unref();
  }

  private busy(): void {
    this.proc.ref();
    this.proc.channel?.ref();
  }

  stop(): void {
    this.stopped = true;
    if (this.proc.connected) this.proc.disconnect();
  }

  get pid(): number | undefined {
    return this.proc.pid;
  }
}

/** Spawners lost past this, and this process starts its programs itself from then on (a spawner that cannot live here). */
const MAX_LOSSES = 3;
let spawner: Spawner | undefined;
let losses = 0;
let disabled = process.platform !== 'linux' || process.env.ARBOR_SPAWNER === 'off';

/** The spawner's entry: beside this file under tsc (out/…/process/) and in dist/ for the bundles. */
export function spawnerEntry(): string {
  return path.join(__dirname, 'spawner-child.js');
}

/** This process's spawner, started on first use (the programs asked for meanwhile start directly). */
function current(): Spawner | undefined {
  if (disabled) return undefined;
  if (!spawner) {
    const entry = spawnerEntry();
    if (!fs.existsSync(entry)) {
      disabled = true;
      return undefined;
    }
    try {
      spawner = new Spawner(entry, (deliberate) => {
        spawner = undefined;
        if (!deliberate && ++losses >= MAX_LOSSES) disabled = true;
      });
    } catch {
      disabled = true;
      return undefined;
    }
  }
  return spawner;
}

/** Start the spawner now, so that the first program already goes through it; resolves once it is ready (false: it will not be used). */
export async function warmSpawner(timeoutMs = 5000): Promise<boolean> {
  const s = current();
  for (const end = Date.now() + timeoutMs; s && !s.ready && spawner === s && Date.now() < end; ) await new Promise((r) => setTimeout(r, 5));
  return !!s?.ready && spawner === s;
}

/** The spawner's pid while one runs (a benchmark counts the CPU of the programs it reaped). */
export function spawnerPid(): number | undefined {
  return spawner?.pid;
}

/**
 * Stop this process's spawner on purpose (not counted as a loss); what it still runs is killed,
 * and the next program starts a new one. A host that exits needs nothing: the spawner leaves,
 * and stops what it ran, when its channel closes.
 */
export function stopSpawner(): void {
  spawner?.stop();
}
