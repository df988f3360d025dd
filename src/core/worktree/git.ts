import * as fs from 'node:fs';
import * as path from 'node:path';
import { HOST_PROGRAM_RULE, hostPath } from '../process/host-program';
import { bareFoundFrom, bareFoundMessage } from '../tools/bare-found';
import { runInGroup } from '../tools/command-process';
import { gitKnowsBareSetting } from './git-version';

// The one way the worktree code runs git (decision 0060): an argument vector (never a shell),
// the repository's own configuration but never its hooks (`core.hooksPath=/dev/null`: Arbor's
// bookkeeping must not run the user's post-checkout or pre-commit scripts), no prompts, an
// identity of its own for the commits it makes on `arbor/*` branches, a time bound, and
// failures as `WorktreeError`s that say what to do.

export type WorktreeErrorCode =
  | 'NO_GIT'
  | 'NOT_A_REPO'
  | 'GIT_FAILED'
  | 'UNKNOWN_WORKTREE'
  | 'NOT_OPEN'
  | 'CONFLICT'
  | 'UNSUPPORTED'
  | 'UNSAFE_PATH'
  | 'PARTIAL'
  | 'BUSY';

export class WorktreeError extends Error {
  override readonly name = 'WorktreeError';
  constructor(
    readonly code: WorktreeErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export interface GitOptions {
  cwd: string;
  /** Extra environment (a separate index: `GIT_INDEX_FILE`). */
  env?: Record<string, string>;
  /** Text (or bytes: a pack) for git's stdin. */
  input?: string | Buffer;
  /** Exit codes that are answers, not failures (`merge-tree` exits 1 on a conflict). */
  okCodes?: readonly number[];
  /** Bytes of stdout kept (default 64 MiB: a file's content can come through here). */
  maxBuffer?: number;
  /** Past `maxBuffer`, answer with `cut` set instead of failing (the caller takes another way). */
  cutOk?: boolean;
  /** Run inside this sandbox (`confined.ts`): a git that reads the workspace's files. */
  wrap?: { file: string; args: readonly string[] };
  /**
   * The repository, named (`--git-dir`): a bare one Arbor made itself (a far side's
   * `repos/<key>.git`). Git is never left to find a bare repository by itself (`BARE_EXPLICIT`).
   */
  gitDir?: string;
}

/** Where git runs on a bare repository Arbor made itself (a far side's `repos/<key>.git`): that folder, named. */
export const bareRepo = (dir: string): { cwd: string; gitDir: string } => ({ cwd: dir, gitDir: dir });

export interface GitResult {
  stdout: string;
  /** stdout as bytes (a blob's content). */
  bytes: Buffer;
  code: number;
  /** stdout went past `maxBuffer` (only with `cutOk`): what is here is its start. */
  cut?: boolean;
}

/** Long enough for `git add -A` over a large workspace on a loaded machine; a hung git still ends. */
const GIT_TIMEOUT_MS = 120_000;

const IDENTITY = {
  GIT_AUTHOR_NAME: 'Arbor',
  GIT_AUTHOR_EMAIL: 'arbor@localhost',
  GIT_COMMITTER_NAME: 'Arbor',
  GIT_COMMITTER_EMAIL: 'arbor@localhost',
};

/** Git never takes a bare repository it finds by itself (`tools/bare-found.ts`, decision 0110): only one named (`GitOptions.gitDir`). */
const BARE_EXPLICIT = ['-c', 'safe.bareRepository=explicit'];

/** Run git; resolves with stdout, rejects with a `WorktreeError` (git missing, or a failure in git's words). */
export async function git(args: readonly string[], opts: GitOptions): Promise<GitResult> {
  // The same walk as git's, for a git too old for the setting (a repository named is not looked for).
  const named = opts.gitDir || opts.env?.GIT_DIR || args.includes('--git-dir');
  const found = named || (await gitKnowsBareSetting()) ? undefined : bareFoundFrom(opts.cwd);
  if (found) throw new WorktreeError('NOT_A_REPO', bareFoundMessage(found, opts.cwd));
  const full = ['-c', 'core.hooksPath=/dev/null', '-c', 'core.quotePath=false', ...BARE_EXPLICIT, ...(opts.gitDir ? ['--git-dir', opts.gitDir] : []), ...args];
  // Its own process group through the one runner (`process/`), so a closing harness leaves no git behind.
  const out = await runInGroup(
    {
      file: opts.wrap?.file ?? 'git',
      args: opts.wrap ? [...opts.wrap.args, '--', 'git', ...full] : full,
      command: ['git', ...full].join(' '),
      cwd: opts.cwd,
      // PATH without the workspace's folders (a command could put its own git there): `host-program.ts`.
      env: { ...process.env, PATH: hostPath(), ...IDENTITY, GIT_TERMINAL_PROMPT: '0', GIT_OPTIONAL_LOCKS: '0', ...opts.env },
      namespaced: false,
      ...(opts.input !== undefined ? { stdin: typeof opts.input === 'string' ? Buffer.from(opts.input) : opts.input } : {}),
    },
    { timeoutMs: GIT_TIMEOUT_MS, cap: opts.maxBuffer ?? 64 * 1024 * 1024, killGraceMs: 2000, lingerMs: 2000 },
    new AbortController().signal,
  );
  if (out.end === 'spawn-error')
    throw new WorktreeError(
      'NO_GIT',
      `git is not installed (or not on PATH), so a child cannot get its own worktree; install git or start the child without isolation. (${HOST_PROGRAM_RULE}.)`,
    );
  const bytes = out.stdout.bytes();
  const code = out.end === 'exited' && out.code !== null ? out.code : -1;
  if (out.stdout.truncated && !opts.cutOk)
    throw new WorktreeError(
      'GIT_FAILED',
      `git ${args[0]} printed ${out.stdout.total} bytes, more than Arbor reads at once; review or apply this child's changes with git itself.`,
    );
  if (code === 0 || opts.okCodes?.includes(code)) return { stdout: bytes.toString('utf8'), bytes, code, ...(out.stdout.truncated ? { cut: true } : {}) };
  const said = out.stderr.toString().trim().split('\n').slice(-3).join(' ');
  const bare = /cannot use bare repository '([^']*)'/.exec(said);
  if (bare) throw new WorktreeError('NOT_A_REPO', bareFoundMessage(bare[1], opts.cwd));
  const how = out.end === 'timeout' ? ` (no answer in ${GIT_TIMEOUT_MS / 1000} s)` : out.error ? ` (${out.error})` : '';
  throw new WorktreeError('GIT_FAILED', `git ${args[0]} failed${how}${said ? `: ${said}` : ` (exit ${code})`}`);
}

/** The top of the repository holding `dir`, or a `NOT_A_REPO` error saying what to do. */
export async function repoTop(dir: string): Promise<string> {
  try {
    return (await git(['rev-parse', '--show-toplevel'], { cwd: dir })).stdout.trim();
  } catch (err) {
    if (err instanceof WorktreeError && err.code === 'NO_GIT') throw err;
    throw notARepo(dir, err);
  }
}

/** `dir` is in no repository git may use: `err` itself when it says so already (a bare repository found, `tools/bare-found.ts`). */
export function notARepo(dir: string, err?: unknown): WorktreeError {
  if (err instanceof WorktreeError && err.code === 'NOT_A_REPO') return err;
  return new WorktreeError(
    'NOT_A_REPO',
    `${dir} is not inside a git repository, so a child cannot get its own worktree; run \`git init\` and commit there, or start the child without isolation.`,
  );
}

/**
 * Whether `git init` has finished making the (bare) repository at `gitDir`: it writes HEAD before
 * objects/, which comes last, so HEAD alone may be one still being made beside this process, or
 * one a killed init left half made (an init over it completes it).
 */
export function initFinished(gitDir: string): boolean {
  return fs.existsSync(path.join(gitDir, 'objects'));
}
