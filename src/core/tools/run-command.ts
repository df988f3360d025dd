import { decideApproval, describeDenial } from '../policy/approval';
import { type Outcome, type ProcessSpec, runInGroup } from './command-process';
import { displayPath, resolveForRead } from './paths';
import { PROTECTED_NAMES_TEXT } from './protected-names';
import { cancelled, fail, guard, ok, refused } from './result';
import { CommandSandbox, type Confinement } from './sandbox/command-sandbox';
import type { SandboxStatus } from './sandbox/detect';
import { commandEnv } from './sandbox/env';
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
  /** Environment of the command (default: this process's), always without the API key. */
  env?: NodeJS.ProcessEnv;
  /** Secret values no variable of the command's environment may hold (the model's API key in use). */
  secrets?: () => readonly string[];
  /** The POSIX shell (default /bin/sh). */
  shell?: string;
  /** The OS sandbox for read-only and workspace-write (default: bubblewrap on PATH, no network). */
  sandbox?: CommandSandbox;
}

const NAME = 'run_command';
export const MAX_TIMEOUT_MS = 600_000;

export function createRunCommandTool(options: RunCommandOptions = {}): Tool {
  const cap = options.maxOutputBytes ?? 32 * 1024;
  const defaultTimeout = Math.min(options.defaultTimeoutMs ?? 60_000, MAX_TIMEOUT_MS);
  const sandbox = options.sandbox ?? new CommandSandbox();
  const shell = options.shell ?? '/bin/sh';
  return {
    name: NAME,
    description:
      'Run a shell command (/bin/sh -c) in the workspace and return its exit code, stdout and stderr (long output keeps ' +
      'its beginning and end). Stdin is closed: the command must not wait for input. Unless the sandbox mode is full-access, ' +
      'the command runs in an OS sandbox that enforces the mode: in read-only nothing on disk can be written, in ' +
      `workspace-write only the workspace folders (not ${PROTECTED_NAMES_TEXT} or hooks folders, at any depth); there is no network ` +
      '(and no Unix sockets: the Docker socket, D-Bus and ssh-agent are out of reach), /tmp is private and ' +
      'emptied afterwards, and every process it started ends with it. If a command cannot work there (it needs the network ' +
      'or to write elsewhere), set outsideSandbox with a justification: the user must approve that.',
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
        outsideSandbox: {
          type: 'boolean',
          description: "run without the OS sandbox (default false); needs the user's approval, so only when the sandbox is why it fails",
        },
        justification: { type: 'string', description: 'with outsideSandbox: one sentence telling the user why the command needs it' },
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

        // The sandbox mode is enforced by the OS; approval decides only whether a command may
        // run outside it: when the model asks to, or when no sandbox can start here.
        let confinement: Confinement | undefined;
        if (ctx.sandbox !== 'full-access') {
          const wantsOut = args.outsideSandbox === true;
          const status = await sandbox.status();
          if (status.available && !wantsOut) {
            confinement = await sandbox.confine(ctx.sandbox, ctx.roots, r.realPath);
          }
          if (!confinement) {
            const summary = `$ ${command}${where === '.' ? '' : `   (in ${where})`}`;
            const reason = unconfinedReason(ctx, status, wantsOut, args.justification as string | undefined);
            const answer = await decideApproval(ctx, { tool: NAME, summary, reason, target: { kind: 'command', command }, unconfined: true });
            if (!answer.approved) {
              return refused(
                `${NAME}: ${describeDenial(answer.outcome, answer.reason)}, so the command did not run. ` +
                  (answer.outcome === 'ceiling'
                    ? wantsOut && status.available
                      ? 'Run it without outsideSandbox (confined), or tell the user what you wanted to run and how to allow it.'
                      : 'Use the file tools, or tell the user what you wanted to run and how to allow it.'
                    : wantsOut && status.available
                      ? 'Run it without outsideSandbox (confined), or tell the user what you wanted to run and why.'
                      : 'Do not retry it in another form; use the file tools, or tell the user what you wanted to run and why.'),
                { outcome: answer.outcome, summary },
              );
            }
          }
        }
        if (ctx.signal.aborted) {
          await confinement?.release();
          return cancelled(NAME);
        }

        const env = commandEnv(options.env ?? process.env, options.secrets?.() ?? [], {
          GIT_TERMINAL_PROMPT: '0',
          PAGER: 'cat',
          GIT_PAGER: 'cat',
          // The sandbox's /tmp is private and writable; a TMPDIR elsewhere would be read-only there.
          ...(confinement ? { TMPDIR: '/tmp' } : {}),
        });
        // In the workspace's resident sandbox where it runs (decision 0103), else a bubblewrap of its own.
        const residentStart = confinement?.start;
        const spec: ProcessSpec = confinement
          ? {
              file: confinement.file,
              args: [...confinement.args, '--', ...(confinement.before ?? []), shell, '-c', command],
              command,
              cwd: r.realPath,
              env,
              namespaced: true,
              fd3: confinement.fd3,
              start: residentStart && (() => residentStart([shell, '-c', command], r.realPath, env)),
            }
          : { file: shell, args: ['-c', command], command, cwd: r.realPath, env, namespaced: false };
        try {
          const outcome = await runInGroup(spec, { timeoutMs, cap, killGraceMs: options.killGraceMs ?? 2000, lingerMs: options.lingerMs ?? 1000 }, ctx.signal);
          return toResult(outcome, timeoutMs, confinement ? `${ctx.sandbox}${confinement.network ? '' : ', no network'}` : undefined, confinement?.notes ?? []);
        } finally {
          await confinement?.release();
        }
      }),
  };
}

