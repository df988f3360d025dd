import { type ChildProcess, spawn } from 'node:child_process';
import * as os from 'node:os';
import { withBareExplicit } from '../process/git-safe-env';
import { groupAlive, sendSignal, signalGroup, waitGroupGone } from '../process/group';
import { hostLaunch, hostProgram } from '../process/host-program';
import { trackGroup, untrackGroup } from '../process/live-groups';
import { type GroupIdentity, groupIdentity, liveMembers } from '../process/proc-stat';
import type { NamespaceMounts } from './namespace-mounts';
import { type NamespaceInit, namespaceArgs, namespaceEnded, namespaceInit } from './pid-namespace';

/**
 * A remote program's process, done the same way for every provider (decision 0036): its own
 * process group (`process/group.ts`), and its own PID namespace where bubblewrap works (`pid-namespace.ts`); stdout
 * read as lines with a length cap; a bounded stderr tail; an idle timeout; a stop that takes a
 * graceful step, then SIGTERM to the group, then SIGKILL after a grace period, and returns only
 * once the group is gone; an environment built from an allow-list, so no secret of Arbor's (its
 * model key) reaches another vendor's program.
 */
export interface ProcessSpec {
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  /** No line (stdout or stderr) for this long: the program is stopped as hung. Default 300 s. */
  idleTimeoutMs?: number;
  /** A longer stdout line is dropped (reported as too long), never buffered whole. Default 8 MiB. */
  maxLineBytes?: number;
  /** How much of stderr is kept for error messages. Default 20 KiB. */
  stderrTailBytes?: number;
  /** The first step of a stop (codex: SIGINT); absent = straight to SIGTERM. */
  gracefulSignal?: NodeJS.Signals;
  /** How long each step of a stop waits for the program to exit. Default 2 s. */
  graceMs?: number;
  /** A pipe to write to (ACP speaks JSON-RPC both ways); default: no stdin. */
  stdin?: 'pipe';
  /** Run it in its own PID namespace through this bubblewrap (`pidNamespace()` said it works); absent = a process group only. */
  bwrap?: string;
  /** A confined program's mounts in that namespace (`namespace-mounts.ts`); released once its group is gone. Ignored without `bwrap`. */
  mounts?: NamespaceMounts;
}

export type Line = { text: string } | { tooLong: number };

export const DEFAULT_MAX_LINE_BYTES = 8 * 1024 * 1024;
export const DEFAULT_IDLE_MS = 300_000;
export const DEFAULT_GRACE_MS = 2000;
const DEFAULT_STDERR_TAIL = 20 * 1024;

/**
 * Variables a program may inherit from the host; everything else (API keys above all) is left out.
 * The one list for every program Arbor starts with the host's environment: remote programs here,
 * a placement's ssh, git and container engine (`placement/exec.ts`, which names its few extras).
 */
export const ENV_ALLOW = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'LANG',
  'LANGUAGE',
  'LC_ALL',
  'LC_CTYPE',
  'TERM',
  'TZ',
  'TMPDIR',
  'XDG_CONFIG_HOME',
  'XDG_CACHE_HOME',
  'XDG_DATA_HOME',
  'XDG_RUNTIME_DIR',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'NODE_EXTRA_CA_CERTS',
  'HTTPS_PROXY',
  'HTTP_PROXY',
  'NO_PROXY',
  'https_proxy',
  'http_proxy',
  'no_proxy',
];
/** Never passed on, even when named in a provider's own env setting: Arbor's own model keys. */
const ENV_DENY = /^(ARBOR_|DEEPSEEK_)/;

/** The host's variables `ENV_ALLOW` names, and those of `also` (a caller's explicit extras); nothing else of the host's. */
export function allowedHostEnv(host: NodeJS.ProcessEnv = process.env, also: readonly string[] = []): Record<string, string> {
  const env: Record<string, string> = {};
  for (const k of [...ENV_ALLOW, ...also]) if (host[k] !== undefined) env[k] = host[k]!;
  return env;
}

