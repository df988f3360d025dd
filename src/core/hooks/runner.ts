import { withBareExplicit } from '../process/git-safe-env';
import type { HookOutcome } from '../session/events';
import { runInGroup } from '../tools/command-process';
import { commandEnv } from '../tools/sandbox/env';
import type { HookCommand } from './schema';

// One hook command: `sh -c COMMAND` (Claude Code runs hooks through the shell), outside the OS
// sandbox — hooks are the user's own commands — with the workspace as cwd, its JSON input on
// stdin, as the leader of its own process group (killed as a whole at the timeout), and its
// output capped (head and tail kept).

/** Bytes of stdout and of stderr kept per hook run. */
export const HOOK_OUTPUT_CAP = 64 * 1024;

export interface HookRun {
  outcome: HookOutcome;
  exitCode?: number;
  stdout: string;
  stderr: string;
  truncated: boolean;
  durationMs: number;
  /** Why it could not run or was stopped. */
  error?: string;
}

export interface RunOptions {
  cwd: string;
  cap?: number;
  signal?: AbortSignal;
  env?: NodeJS.ProcessEnv;
  /** The model's key in use: no variable holding it reaches the hook (as for commands). */
  secrets?: readonly string[];
}

export async function runHook(hook: HookCommand, input: object, opts: RunOptions): Promise<HookRun> {
  const started = performance.now();
  const win = process.platform === 'win32';
  const cap = opts.cap ?? HOOK_OUTPUT_CAP;
  const out = await runInGroup(
    {
      file: win ? 'cmd.exe' : '/bin/sh',
      args: win ? ['/d', '/s', '/c', hook.command] : ['-c', hook.command],
      command: hook.command,
      cwd: opts.cwd,
      // The host's environment without the model's API key (what a hook prints can reach the
      // model); Claude Code's variable, so hook scripts written for it find the project unchanged.
      // Git there never takes a bare repository a command planted in the workspace (`git-safe-env.ts`).
      env: withBareExplicit(commandEnv({ ...process.env, ...opts.env }, opts.secrets ?? [], { CLAUDE_PROJECT_DIR: opts.cwd, ARBOR_PROJECT_DIR: opts.cwd })),
      namespaced: false,
      stdin: Buffer.from(`${JSON.stringify(input)}\n`),
    },
    { timeoutMs: hook.timeoutMs, cap, killGraceMs: 500, lingerMs: 1000 },
    opts.signal ?? new AbortController().signal,
  );
  const durationMs = Math.round(performance.now() - started);
  const base = { stdout: out.stdout.toString(), stderr: out.stderr.toString(), truncated: out.stdout.truncated || out.stderr.truncated, durationMs };
  if (out.end === 'spawn-error') return { ...base, outcome: 'error', error: `it could not start (${out.error ?? 'unknown error'})` };
  if (out.end === 'timeout') return { ...base, outcome: 'timeout', error: `it ran past its timeout of ${hook.timeoutMs / 1000} s and was killed` };
  if (out.end === 'aborted') return { ...base, outcome: 'error', error: 'it was stopped because the turn was interrupted' };
  const exitCode = out.code ?? (out.signal ? 128 : 1);
  return { ...base, exitCode, outcome: exitCode === 0 ? 'ok' : exitCode === 2 ? 'blocked' : 'error', ...(out.error ? { error: out.error } : {}) };
}
