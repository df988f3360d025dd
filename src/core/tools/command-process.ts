import { spawn } from 'node:child_process';
import { groupAlive, signalGroup } from '../process/group';
import { type GroupChild, spawnGroupLeader } from '../process/spawner';
import { Strays } from '../process/strays';
import { OutputBuffer } from './output-buffer';

// One command's process: spawned as the leader of a new process group (by the host's spawner
// where it has one, `process/spawner.ts`, decision 0095: the host pays no fork), its output kept
// (head and tail), stopped on timeout or abort by signalling the group (SIGTERM, then SIGKILL;
// `process/group.ts`, the one way Arbor's programs are stopped and watched).
// A confined command's leader is bubblewrap: killing it ends the command's PID namespace, so
// every process inside dies, `setsid` ones included. An unconfined command has no namespace:
// its descendants are found through /proc and killed with the group.

export interface Outcome {
  end: 'exited' | 'timeout' | 'aborted' | 'spawn-error';
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: OutputBuffer;
  stderr: OutputBuffer;
  /** Background processes kept the output open after the shell exited and were killed. */
  lingered: boolean;
  /** Why it could not start (`spawn-error`), or why it was killed under its run (its spawner lost: `SPAWNER_LOST`). */
  error?: string;
}

export interface ProcessSpec {
  /** The program (the shell, or bubblewrap wrapping it) and its arguments. */
  file: string;
  args: string[];
  /** The command line, for Windows, where it runs through `shell: true`. */
  command: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Confined in a PID namespace (bubblewrap): no descendant sweep is needed. */
  namespaced: boolean;
  /** Bytes the program reads from its fd 3 (bubblewrap's `--seccomp 3`): written to a pipe, then closed. */
  fd3?: Buffer;
  /** Bytes the program reads on stdin (a hook's JSON input): written to a pipe, then closed; absent: stdin is closed. */
  stdin?: Buffer;
  /** Starts the program elsewhere (a resident sandbox, decision 0103) instead of `file` with `args`. */
  start?: () => GroupChild;
}

export interface RunLimits {
  timeoutMs: number;
  cap: number;
  killGraceMs: number;
  lingerMs: number;
}

export function runInGroup(spec: ProcessSpec, limits: RunLimits, signal: AbortSignal): Promise<Outcome> {
  return new Promise((resolve) => {
    const stdout = new OutputBuffer(limits.cap);
    const stderr = new OutputBuffer(limits.cap);
    const win = process.platform === 'win32';
    let child: GroupChild;
    try {
      child = spec.start
        ? spec.start()
        : win
          ? windowsChild(spec)
          : spawnGroupLeader({ file: spec.file, args: spec.args, cwd: spec.cwd, env: spec.env, stdin: spec.stdin, fd3: spec.fd3 });
    } catch (e) {
      resolve({ end: 'spawn-error', code: null, signal: null, stdout, stderr, lingered: false, error: (e as Error).message });
      return;
    }
    child.stdout.on('data', (d: Buffer) => stdout.push(d));
    child.stderr.on('data', (d: Buffer) => stderr.push(d));

    let stopReason: 'timeout' | 'aborted' | undefined;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let spawnError: string | undefined;
    let lingered = false;
    let settled = false;
    let killTimer: NodeJS.Timeout | undefined;
    /** Seen gone: its id may be handed out again, so the group is never signalled after. */
    let groupGone = false;
    let lingerTimer: NodeJS.Timeout | undefined;

    // Descendants outside the group (`setsid`), collected at each signal while the shell still
    // names them as its children (once it dies they are orphans nobody can name), and what those
    // started since; each signalled only while it is still the process named (decision 0099).
    const strays = new Strays();
    /** A signal asked for before the spawner has said the program's pid: sent once it does. */
    let early: NodeJS.Signals | undefined;
    const kill = (sig: NodeJS.Signals): void => {
      // Stopped through whoever started it (its namespace ends with everything in it).
      if (child.signal) return child.signal(sig);
      const pid = child.pid;
      if (pid === undefined) {
        early = sig;
        return;
      }
      // The leader's descendants only while it runs: once it has exited its pid may be reused.
      const leader = spec.namespaced || exit ? undefined : pid;
      if (sig === 'SIGKILL') return strays.killFrozen(groupGone ? undefined : pid, leader);
      if (!spec.namespaced) strays.collect(leader);
      if (!groupGone) signalGroup(pid, sig);
      strays.signal(sig);
    };
    child.on('spawn', () => {
      if (early && !exit) kill(early);
    });
    const stop = (why: 'timeout' | 'aborted'): void => {
      if (stopReason || settled) return;
      stopReason = why;
      kill('SIGTERM');
      killTimer = setTimeout(() => kill('SIGKILL'), limits.killGraceMs);
    };
    const timer = setTimeout(() => stop('timeout'), limits.timeoutMs);
    const onAbort = (): void => stop('aborted');
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });

    const finish = (): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(lingerTimer);
      signal.removeEventListener('abort', onAbort);
      // Keep the SIGKILL follow-up while a member of the group or a stray still runs (a process
      // that ignored SIGTERM; zombies waiting for init do not count). The group's id, once it is
      // gone, may be reused, so it is never signalled again (`kill` checks strays by start time).
      if (killTimer) {
        groupGone = child.alive ? !child.alive() : !groupAlive(child.pid);
        if (groupGone && !strays.alive()) clearTimeout(killTimer);
      }
      const end = spawnError !== undefined ? 'spawn-error' : (stopReason ?? 'exited');
      resolve({ end, code: exit?.code ?? null, signal: exit?.signal ?? null, stdout, stderr, lingered, error: spawnError ?? child.lostReason });
    };

    child.on('error', (e) => {
      spawnError = e.message;
      // A failed spawn emits no 'exit'; a running child that errors still closes.
      if (child.pid === undefined) finish();
    });
    child.on('exit', (code, sig) => {
      exit = { code, signal: sig };
      lingerTimer = setTimeout(() => {
        // The shell is gone but something it started still holds stdout/stderr open.
        lingered = true;
        if (child.signal) child.signal('SIGKILL');
        else signalGroup(child.pid, 'SIGKILL');
        strays.signal('SIGKILL'); // named only once a stop signalled them
        child.stdout.destroy();
        child.stderr.destroy();
        finish();
      }, limits.lingerMs);
    });
    child.on('close', finish);
  });
}

/** Windows: the command line through `shell: true` (no process groups, no fork to spare). */
function windowsChild(spec: ProcessSpec): GroupChild {
  const child = spawn(spec.command, { cwd: spec.cwd, env: spec.env, shell: true, stdio: [spec.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'], windowsHide: true });
  if (spec.stdin && child.stdin) {
    child.stdin.on('error', () => undefined);
    child.stdin.end(spec.stdin);
  }
  return child as typeof child & GroupChild;
}