/** The program's environment: the allow-listed host variables, then the provider's own (minus Arbor's secrets). */
export function programEnv(
  extra: Record<string, string | undefined> = {},
  host: NodeJS.ProcessEnv = process.env,
  secrets: readonly string[] = [],
): Record<string, string> {
  const env = allowedHostEnv(host);
  for (const [k, v] of Object.entries(extra)) if (v !== undefined && !ENV_DENY.test(k) && !secrets.includes(v)) env[k] = v;
  return env;
}

/**
 * The executable a command names (a path, or a name on PATH outside the folders a confined
 * command could write: `host-program.ts`), or undefined when there is none.
 */
export function resolveCommand(command: string, pathVar = process.env.PATH ?? ''): string | undefined {
  const found = hostProgram(command, pathVar);
  // A `#!/usr/bin/env NAME` program whose NAME is found nowhere outside those folders cannot start either (`hostLaunch`).
  return found && hostLaunch(found, [], pathVar) ? found : undefined;
}

export class RemoteProcess {
  readonly child: ChildProcess;
  /** Resolves when the program has exited (or failed to start). */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; spawnError?: string }>;
  /** It produced no output for the idle timeout and was stopped. */
  idledOut = false;
  private stderrBuf = '';
  private readonly queue: Line[] = [];
  private wake: (() => void) | undefined;
  private ended = false;
  private partial: Buffer[] = [];
  private partialBytes = 0;
  /** Bytes of the line being dropped (it passed the cap), or -1. */
  private dropping = -1;
  private idleTimer: NodeJS.Timeout | undefined;
  private stopping: Promise<void> | undefined;
  /** reapGroup saw no process of the group left. */
  private gone = false;
  /** The namespace's stand-ins being removed, once nothing of it runs (`markGone`). */
  private unmounted: Promise<void> | undefined;
  /** The group as the reaper will know it (leader's start time, boot), read right after the spawn. */
  private readonly group: GroupIdentity | undefined;
  /** In a PID namespace: its init, read at the program's first output (undefined before, or where /proc does not show it). */
  private nsInit: NamespaceInit | undefined;
  private nsLooked = false;

  constructor(readonly spec: ProcessSpec) {
    // Its own process group (detached): a stop reaches everything it started. In its own PID
    // namespace too where bwrap works: the pid held is then bwrap's, which leads the group.
    // A `#!/usr/bin/env node` program's interpreter is looked up here, outside the folders a confined command could write (decision 0109).
    const launch = hostLaunch(spec.command, spec.args, spec.env.PATH);
    const [cmd, cmdArgs] = launch ? [launch.file, launch.args] : [spec.command, [...spec.args]];
    const [file, args] = spec.bwrap ? [spec.bwrap, [...namespaceArgs(spec.mounts?.args), cmd, ...cmdArgs]] : [cmd, cmdArgs];
    // The program's own git (Claude Code's, Codex's) never takes a bare repository a command planted in its folder (`git-safe-env.ts`).
    try {
      this.child = spawn(file, args, { cwd: spec.cwd, env: withBareExplicit(spec.env), detached: true, stdio: [spec.stdin ?? 'ignore', 'pipe', 'pipe'] });
    } catch (err) {
      // Refused before anything ran (a NUL in the prompt, an argument): the stand-ins were held for nothing, and would count forever.
      void spec.mounts?.release();
      throw err;
    }
    this.group = this.child.pid ? groupIdentity(this.child.pid) : undefined;
    if (this.child.pid) trackGroup(this);
    this.exited = new Promise((resolve) => {
      this.child.once('error', (err) => {
        void this.spec.mounts?.release();
        resolve({ code: null, signal: null, spawnError: err.message });
      });
      // bwrap reports a program killed by a signal as 128 + its number, as a shell does.
      this.child.once('close', (code, signal) => resolve(spec.bwrap && !signal ? unwrapExit(code) : { code, signal }));
      // The leader exited but something it started still holds its output open: stop waiting for it.
      this.child.once('exit', () => {
        setTimeout(() => {
          this.child.stdout?.destroy();
          this.child.stderr?.destroy();
        }, 1000).unref();
      });
    });
    void this.exited.then(() => {
      clearTimeout(this.idleTimer);
      this.flushPartial();
      this.ended = true;
      this.wake?.();
    });
    // A program that dies while we write to it: EPIPE is its exit's business, not a crash of ours.
    this.child.stdin?.on('error', () => undefined);
    const max = spec.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
    this.child.stdout!.on('data', (chunk: Buffer) => {
      this.touch();
      this.lookForInit();
      this.split(chunk, max);
    });
    const tail = spec.stderrTailBytes ?? DEFAULT_STDERR_TAIL;
    this.child.stderr!.setEncoding('utf8');
    this.child.stderr!.on('data', (s: string) => {
      this.touch();
      this.lookForInit();
      this.stderrBuf = (this.stderrBuf + s).slice(-tail);
    });
    this.touch();
  }

  /** Write one line to its stdin (a stdin pipe only); false once it is closed. */
  writeLine(text: string): boolean {
    const stdin = this.child.stdin;
    if (!stdin || stdin.destroyed || stdin.writableEnded) return false;
    stdin.write(`${text}\n`);
    return true;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** What `subagent/remote` records so a reaper can find this group after a host crash, and only this one. */
  get identity(): { pgid?: number; startTime?: number; bootId?: string } {
    if (!this.group) return this.child.pid ? { pgid: this.child.pid } : {};
    return { pgid: this.group.pgid, startTime: this.group.startTime, ...(this.group.bootId ? { bootId: this.group.bootId } : {}) };
  }

  /** The last part of what the program wrote to stderr (bounded), trimmed. */
  get stderrTail(): string {
    return this.stderrBuf.trim();
  }

  /** Its stdout, line by line, until it closes. */
  async *lines(): AsyncGenerator<Line> {
    for (;;) {
      const next = this.queue.shift();
      if (next) {
        yield next;
        continue;
      }
      if (this.ended) return;
      await new Promise<void>((r) => (this.wake = r));
      this.wake = undefined;
    }
  }

  /**
   * Stop it: the graceful signal (if any), then SIGTERM, then SIGKILL, each to the whole
   * group with `graceMs` between; resolves once the group has no process left (and with it
   * the PID namespace: its init is a member and leaves last).
   */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      const grace = this.spec.graceMs ?? DEFAULT_GRACE_MS;
      const steps: NodeJS.Signals[] = [...(this.spec.gracefulSignal ? [this.spec.gracefulSignal] : []), 'SIGTERM'];
      for (const sig of steps) {
        if (!this.groupAlive()) break;
        this.signalGroup(sig);
        if (await this.exitedWithin(grace)) break;
      }
      await this.reapGroup();
    })();
    return this.stopping;
  }

  /** After the leader exits, whatever it left in its group goes too (a command it ran in the background); then its stand-ins. */
  async reapGroup(): Promise<void> {
    await this.reap();
    await this.unmounted;
  }

  private async reap(): Promise<void> {
    if (this.gone || this.namespaceGone()) return;
    this.signalGroup('SIGKILL');
    if (await this.namespaceEndsWithin(2000)) return;
    if (await waitGroupGone(this.child.pid, 2000)) this.markGone();
  }

  /** bwrap may leave while its init still takes the namespace down: that end is one file to look at, so it is watched closely. */
  private async namespaceEndsWithin(ms: number): Promise<boolean> {
    if (!this.nsInit) return false;
    for (const end = Date.now() + ms; !this.namespaceGone(); await new Promise((r) => setTimeout(r, 1))) if (Date.now() >= end) return false;
    return true;
  }

  private markGone(): void {
    this.gone = true;
    untrackGroup(this);
    // Nothing of the namespace runs: its stand-ins may go (removed while it ran, a name would be free to make there).
    this.unmounted ??= this.spec.mounts?.release().catch(() => undefined);
  }

  /** SIGKILL to the group now (a front end that must leave at once). */
  kill(): void {
    this.signalGroup('SIGKILL');
  }

  /** Whether a process of its group still runs (zombies waiting for init to reap them do not count). */
  groupAlive(): boolean {
    // Once seen gone it stays gone (its number may later lead someone else's group). Each look
    // is a walk of /proc when zombies linger (a container's init reaps them late), so it is not repeated.
    return !this.gone && !this.namespaceGone() && groupAlive(this.child.pid);
  }

  /**
   * The program ran in a PID namespace, bwrap (the leader) has exited and the namespace's init
   * has ended: every process of the group is gone (`namespaceEnded`), proved by two small reads
   * instead of a walk of /proc, which a zombie init nobody reaps would otherwise cost each time.
   */
  private namespaceGone(): boolean {
    if (!this.nsInit || (this.child.exitCode === null && this.child.signalCode === null) || !namespaceEnded(this.nsInit)) return false;
    this.markGone();
    return true;
  }

  /** Once, at the program's first output (it runs, so the namespace's init exists): which process that init is. */
  private lookForInit(): void {
    if (this.nsLooked || !this.spec.bwrap || !this.child.pid) return;
    this.nsLooked = true;
    this.nsInit = namespaceInit(this.child.pid);
  }

  /**
   * A signal to the group. In a namespace, a graceful one skips bwrap itself: it would die of
   * it without passing it on, and its death kills the program before it could use the grace. It
   * skips the namespace's init (bwrap's child) too: as pid 1 of its namespace it ignores a signal
   * it has no handler for. While the two are alone (the program not started yet) there is no
   * grace to give: bwrap gets it, and its death ends the namespace.
   */
  private signalGroup(sig: NodeJS.Signals): void {
    const pid = this.child.pid;
    if (!pid) return;
    const others = this.spec.bwrap && sig !== 'SIGKILL' ? liveMembers(pid)?.filter((m) => m.pid !== pid && m.ppid !== pid) : undefined;
    if (others?.length) for (const m of others) sendSignal(m.pid, sig);
    else signalGroup(pid, sig);
  }

  private async exitedWithin(ms: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const r = await Promise.race([this.exited.then(() => true), new Promise<boolean>((res) => (timer = setTimeout(() => res(false), ms)))]);
    clearTimeout(timer);
    return r;
  }

  private touch(): void {
    clearTimeout(this.idleTimer);
    if (this.ended) return;
    this.idleTimer = setTimeout(() => {
      this.idledOut = true;
      void this.stop();
    }, this.spec.idleTimeoutMs ?? DEFAULT_IDLE_MS);
  }

  private split(chunk: Buffer, max: number): void {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(10, start);
      const piece = chunk.subarray(start, nl < 0 ? chunk.length : nl);
      if (this.dropping >= 0) this.dropping += piece.length;
      else if (this.partialBytes + piece.length > max) {
        this.dropping = this.partialBytes + piece.length;
        this.partial = [];
        this.partialBytes = 0;
      } else if (piece.length) {
        this.partial.push(Buffer.from(piece));
        this.partialBytes += piece.length;
      }
      if (nl < 0) break;
      this.endLine();
      start = nl + 1;
    }
    this.wake?.();
  }

  private endLine(): void {
    if (this.dropping >= 0) this.queue.push({ tooLong: this.dropping });
    else {
      const text = Buffer.concat(this.partial).toString('utf8');
      if (text.trim()) this.queue.push({ text });
    }
    this.dropping = -1;
    this.partial = [];
    this.partialBytes = 0;
  }

  private flushPartial(): void {
    if (this.partialBytes > 0 || this.dropping >= 0) this.endLine();
  }
}

/** bwrap's exit status as the program's: 128 + N is "killed by signal N". */
function unwrapExit(code: number | null): { code: number | null; signal: NodeJS.Signals | null } {
  if (code !== null && code > 128) {
    const name = Object.entries(os.constants.signals).find(([, n]) => n === code - 128)?.[0];
    if (name) return { code: null, signal: name as NodeJS.Signals };
  }
  return { code, signal: null };
}
