import { hostPath } from '../process/host-program';
import { allowedHostEnv } from '../remote/process';
import { runInGroup } from '../tools/command-process';

// How a transport runs its local programs (ssh, git over ssh, the container engine): an
// argument vector, its own process group through the one runner, a time bound, the caller's
// abort, and an environment built from an allow-list — Arbor's own keys (or anything else of the
// host's) never reach ssh, git or the engine (decision 0071).

/**
 * What a transport's programs need of the host beyond the one allow-list (`ENV_ALLOW`, owned by
 * `remote/process.ts`): the user's ssh agent, and the container engine's own variables.
 */
const TRANSPORT_ENV = ['SSH_AUTH_SOCK', 'CONTAINER_HOST', 'CONTAINERS_CONF', 'DOCKER_HOST', 'DOCKER_CONFIG'];

/** The allow-listed host variables and the transport's extras, then the transport's own values. */
export function transportEnv(extra: Record<string, string> = {}, host: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env = { ...allowedHostEnv(host, TRANSPORT_ENV), ...extra };
  // ssh, git and the engine are found on a PATH without the workspace's folders (`host-program.ts`).
  if (env.PATH !== undefined) env.PATH = hostPath(env.PATH);
  return env;
}

export interface Ran {
  /** Exit code; null when it did not exit by itself. */
  code: number | null;
  end: 'exited' | 'timeout' | 'aborted' | 'spawn-error';
  stdout: string;
  stderr: string;
  /** The spawn error (the program is missing). */
  error?: string;
}

export interface RunOptions {
  cwd: string;
  env: Record<string, string>;
  stdin?: string;
  timeoutMs: number;
  signal?: AbortSignal;
}

/** Run `file args` to the end (or the bound, or the abort); never throws. */
export async function run(file: string, args: readonly string[], o: RunOptions): Promise<Ran> {
  const out = await runInGroup(
    {
      file,
      args: [...args],
      command: [file, ...args].join(' '),
      cwd: o.cwd,
      env: o.env,
      namespaced: false,
      ...(o.stdin !== undefined ? { stdin: Buffer.from(o.stdin) } : {}),
    },
    { timeoutMs: o.timeoutMs, cap: 8 * 1024 * 1024, killGraceMs: 2000, lingerMs: 2000 },
    o.signal ?? new AbortController().signal,
  );
  return {
    code: out.end === 'exited' ? out.code : null,
    end: out.end,
    stdout: out.stdout.toString(),
    stderr: out.stderr.toString(),
    ...(out.error ? { error: out.error } : {}),
  };
}

/** The last meaningful line a program wrote to stderr (ssh's reason, git's `fatal:`), for a message. */
export function lastLine(text: string, skip: RegExp = /^$/): string {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !skip.test(l));
  return lines[lines.length - 1] ?? '';
}
