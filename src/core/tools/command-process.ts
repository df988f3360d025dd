import { type ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import type { Writable } from 'node:stream';
import { OutputBuffer } from './output-buffer';

// One command's process: spawned as the leader of a new process group, its output kept
// (head and tail), stopped on timeout or abort by signalling the group (SIGTERM, then SIGKILL).
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
    let child: ChildProcess;
    try {
      child = win
        ? spawn(spec.command, { cwd: spec.cwd, env: spec.env, shell: true, stdio: ['ignore', 'pipe', 'pipe'], windowsHide: true })
        : spawn(spec.file, spec.args, {
            cwd: spec.cwd,
            env: spec.env,
            detached: true,
            stdio: ['ignore', 'pipe', 'pipe', ...(spec.fd3 ? ['pipe' as const] : [])],
          });
    } catch (e) {
      resolve({ end: 'spawn-error', code: null, signal: null, stdout, stderr, lingered: false, error: (e as Error).message });
      return;
    }
    const pid = child.pid;
    const fd3 = child.stdio[3] as Writable | null | undefined;
    if (fd3 && spec.fd3) {
      // A program that exits before reading it (bubblewrap refusing its arguments) closes the pipe: its exit says why.
      fd3.on('error', () => undefined);
      fd3.end(spec.fd3);
    }
    child.stdout!.on('data', (d: Buffer) => stdout.push(d));
    child.stderr!.on('data', (d: Buffer) => stderr.push(d));

    let stopReason: 'timeout' | 'aborted' | undefined;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let spawnError: string | undefined;
    let lingered = false;
    let settled = false;
    let killTimer: NodeJS.Timeout | undefined;
    let lingerTimer: NodeJS.Timeout | undefined;

    // Descendants outside the group (`setsid`), collected at the first signal while the shell
    // still names them as its children: once it dies they are orphans nobody can name.
    const strays = new Set<number>();
    const kill = (sig: NodeJS.Signals): void => {
      if (!spec.namespaced && !exit) for (const p of descendants(pid)) strays.add(p);
      killGroup(pid, sig);
      for (const p of strays) killPid(p, sig);
    };
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
      // Keep the SIGKILL follow-up only while the group still has members (a process that
      // ignored SIGTERM); once it is gone its id may be reused, so never signal it again.
      if (killTimer && !groupAlive(pid)) clearTimeout(killTimer);
      const end = spawnError !== undefined ? 'spawn-error' : (stopReason ?? 'exited');
      resolve({ end, code: exit?.code ?? null, signal: exit?.signal ?? null, stdout, stderr, lingered, error: spawnError });
    };

    child.on('error', (e) => {
      spawnError = e.message;
      // A failed spawn emits no 'exit'; a running child that errors still closes.
      if (pid === undefined) finish();
    });
    child.on('exit', (code, sig) => {
      exit = { code, signal: sig };
      lingerTimer = setTimeout(() => {
        // The shell is gone but something it started still holds stdout/stderr open.
        lingered = true;
        killGroup(pid, 'SIGKILL');
        child.stdout?.destroy();
        child.stderr?.destroy();
        finish();
      }, limits.lingerMs);
    });
    child.on('close', finish);
  });
}

function killGroup(pid: number | undefined, sig: NodeJS.Signals): void {
  if (pid === undefined) return;
  if (process.platform === 'win32') {
    // No process groups: taskkill /T walks the tree.
    try {
      spawn('taskkill', ['/pid', String(pid), '/T', '/F'], { stdio: 'ignore', windowsHide: true }).on('error', () => undefined);
    } catch {
      // Nothing left to kill, or no taskkill: the tree may outlive the call.
    }
    return;
  }
  killPid(-pid, sig);
}

function killPid(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // ESRCH: already gone.
  }
}

function groupAlive(pid: number | undefined): boolean {
  if (pid === undefined || process.platform === 'win32') return false;
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Every live descendant of `pid`, from /proc (Linux); empty where there is no /proc. */
export function descendants(pid: number | undefined): number[] {
  if (pid === undefined || process.platform !== 'linux') return [];
  const children = new Map<number, number[]>();
  let names: string[];
  try {
    names = fs.readdirSync('/proc');
  } catch {
    return [];
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue; // exited meanwhile
    }
    // "pid (comm) state ppid …": comm may hold spaces and parentheses, so read after the last ')'.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    const list = children.get(ppid);
    if (list) list.push(Number(name));
    else children.set(ppid, [Number(name)]);
  }
  const out: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    for (const c of children.get(queue.shift()!) ?? []) {
      out.push(c);
      queue.push(c);
    }
  }
  return out;
}
