import { spawn, type ChildProcess } from 'node:child_process';
import { decideApproval, describeDenial } from '../policy/approval';
import { OutputBuffer } from './output-buffer';
import { displayPath, resolveForRead } from './paths';
import { cancelled, fail, guard, ok, refused } from './result';
import type { Tool, ToolContext, ToolResult } from './tool';

export interface RunCommandOptions {
  /** Bytes kept of stdout and of stderr each (default 32 KB; head and tail). */
  maxOutputBytes?: number;
  /** Default timeout when the model gives none (default 60 s). */
  defaultTimeoutMs?: number;
  /** After SIGTERM, how long the process group gets before SIGKILL (default 2 s). */
  killGraceMs?: number;
  /** After the shell exits, how long to wait for background processes to release its output (default 1 s). */
  lingerMs?: number;
  /** Environment of the command (default: this process's). */
  env?: NodeJS.ProcessEnv;
  /** The POSIX shell (default /bin/sh). */
  shell?: string;
}

const NAME = 'run_command';
export const MAX_TIMEOUT_MS = 600_000;

export function createRunCommandTool(options: RunCommandOptions = {}): Tool {
  const cap = options.maxOutputBytes ?? 32 * 1024;
  const defaultTimeout = Math.min(options.defaultTimeoutMs ?? 60_000, MAX_TIMEOUT_MS);
  return {
    name: NAME,
    description:
      'Run a shell command (/bin/sh -c) in the workspace and return its exit code, stdout and stderr (long output keeps ' +
      'its beginning and end). Stdin is closed: the command must not wait for input. Unless the sandbox is full-access, ' +
      'the user approves each command first.',
    parameters: {
      type: 'object',
      properties: {
        command: { type: 'string', description: 'the shell command line, e.g. "npm test -- --grep parser"' },
        cwd: { type: 'string', description: 'the directory to run in, relative to the workspace root (default ".", the root)' },
        timeoutMs: {
          type: 'integer',
          minimum: 1,
          maximum: MAX_TIMEOUT_MS,
          description: `milliseconds before the command and its child processes are killed (default ${defaultTimeout})`,
        },
      },
      required: ['command'],
      additionalProperties: false,
    },
    execute: (args, ctx) =>
      guard(NAME, ctx.signal, async (): Promise<ToolResult> => {
        const command = args.command as string;
        if (command.trim() === '') return fail('INVALID_ARGUMENTS', `${NAME}: 'command' is empty; give a shell command line`);
        const timeoutMs = (args.timeoutMs as number | undefined) ?? defaultTimeout;

        const r = await resolveForRead(ctx, (args.cwd as string | undefined) ?? '.');
        if (!r.ok) return fail(r.code, `${NAME}: cwd: ${r.message}`);
        const where = displayPath(r);
        if (r.kind !== 'directory') {
          return fail(r.kind === 'missing' ? 'NOT_FOUND' : 'NOT_A_DIRECTORY', `${NAME}: cwd '${where}' is not an existing directory`);
        }

        // No OS sandbox confines a process, so the sandbox mode cannot: outside full-access
        // a human approves every command, and in read-only the request says so.
        if (ctx.sandbox !== 'full-access') {
          const summary = `$ ${command}${where === '.' ? '' : `   (in ${where})`}`;
          const answer = await decideApproval(ctx, { tool: NAME, summary, reason: approvalReason(ctx), target: { kind: 'command', command } });
          if (!answer.approved) {
            return refused(
              `${NAME}: ${describeDenial(answer.outcome, answer.reason)}, so the command did not run. ` +
                'Do not retry it in another form; use the file tools, or tell the user what you wanted to run and why.',
              { outcome: answer.outcome, summary },
            );
          }
        }
        if (ctx.signal.aborted) return cancelled(NAME);

        const outcome = await runInGroup(command, r.realPath, timeoutMs, ctx.signal, {
          cap,
          killGraceMs: options.killGraceMs ?? 2000,
          lingerMs: options.lingerMs ?? 1000,
          env: { ...(options.env ?? process.env), GIT_TERMINAL_PROMPT: '0', PAGER: 'cat', GIT_PAGER: 'cat' },
          shell: options.shell ?? '/bin/sh',
        });
        return toResult(outcome, timeoutMs);
      }),
  };
}

