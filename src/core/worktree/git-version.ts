import { hostPath } from '../process/host-program';
import { runInGroup } from '../tools/command-process';

// The git on the host PATH (`host-program.ts`): its version, asked once per process and shared by
// every part that needs it — the checkpoints (whether git runs here at all) and the worktrees
// (whether git refuses a bare repository it finds by itself, decision 0110).

/** Long enough on a loaded machine; a hung git still ends. */
const PROBE_TIMEOUT_MS = 120_000;

let said: Promise<string | undefined> | undefined;

/** What `git --version` said (`git version 2.39.5`), or undefined where no git runs: asked once per process. */
export function gitVersion(): Promise<string | undefined> {
  said ??= runInGroup(
    { file: 'git', args: ['--version'], command: 'git --version', cwd: '/', env: { PATH: hostPath(), LC_ALL: 'C' }, namespaced: false },
    { timeoutMs: PROBE_TIMEOUT_MS, cap: 4096, killGraceMs: 2000, lingerMs: 2000 },
    new AbortController().signal,
  ).then(
    (out) => {
      const text = out.end === 'exited' && out.code === 0 ? out.stdout.bytes().toString('utf8').trim() : '';
      return text.startsWith('git version') ? text : undefined;
    },
    () => undefined,
  );
  return said;
}

/** Whether a `git` program runs here. */
export async function gitAvailable(): Promise<boolean> {
  return (await gitVersion()) !== undefined;
}

/**
 * Whether the git on the host PATH knows `safe.bareRepository` (2.38 on). Where it does, the
 * setting refuses a found bare repository before its config is read, and Arbor's own walk would
 * only repeat it (~5 stats a folder up to `/`, before every git). Unknown (no git, an answer
 * that does not parse) walks.
 */
export async function gitKnowsBareSetting(): Promise<boolean> {
  return versionKnowsBareSetting((await gitVersion()) ?? '');
}

/** `git version 2.39.5` → true (2.38 or later); anything else → false. */
export function versionKnowsBareSetting(said: string): boolean {
  const m = /^git version (\d+)\.(\d+)/.exec(said.trim());
  if (!m) return false;
  const [major, minor] = [Number(m[1]), Number(m[2])];
  return major > 2 || (major === 2 && minor >= 38);
}
