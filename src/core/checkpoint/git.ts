import { hostPath } from '../process/host-program';
import { type Outcome, runInGroup } from '../tools/command-process';

// Every git process Arbor runs for checkpoints (decision 0059): the shadow repository named
// explicitly (GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE), an environment built from nothing (no
// inherited GIT_* variable, no system or global config, no user hooks, no fsmonitor, no
// automatic gc, no prompts), run as its own process group through the tools' one runner so a
// cancelled or closing harness leaves nothing behind.

/** Where one shadow repository lives and which folder it records. */
export interface GitPlace {
  gitDir: string;
  workTree: string;
  /** `git init` of the shadow itself: it refuses a work tree in the environment. */
  init?: boolean;
}

export interface GitRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Config forced on every call: what a user's or a repository's config could otherwise switch on. */
const FORCED = [
  'core.hooksPath=/dev/null',
  'core.fsmonitor=false',
  'core.autocrlf=false',
  'core.safecrlf=false',
  'core.quotePath=false',
  'core.untrackedCache=false',
  'core.symlinks=true',
  'gc.auto=0',
  'advice.addIgnoredFile=false',
  'safe.directory=*',
].flatMap((c) => ['-c', c]);

/** Output kept per call: a tree diff of many files is long, and it is read whole. */
const OUTPUT_CAP = 64 * 1024 * 1024;
const TIMEOUT_MS = 120_000;

/** The environment of a checkpoint git: PATH (without the workspace's folders: `host-program.ts`) only, plus the repository named explicitly. */
export function gitEnv(place: GitPlace): NodeJS.ProcessEnv {
  return {
    PATH: hostPath(process.env.PATH ?? '/usr/bin:/bin'),
    HOME: place.gitDir,
    LC_ALL: 'C',
    GIT_DIR: place.gitDir,
    ...(place.init ? {} : { GIT_WORK_TREE: place.workTree }),
    GIT_INDEX_FILE: `${place.gitDir}/index`,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    GIT_OPTIONAL_LOCKS: '0',
  };
}

/** Run `git ARGS` on a shadow repository; stdin bytes optional. Never throws: a spawn failure is code null. */
export async function git(place: GitPlace, args: readonly string[], stdin?: Buffer, signal?: AbortSignal): Promise<GitRun> {
  const all = [...FORCED, ...args];
  const out: Outcome = await runInGroup(
    {
      file: 'git',
      args: all,
      command: ['git', ...all].join(' '),
      cwd: place.workTree,
      env: gitEnv(place),
      namespaced: false,
      ...(stdin ? { stdin } : {}),
    },
    { timeoutMs: TIMEOUT_MS, cap: OUTPUT_CAP, killGraceMs: 2000, lingerMs: 2000 },
    signal ?? new AbortController().signal,
  );
  return { code: out.end === 'exited' ? out.code : null, stdout: out.stdout.toString(), stderr: out.error ?? out.stderr.toString() };
}

/** `git` that must succeed: a failure throws with git's own words. */
export async function gitOk(place: GitPlace, args: readonly string[], stdin?: Buffer): Promise<string> {
  const r = await git(place, args, stdin);
  if (r.code !== 0) throw new Error(`git ${args[0]} failed (${r.code === null ? 'did not run' : `exit ${r.code}`}): ${r.stderr.trim().slice(0, 500)}`);
  return r.stdout;
}