function approvalReason(ctx: ToolContext): string {
  return ctx.sandbox === 'read-only'
    ? 'the sandbox is read-only, but a command is not confined by it and could change files: approve only commands that change nothing'
    : "commands are not confined to the workspace: it runs with the user's permissions";
}

interface Outcome {
  end: 'exited' | 'timeout' | 'aborted' | 'spawn-error';
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: OutputBuffer;
  stderr: OutputBuffer;
  /** Background processes kept the output open after the shell exited and were killed. */
  lingered: boolean;
  error?: string;
}

interface RunOptions {
  cap: number;
  killGraceMs: number;
  lingerMs: number;
  env: NodeJS.ProcessEnv;
  shell: string;
}

/**
 * Spawn the shell as the leader of a new process group so that a timeout or an abort
 * can kill everything it started (the group), not just the shell.
 */
function runInGroup(command: string, cwd: string, timeoutMs: number, signal: AbortSignal, o: RunOptions): Promise<Outcome> {
  return new Promise((resolve) => {
    const stdout = new OutputBuffer(o.cap);
    const stderr = new OutputBuffer(o.cap);
    const win = process.platform === 'win32';
    let child: ChildProcess;
    try {
      child = win
        ? spawn(command, { cwd, env: o.env, shell: true, stdio: ['ignore', 'pipe', 'pipe'], windowsHide: true })
        : spawn(o.shell, ['-c', command], { cwd, env: o.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (e) {
      resolve({ end: 'spawn-error', code: null, signal: null, stdout, stderr, lingered: false, error: (e as Error).message });
      return;
    }
    const pid = child.pid;
    child.stdout!.on('data', (d: Buffer) => stdout.push(d));
    child.stderr!.on('data', (d: Buffer) => stderr.push(d));

    let stopReason: 'timeout' | 'aborted' | undefined;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let spawnError: string | undefined;
    let lingered = false;
    let settled = false;
    let killTimer: NodeJS.Timeout | undefined;
    let lingerTimer: NodeJS.Timeout | undefined;

    const stop = (why: 'timeout' | 'aborted'): void => {
      if (stopReason || settled) return;
      stopReason = why;
      killGroup(pid, 'SIGTERM');
      killTimer = setTimeout(() => killGroup(pid, 'SIGKILL'), o.killGraceMs);
    };
    const timer = setTimeout(() => stop('timeout'), timeoutMs);
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
      }, o.lingerMs);
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
  try {
    process.kill(-pid, sig);
  } catch {
    // ESRCH: the group is already gone.
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

function toResult(o: Outcome, timeoutMs: number): ToolResult {
  const sections: string[] = [];
  let status: string;
  switch (o.end) {
    case 'spawn-error':
      return fail('IO_ERROR', `${NAME}: the command could not be started: ${o.error}`);
    case 'timeout':
      status = `Timed out after ${timeoutMs} ms: the command and every process it started were killed.`;
      break;
    case 'aborted':
      status = 'Cancelled: the turn was interrupted, so the command and every process it started were killed.';
      break;
    case 'exited':
      status = o.code !== null ? `Exit code: ${o.code}` : `Terminated by signal ${o.signal ?? 'unknown'}`;
      break;
  }
  sections.push(status);
  if (o.lingered) sections.push('[Background processes still holding the output after the shell exited were killed.]');
  const out = o.stdout.toString();
  const err = o.stderr.toString();
  if (out) sections.push(`--- stdout ---\n${out.replace(/\n$/, '')}`);
  if (err) sections.push(`--- stderr ---\n${err.replace(/\n$/, '')}`);
  if (!out && !err) sections.push('(no output)');
  const content = sections.join('\n');
  if (o.end === 'timeout') return fail('TIMEOUT', content);
  if (o.end === 'aborted') return fail('CANCELLED', content);
  if (o.code !== 0) return fail('EXIT_NONZERO', content);
  return ok(content);
}
