import { type ChildProcess, fork, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import type { Socket } from 'node:net';
import * as path from 'node:path';
import { signalGroup, waitGroupGone } from '../process/group';
import { checkFromChild, EXIT_STALLED, type FromChild, type ToChild } from './bridge';
import { guardChannel } from './channel-guard';
import { type Confinement, confinedArgv } from './confine';

/** How the script process is bounded (decision 0027). */
export interface IsolateLimits {
  /** V8 heap of the script process (`--max-old-space-size`). */
  heapMb: number;
  /** Resident memory the host lets the process reach (ArrayBuffers are outside the heap); Linux only, polled. */
  rssMb: number;
}

export const DEFAULT_ISOLATE: IsolateLimits = { heapMb: 256, rssMb: 768 };

/** Why the process ended without a result. */
export type ExitCause = 'oom' | 'stalled' | 'exited' | 'killed';

/** Path of the child entry: beside this file in out/ (tsc) and in dist/ (esbuild entry of its own). */
export function childScriptPath(): string {
  return path.join(__dirname, 'workflow-child.js');
}

/** The files the child reads: its entry, and under tsc the prelude it requires (esbuild inlines it). */
export function childFiles(entry = childScriptPath()): string[] {
  const prelude = path.join(path.dirname(entry), 'prelude.js');
  return fs.existsSync(prelude) ? [fs.realpathSync(entry), fs.realpathSync(prelude)] : [fs.realpathSync(entry)];
}

/**
 * The permission flags of this Node: `--permission` from 22, `--experimental-permission`
 * on 20–21; the process may read its own files and nothing else, and start no process
 * (one worker: its orphan watchdog). An engine without the model (or whose child refuses the flag) runs without it.
 */
export function permissionFlags(files: readonly string[], version = process.versions.node): string[] {
  const major = Number(version.split('.')[0]);
  const reads = files.map((f) => `--allow-fs-read=${f}`);
  // --allow-worker: the orphan watchdog thread of workflow-child.ts (it needs no file).
  if (major >= 22) return ['--permission', ...reads, '--allow-worker'];
  if (major >= 20) return ['--experimental-permission', ...reads, '--allow-worker'];
  return [];
}

/**
 * Starts `node <execArgv> <entry>` with an IPC channel: inside bubblewrap when confined
 * (`confine.ts`), else as a plain fork. The environment is empty either way (under Electron
 * only what makes it run as Node). Either way it leads a process group of its own, stopped as
 * a whole like every program Arbor starts (`process/group.ts`).
 */
export function startProcess(entry: string, execArgv: readonly string[], confinement: Confinement): ChildProcess {
  const env: NodeJS.ProcessEnv = process.versions.electron ? { ELECTRON_RUN_AS_NODE: '1' } : {};
  const stdio: ['ignore', 'ignore', 'pipe', 'ipc'] = ['ignore', 'ignore', 'pipe', 'ipc'];
  const common = { env, stdio, serialization: 'json' as const, detached: true };
  if (confinement.kind === 'none') return fork(entry, [], { ...common, execArgv: [...execArgv] });
  return spawn(confinement.bwrap, confinedArgv(process.execPath, execArgv, entry, childFiles(entry)), common);
}

/** How long `ended` waits, after the leader's exit, for the rest of its group to go. */
const GROUP_GONE_MS = 2000;

/** Most processes the memory watchdog walks under one script process; a tree past it reads as over any limit. */
export const MAX_TREE_PROCESSES = 4096;

/**
 * Resident memory of a process and everything under it (bubblewrap's own and its init are a few
 * MB), in kB. Every descendant counts, however deep and from whichever thread it was started: a
 * script past Node's permission flags (or run without them) can start processes, and a chain of
 * them held 888 MB while a walk four levels deep read 245. More than `MAX_TREE_PROCESSES` is Infinity.
 */
export function treeRssKb(pid: number): number {
  let kb = 0;
  let seen = 0;
  const todo = [pid];
  while (todo.length > 0) {
    const p = todo.pop() as number;
    if (++seen > MAX_TREE_PROCESSES) return Number.POSITIVE_INFINITY;
    try {
      kb += Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${p}/status`, 'utf8'))?.[1] ?? 0);
    } catch {
      continue; // gone
    }
    let tasks: string[] = [];
    try {
      tasks = fs.readdirSync(`/proc/${p}/task`);
    } catch {
      continue;
    }
    for (const t of tasks) {
      try {
        for (const k of fs.readFileSync(`/proc/${p}/task/${t}/children`, 'utf8').trim().split(/\s+/)) if (k) todo.push(Number(k));
      } catch {
        // no children file (an old kernel), or the thread ended: what is known counts
      }
    }
  }
  return kb;
}

/** What a run hears from its script process (the `ready` is the Isolate's own). */
export interface IsolateListener {
  onMessage(m: FromChild): void;
  onBadMessage(): void;
}

/** One script process: messages in and out, and one `ended` promise whatever happens. */
export class Isolate {
  /** Script processes alive in this host (leak checks: back to zero after every run, spares apart). */
  static alive = 0;
  /** Armed memory watchdogs (leak checks). */
  static watchdogs = 0;
  private readonly proc: ChildProcess;
  private watchdog?: NodeJS.Timeout;
  private listener?: IsolateListener;
  private stderr = '';
  private cause: ExitCause | undefined;
  private exited = false;
  readonly ended: Promise<{ cause: ExitCause; detail: string }>;
  /** Resolves when the child said it is ready (its flags were accepted). */
  readonly ready: Promise<boolean>;

  /**
   * Starts the process. With a listener it is a run's from the start; without one it is a spare
   * (`spare.ts`): it starts and says `ready`, and anything else it says before `attach` ends it.
   */
  constructor(
    listener: IsolateListener | undefined,
    readonly limits: IsolateLimits = DEFAULT_ISOLATE,
    readonly permission = true,
    readonly confinement: Confinement = { kind: 'none', reason: 'not asked for' },
    /** The program the process runs (tests: a raw script standing for one that escaped its context). */
    entry = childScriptPath(),
  ) {
    // The script never sees this process's environment (API keys): only what Electron needs to run as Node.
    this.proc = startProcess(entry, [`--max-old-space-size=${limits.heapMb}`, ...(permission ? permissionFlags(childFiles(entry)) : [])], confinement);
    Isolate.alive++;
    // A frame that is not JSON, a line without end or a handle ends the process, never the host (channel-guard.ts).
    guardChannel(this.proc, () => {
      this.listener?.onBadMessage();
      this.kill('exited');
    });
    this.proc.stderr?.on('data', (d: Buffer) => {
      this.stderr = (this.stderr + d.toString('utf8')).slice(-2000);
    });
    let readyResolve!: (ok: boolean) => void;
    this.ready = new Promise((r) => (readyResolve = r));
    this.proc.on('message', (raw) => {
      const m = checkFromChild(raw);
      if (m?.op === 'ready') return readyResolve(true);
      // A spare speaks only to say it is ready: nothing has run in it, so anything else is broken.
      if (!this.listener) return this.kill('exited');
      if (!m) return this.listener.onBadMessage();
      this.listener.onMessage(m);
    });
    if (listener) this.attach(listener);
    else this.hold(false); // a spare is a cache: it never keeps the host alive (a CLI, a test runner)
    this.ended = new Promise((resolve) => {
      const done = async (code: number | null, signal: NodeJS.Signals | null, failed?: string) => {
        if (this.exited) return;
        this.exited = true;
        // Ended means nothing of the script runs any more: the leader, and whatever is left in its group.
        if (!(await waitGroupGone(this.proc.pid, GROUP_GONE_MS))) signalGroup(this.proc.pid, 'SIGKILL');
        Isolate.alive--;
        if (this.watchdog) {
          clearInterval(this.watchdog);
          Isolate.watchdogs--;
        }
        readyResolve(false);
        const cause: ExitCause =
          this.cause ??
          (code === EXIT_STALLED
            ? 'stalled'
            : signal === 'SIGABRT' || code === 134 || /heap out of memory|Allocation failed/i.test(this.stderr)
              ? 'oom'
              : 'exited');
        resolve({ cause, detail: failed ?? (code !== null ? `exit code ${code}` : `signal ${signal}`) });
      };
      this.proc.once('exit', (code, signal) => void done(code, signal));
      // A program that could not be started (bubblewrap gone since it was probed) has no exit to wait for.
      this.proc.once('error', (err) => {
        if (this.proc.pid === undefined) {
          this.stderr = `${this.stderr}\ncould not start ${confinement.kind === 'bubblewrap' ? confinement.bwrap : 'node'}: ${err.message}`.slice(-2000);
          void done(null, null, err.message);
        } else this.kill('exited');
      });
    });
  }

  /** A spare becomes a run's: its messages go to `listener`, and its memory is watched from now on. */
  attach(listener: IsolateListener): void {
    if (this.listener) throw new Error('a script process serves one run');
    this.listener = listener;
    this.hold(true);
    if (process.platform === 'linux' && !this.exited) {
      this.watchdog = setInterval(() => this.checkRss(this.limits.rssMb), 100);
      Isolate.watchdogs++;
    }
  }

  /** Whether the process, its IPC channel and its stderr keep this host's event loop alive (a run's do; a spare's do not). */
  private hold(on: boolean): void {
    // stderr is a pipe socket (net.Socket) at run time, typed as a plain Readable.
    const handles = [this.proc, this.proc.channel, this.proc.stderr as unknown as Partial<Socket> | null];
    for (const h of handles) (on ? h?.ref : h?.unref)?.call(h as never);
  }

  /** Its leader has exited (or was never started): of no use to a run. */
  get gone(): boolean {
    return this.exited || this.proc.exitCode !== null || this.proc.signalCode !== null;
  }

  /** The last line the process wrote to stderr (why bubblewrap or Node refused to start). */
  get stderrTail(): string {
    return this.stderr.trim().split('\n').pop()?.slice(0, 300) ?? '';
  }

  get pid(): number | undefined {
    return this.proc.pid;
  }

  send(m: ToChild): void {
    if (this.proc.connected) this.proc.send(m, (err) => err && this.kill('exited'));
  }

  /** Ends the process and its group at once (SIGKILL also stops a synchronous `while(true){}`). */
  kill(cause: ExitCause = 'killed'): void {
    this.cause ??= cause;
    if (this.proc.exitCode === null && this.proc.signalCode === null && !signalGroup(this.proc.pid, 'SIGKILL')) this.proc.kill('SIGKILL');
  }

  private checkRss(limitMb: number): void {
    if (this.exited) return;
    // Confined, the pid held is bubblewrap's: the script's Node is two levels down.
    if (this.proc.pid !== undefined && treeRssKb(this.proc.pid) > limitMb * 1024) this.kill('oom');
  }
}
