import { type ChildProcess, spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import * as fs from 'node:fs';
import * as os from 'node:os';
import { PassThrough } from 'node:stream';
import type { GroupChild } from '../../process/spawner';
import { RESIDENT_ZYGOTE } from './bwrap-args';
import { writableOutside, writableRule } from './mount-check';
import { FrameDecoder, killRequest, runRequest, type ZygoteFrame } from './zygote-wire';

// One resident sandbox (decision 0103): a bubblewrap started once for a workspace state, with
// `arbor-zygote` in it, which starts each confined command in namespaces of the command's own.
// Its commands are `GroupChild`ren like any program `runInGroup` watches; they are stopped
// through the zygote (a command's PID namespace ends with its first process), never by pid:
// their pids are the sandbox's, not this host's.

/** Why a command was killed under a resident sandbox that was lost, in words for the user. */
export const RESIDENT_LOST =
  "Arbor's sandbox for this workspace stopped while this ran, so it was killed with everything it started; nothing of it is left running, and it is safe to run it again";

/** What one request to the zygote may hold (`run_request` and `MAX_FRAME` in native/zygote.c). */
const LIMITS = { argv: 4096, env: 65_536, shadows: 4096, bytes: 64 * 1024 * 1024 };

/** How long a new resident may take to say hello (bubblewrap's start, the zygote's probe command). */
const HELLO_MS = 10_000;

const SIGNAL_NAMES = new Map<number, NodeJS.Signals>(Object.entries(os.constants.signals).map(([name, n]) => [n, name as NodeJS.Signals]));

/** A command the zygote runs, seen from the host. */
class ResidentChild extends EventEmitter implements GroupChild {
  readonly pid = undefined;
  lostReason: string | undefined;
  readonly stdout = new PassThrough();
  readonly stderr = new PassThrough();
  private state: 'starting' | 'running' | 'ended' = 'starting';

  constructor(
    readonly id: number,
    private readonly stopper: (id: number) => void,
  ) {
    super();
  }

  /** Any stop signal ends the command's namespaces at once (its first process is the zygote's, and takes only SIGKILL). */
  signal(_sig: NodeJS.Signals): void {
    if (this.state !== 'ended') this.stopper(this.id);
  }

  alive(): boolean {
    return this.state !== 'ended';
  }

  take(f: ZygoteFrame): void {
    if (f.type === 'started') {
      this.state = 'running';
      this.emit('spawn');
    } else if (f.type === 'output') {
      const s = f.stream === 1 ? this.stdout : this.stderr;
      if (!s.destroyed && !s.writableEnded) s.write(f.data);
    } else if (f.type === 'failed') {
      this.state = 'ended';
      this.emit('error', new Error(`the sandbox could not start the command: ${f.message}`));
      this.end();
    } else if (f.type === 'ended') {
      this.finish(f.code, f.signal === null ? null : (SIGNAL_NAMES.get(f.signal) ?? 'SIGKILL'));
    }
  }

  /** The resident is gone: what it ran died with it. */
  lost(): void {
    if (this.state === 'ended') return;
    this.lostReason = RESIDENT_LOST;
    if (this.state === 'starting') {
      this.state = 'ended';
      this.emit('error', new Error(`${RESIDENT_LOST} (it may have begun)`));
      this.end();
      return;
    }
    this.finish(null, 'SIGKILL');
  }

  private finish(code: number | null, signal: NodeJS.Signals | null): void {
    this.state = 'ended';
    this.emit('exit', code, signal);
    this.end();
  }

  private end(): void {
    this.stdout.end();
    this.stderr.end();
    // 'close' after both streams have delivered what they hold, as a ChildProcess's comes after its stdio.
    let open = 2;
    const one = (): void => {
      if (--open === 0) this.emit('close');
    };
    for (const s of [this.stdout, this.stderr]) {
      if (s.readableEnded || s.destroyed) one();
      else {
        s.once('end', one);
        s.once('close', () => {
          if (!s.readableEnded) one();
        });
        s.resume();
      }
    }
  }
}

export interface ResidentSpec {
  /** bubblewrap, its arguments up to `--`, and the bytes of its fd 3 (the seccomp filter). */
  bwrap: string;
  args: readonly string[];
  fd3?: Buffer;
  /** The zygote binary and its arguments. */
  zygote: string;
  zygoteArgs: readonly string[];
  /** The roots its writable mounts must stay in (`mount-check.ts`): its mount table is checked once it said hello, before its first command. */
  checkRoots?: readonly string[];
}

/** A resident sandbox: `ready` says whether it can run commands (else why not); `run` starts one. */
export class Resident {
  readonly ready: Promise<string | undefined>;
  private readonly proc: ChildProcess;
  private readonly children = new Map<number, ResidentChild>();
  private readonly decoder = new FrameDecoder();
  private nextId = 1;
  private gone: string | undefined;
  private helloTimer: NodeJS.Timeout | undefined;
  /** The zygote's hello said it cannot make a command's namespaces here: every resident would say the same. */
  refused = false;
  /** Its mounts did not come out as planned (a folder swapped for a link while bubblewrap set them up): this one only. */
  raced = false;
  private settleReady!: (error: string | undefined) => void;
  /** Called once the resident has nothing running (to start its idle clock) and when it is gone. */
  onIdle: () => void = () => undefined;
  onGone: () => void = () => undefined;

  constructor(private readonly spec: ResidentSpec) {
    this.ready = new Promise((r) => {
      this.settleReady = r;
    });
    // The zygote at a path of the sandbox's own (its real path may be under /tmp, which the sandbox replaces).
    const zygote = ['--ro-bind', spec.zygote, RESIDENT_ZYGOTE, '--', RESIDENT_ZYGOTE];
    this.proc = spawn(spec.bwrap, [...spec.args, ...zygote, ...spec.zygoteArgs], {
      // Nothing of the host's environment but PATH, where a bubblewrap named without a folder is
      // found (as the probe found it: /usr/local/bin, a Nix profile); each command gets exactly its
      // own, in its request.
      env: process.env.PATH === undefined ? {} : { PATH: process.env.PATH },
      stdio: ['pipe', 'pipe', 'pipe', ...(spec.fd3 ? ['pipe' as const] : [])],
    });
    const fd3 = this.proc.stdio[3];
    if (spec.fd3 && fd3 && 'end' in fd3) {
      fd3.on('error', () => undefined);
      fd3.end(spec.fd3);
    }
    let stderr = '';
    this.proc.stderr?.on('data', (d: Buffer) => {
      if (stderr.length < 4096) stderr += d.toString('utf8');
    });
    this.proc.stdin?.on('error', () => undefined);
    this.proc.stdout?.on('data', (d: Buffer) => {
      let frames: ZygoteFrame[];
      try {
        frames = this.decoder.push(d);
      } catch (e) {
        this.kill(`it sent what it should not: ${(e as Error).message}`);
        return;
      }
      for (const f of frames) this.take(f);
    });
    this.proc.on('error', (e) => this.lose(`it could not start: ${e.message}`));
    // 'close', not 'exit': the frames it wrote before it ended are all read first (a command that finished is not reported lost).
    this.proc.on('close', (code, sig) => this.lose(`it ended (${sig ?? `exit code ${code}`})${stderr.trim() ? `: ${stderr.trim()}` : ''}`));
    // Until the zygote has said hello, someone awaits `ready`: keep this process alive for it, for a while.
    this.helloTimer = setTimeout(() => this.kill(`it said nothing within ${HELLO_MS / 1000} s of its start`), HELLO_MS);
    this.busy();
  }

  /** Commands running in it now. */
  get running(): number {
    return this.children.size;
  }

  get alive(): boolean {
    return this.gone === undefined;
  }

  /** Start `argv` in `cwd` with `env` in this sandbox, a stand-in over each of `shadows` (the zygote makes a missing folder). Throws when the resident is gone or the request is past what the zygote takes. */
  run(argv: readonly string[], cwd: string, env: NodeJS.ProcessEnv, shadows: readonly string[]): GroupChild {
    if (this.gone !== undefined) throw new Error(`the workspace's sandbox is gone: ${this.gone}`);
    const vars = Object.entries(env)
      .filter((e): e is [string, string] => e[1] !== undefined)
      .map(([k, v]) => `${k}=${v}`);
    // As spawn refuses them: a C string ends at its first NUL, so the command would not be the one asked for.
    for (const part of [cwd, ...argv, ...vars, ...shadows]) {
      if (part.includes('\0')) throw new TypeError('a command, its folder or its environment holds a NUL byte; remove it and run it again');
    }
    // The zygote refuses a request past these by exiting, which would end every command it runs.
    if (
      argv.length === 0 ||
      argv.length > LIMITS.argv ||
      vars.length > LIMITS.env ||
      shadows.length > LIMITS.shadows ||
      [cwd, ...argv, ...vars, ...shadows].some((part) => Buffer.byteLength(part) > LIMITS.bytes)
    ) {
      throw new RangeError('a command, its folder or its environment is empty or too large for the sandbox; make it smaller and run it again');
    }
    const id = this.nextId++;
    const request = runRequest(id, cwd, argv, vars, shadows);
    const child = new ResidentChild(id, (i) => this.write(killRequest(i)));
    this.children.set(id, child);
    this.busy();
    this.write(request);
    return child;
  }

  /** Stop it: what it runs is killed (the zygote, at the end of its stdin, kills every command and exits). */
  close(): void {
    if (this.gone !== undefined) return;
    this.proc.stdin?.end();
    // bubblewrap's pid 1 ends the sandbox when the zygote exits; SIGKILL in case it does not.
    setTimeout(() => this.kill('it was closed'), 2000).unref();
  }

  private kill(why: string): void {
    if (this.proc.exitCode === null && this.proc.signalCode === null) this.proc.kill('SIGKILL');
    this.lose(why);
  }

  private write(b: Buffer): void {
    if (this.gone === undefined) this.proc.stdin?.write(b);
  }

  private take(f: ZygoteFrame): void {
    if (f.type === 'hello') {
      clearTimeout(this.helloTimer);
      this.refused = f.error !== '';
      const table = f.error ? {} : this.checkMounts();
      this.raced = table.outside !== undefined;
      const error = f.error || table.outside || table.unreadable;
      this.settleReady(error || undefined);
      if (error) this.kill(error);
      else if (this.children.size === 0) this.idle();
      return;
    }
    const child = this.children.get(f.id);
    if (!child) return;
    child.take(f);
    if (f.type === 'failed' || f.type === 'ended') {
      this.children.delete(f.id);
      if (this.children.size === 0) this.idle();
    }
  }

  /**
   * Its mount table against the rule (`mount-check.ts`), read before any command ran: `outside`
   * when a writable mount reaches outside the workspace (raced), `unreadable` when the table could
   * not be read here (this resident fails as any that cannot start; commands go to a bubblewrap of
   * their own, which checks its table itself); neither when it holds.
   */
  private checkMounts(): { outside?: string; unreadable?: string } {
    if (!this.spec.checkRoots) return {};
    const pid = this.proc.pid;
    let table: string;
    try {
      // bubblewrap's first child is the sandbox's pid 1, in the sandbox's mount namespace.
      const inside = Number(fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(' ')[0]);
      if (!inside || fs.readlinkSync(`/proc/${inside}/ns/mnt`) === fs.readlinkSync('/proc/self/ns/mnt'))
        return { unreadable: 'its mount table could not be found' };
      table = fs.readFileSync(`/proc/${inside}/mountinfo`, 'utf8');
    } catch (e) {
      return { unreadable: `its mount table could not be read: ${(e as Error).message}` };
    }
    // The rule is made here, once a resident starts, not for every command that leases one.
    const outside = writableOutside(table, writableRule(this.spec.checkRoots, this.spec.args));
    return outside
      ? { outside: `its mounts did not come out as planned: ${outside} (a folder of the workspace was swapped for a link while the sandbox was set up)` }
      : {};
  }

  private lose(why: string): void {
    if (this.gone !== undefined) return;
    this.gone = why;
    clearTimeout(this.helloTimer);
    this.settleReady(why);
    for (const c of this.children.values()) c.lost();
    this.children.clear();
    this.onGone();
  }

  /** While commands run, the resident keeps this process alive; idle, it does not (a CLI exits when its work is done). */
  private busy(): void {
    this.proc.ref();
    for (const s of [this.proc.stdout, this.proc.stderr]) (s as unknown as { ref?: () => void } | null)?.ref?.();
  }

  private idle(): void {
    this.proc.unref();
    for (const s of [this.proc.stdout, this.proc.stderr, this.proc.stdin]) (s as unknown as { unref?: () => void } | null)?.unref?.();
    if (this.gone === undefined) this.onIdle();
  }
}