/** Why a command needs approval: it would run with the user's full permissions. */
function unconfinedReason(ctx: ToolContext, status: SandboxStatus, wantsOut: boolean, justification: string | undefined): string {
  const why = justification?.trim() ? ` because: "${justification.trim().slice(0, 500)}"` : '';
  if (wantsOut && status.available) {
    return `the model asks to run this command outside the OS sandbox (${ctx.sandbox})${why}; it would run unconfined, with your permissions and the network`;
  }
  return (
    `no OS sandbox can confine this command here (${status.available ? 'unavailable' : status.reason}), so it would run unconfined, ` +
    `with your permissions and the network, although the sandbox mode is ${ctx.sandbox}` +
    (status.available ? '' : `; to run commands confined without asking, ${status.remedy}`)
  );
}

function toResult(o: Outcome, timeoutMs: number, confined: string | undefined, notes: readonly string[]): ToolResult {
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
      status = o.code !== null ? `Exit code: ${o.code}` : `Terminated by signal ${o.signal ?? 'unknown'}${o.error ? `: ${o.error}.` : ''}`;
      break;
  }
  sections.push(status);
  if (o.lingered) sections.push('[Background processes still holding the output after the shell exited were killed.]');
  const out = o.stdout.toString();
  const err = o.stderr.toString();
  if (out) sections.push(`--- stdout ---\n${out.replace(/\n$/, '')}`);
  if (err) sections.push(`--- stderr ---\n${err.replace(/\n$/, '')}`);
  if (!out && !err) sections.push('(no output)');
  // A failure in the sandbox may be the sandbox: say where it ran, so the model can tell.
  if (confined && o.end === 'exited' && o.code !== 0) {
    sections.push(`[It ran in the OS sandbox (${confined}): "Read-only file system" or a network error means the sandbox refused it.]`);
  }
  for (const n of notes) sections.push(`[Sandbox: ${n}.]`);
  const content = sections.join('\n');
  if (o.end === 'timeout') return fail('TIMEOUT', content);
  if (o.end === 'aborted') return fail('CANCELLED', content);
  if (o.code !== 0) return fail('EXIT_NONZERO', content);
  return ok(content);
}
