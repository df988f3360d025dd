import * as path from 'node:path';
import { withBareExplicit } from '../process/git-safe-env';
import { lastLine, type Ran, run, transportEnv } from './exec';
import { baseRef, DEFAULT_REMOTE_DIR, nodeKey, placedRef, repoKey, storeBeside } from './layout';
import { arborVerdict, probe } from './probe';
import { acpFlags, acpNodesScript, acpScript, CHECK_SCRIPT, CLEANUP_SCRIPT, COLLECT_SCRIPT, PREPARE_SCRIPT, remotePath, shLine } from './shell';
import { gitSshCommand, gitUrl, sshArgs, sshWhere } from './ssh-args';
import { type PlacedProcess, type PlacedWorkspace, PlacementError, type PlacementInfo, type PlacementSettings, type PlacementTransport } from './types';

// The ssh transport (decisions 0071, 0072): the system `ssh` with the user's own config and
// agent. Every step is one ssh connection (one login on the host, which runs the user's shell
// start-up files each time): `check` runs `arbor --version` and times one echo; `connection` is
// the placement's kept `ssh … sh -c PRELUDE exec arbor acp --nodes …`, the API key (only with
// `passApiKey`) on stdin, which also carries the workspace there and back (decision 0081). What
// is below is the fallback for a far side that cannot: `prepare` is one `git push` whose
// receive-pack also makes the bare repository and the node's worktree; `collect` is one `git
// fetch` whose upload-pack first commits the worktree.

export interface TransportOptions {
  /** This Arbor's version: the other side's `arbor --version` must equal it. */
  version: string;
  /** Arbor's model key, asked for only when the placement says `passApiKey`. */
  apiKey?: () => string | undefined;
  /** The host environment the allow-list is taken from (default `process.env`). */
  env?: NodeJS.ProcessEnv;
  /** Bound on one sync step (push or fetch), ms; default 10 minutes. */
  syncTimeoutMs?: number;
  /** Bound on `check`, ms; default 60 s. */
  checkTimeoutMs?: number;
}

/** How often a push or fetch that met another node's worktree being made is tried (100 ms × n apart, plus a little jitter). */
const SYNC_TRIES = 8;

/**
 * `git worktree add` makes `worktrees/<name>/` one file at a time and writes its HEAD as a null id
 * before it points it anywhere; a push or fetch into the same repository in that instant (another
 * placed child's prepare or collect, beside a child getting its worktree) reads the half-made
 * entry and fails: "bad object worktrees/<name>/HEAD", or "failed to read
 * worktrees/<name>/commondir" (both seen in fan-outs). It is transient: the step is tried again.
 */
export function worktreeBeingMade(stderr: string): boolean {
  return /(bad object|failed to read|unable to read|could not read) worktrees\/[^\s/]+\/(HEAD|commondir|gitdir|index)\b/i.test(stderr);
}

/**
 * Runs a push or fetch again while it fails only because a worktree was being made beside it: a
 * fetch here beside a child getting its local worktree, a push there beside another node's
 * `worktree add` (a fan-out's nodes are prepared at once; decision 0077). Both are idempotent.
 */
export async function despiteWorktreeMade<R extends { code: number | null; stderr: string }>(step: () => Promise<R>, signal?: AbortSignal): Promise<R> {
  let r = await step();
  for (let tries = 1; tries < SYNC_TRIES && r.code !== 0 && worktreeBeingMade(r.stderr) && !signal?.aborted; tries++) {
    await new Promise((res) => setTimeout(res, 100 * tries + Math.random() * 50));
    r = await step();
  }
  return r;
}

/** `despiteWorktreeMade` for a step that throws on failure (git through `worktree/git.ts`): its error's message is read as git's stderr. */
export async function despiteWorktreeMadeOrThrow<T>(step: () => Promise<T>, signal?: AbortSignal): Promise<T> {
  const r = await despiteWorktreeMade(
    () =>
      step().then(
        (value) => ({ code: 0, stderr: '', value }),
        (err: Error) => ({ code: 1, stderr: String(err?.message ?? err), err }),
      ),
    signal,
  );
  if ('err' in r) throw r.err;
  return (r as { value: T }).value;
}

/** git's own words that only say "the connection failed"; the ssh line before them says why. */
const GIT_GENERIC = /^(fatal: Could not read from remote repository\.|Please make sure you have the correct access rights|and the repository exists\.)$/;
/** An ssh failure to connect or log in (as opposed to something failing once logged in). */
const SSH_FAILURE =
  /^ssh:|Permission denied|Host key verification failed|Connection (refused|timed out|closed|reset)|Could not resolve hostname|No route to host|kex_exchange_identification/;

export class SshTransport implements PlacementTransport {
  /** Prepare and collect ride on the kept connection (decision 0081); the push and fetch below are the fallback. */
  readonly syncOverLink = true;
  private readonly where: string;
  private readonly remoteDir: string;

  constructor(
    readonly settings: PlacementSettings,
    private readonly opts: TransportOptions,
  ) {
    if (settings.kind !== 'ssh' || !settings.host)
      throw new PlacementError('BAD_PLACEMENT', `placement "${settings.name}" is not an ssh placement with a "host"; give it "kind": "ssh" and "host".`);
    this.where = sshWhere(settings);
    this.remoteDir = remotePath(settings.remoteDir ?? DEFAULT_REMOTE_DIR);
  }

  private get arbor(): string {
    return this.settings.arbor ?? 'arbor';
  }

  private env(extra: Record<string, string> = {}): Record<string, string> {
    return transportEnv(extra, this.opts.env);
  }

  /**
   * The local git's: it runs unconfined in the node's repository, beside whose git folder a
   * command may have planted a bare repository's files (`.gd/` of `--separate-git-dir .gd/main`):
   * git takes none it finds (decision 0124), or their config's `url.*.insteadOf` runs a command here.
   */
  private gitEnv(): Record<string, string> {
    return withBareExplicit(this.env({ GIT_SSH_COMMAND: gitSshCommand(this.settings), GIT_SSH_VARIANT: 'ssh', GIT_TERMINAL_PROMPT: '0' }));
  }

  async check(signal?: AbortSignal): Promise<PlacementInfo> {
    const args = [...sshArgs(this.settings), this.settings.host!, shLine(CHECK_SCRIPT, [this.arbor])];
    const p = await probe('ssh', args, this.env(), this.opts.checkTimeoutMs ?? 60_000, signal);
    signal?.throwIfAborted();
    if (p.spawnError)
      throw new PlacementError(
        'UNREACHABLE',
        `ssh could not start (${p.spawnError}); install OpenSSH's client (ssh) to use placement "${this.settings.name}".`,
      );
    if (p.arborExit === undefined) throw this.unreachable(p.stderr, p.code);
    const verdict = arborVerdict(p, this.where, this.arbor, this.opts.version);
    if (verdict) throw verdict;
    return { name: this.settings.name, kind: 'ssh', where: this.where, ...(p.rttMs !== undefined ? { rttMs: p.rttMs } : {}) };
  }

  async prepare(node: { nodeId: string; repo: string; commit: string }, signal?: AbortSignal): Promise<PlacedWorkspace> {
    const repoDir = this.repoDir(node.repo);
    const wt = path.posix.join(this.remoteDir, 'nodes', nodeKey(node.nodeId));
    const receive = shLine(PREPARE_SCRIPT, [repoDir, wt, node.commit]);
    const r = await despiteWorktreeMade(
      () =>
        run(
          'git',
          [
            '-c',
            'core.hooksPath=/dev/null',
            'push',
            '--no-verify',
            '--quiet',
            `--receive-pack=${receive}`,
            gitUrl(this.settings, repoDir),
            `+${node.commit}:${baseRef(node.nodeId)}`,
          ],
          { cwd: node.repo, env: this.gitEnv(), timeoutMs: this.opts.syncTimeoutMs ?? 600_000, ...(signal ? { signal } : {}) },
        ),
      signal,
    );
    signal?.throwIfAborted();
    const made = /^arbor-prepared (\/.*)$/m.exec(r.stderr);
    if (r.code !== 0 || !made) throw this.syncError(`copy the workspace (${node.commit.slice(0, 12)}) to`, r);
    return { nodeId: node.nodeId, base: node.commit, cwd: made[1]!.trim() };
  }

  process(ws: PlacedWorkspace): PlacedProcess {
    const script = acpScript(this.settings);
    return this.overSsh(shLine(script, [this.arbor, ws.cwd, storeBeside(ws.cwd, ws.nodeId), ...acpFlags(this.settings)]));
  }

  /**
   * One `arbor acp` for all of the placement's nodes (decision 0077): `nodes/<node>` each a
   * workspace, `stores/<node>` its store, `repos/<key>.git` the repositories the workspace travels
   * to over that connection (decision 0081).
   */
  connection(): PlacedProcess {
    const dirs = ['nodes', 'stores', 'repos'].map((d) => path.posix.join(this.remoteDir, d));
    return this.overSsh(shLine(acpNodesScript(this.settings), [this.arbor, ...dirs, ...acpFlags(this.settings)]));
  }

  /** `arbor acp` run by one remote command line; the key, only with passApiKey, goes on stdin before the stream. */
  private overSsh(line: string): PlacedProcess {
    return {
      command: 'ssh',
      args: [...sshArgs(this.settings), this.settings.host!, line],
      env: this.env(),
      ...(this.settings.passApiKey ? { preamble: `${this.opts.apiKey?.() ?? ''}\n` } : {}),
    };
  }

  async collect(ws: PlacedWorkspace, repo: string, signal?: AbortSignal): Promise<{ commit: string }> {
    const repoDir = this.repoDir(repo);
    const ref = placedRef(ws.nodeId);
    const upload = shLine(COLLECT_SCRIPT, [repoDir, ws.cwd, ref, `arbor: changes of ${ws.nodeId} on ${this.settings.name}`]);
    const fetch = () =>
      run(
        'git',
        [
          '-c',
          'core.hooksPath=/dev/null',
          // What comes back is checked as the link's bundles are (`index-pack --strict`): a tree naming `.git` is refused.
          '-c',
          'fetch.fsckObjects=true',
          'fetch',
          '--quiet',
          '--no-tags',
          '--no-write-fetch-head',
          `--upload-pack=${upload}`,
          gitUrl(this.settings, repoDir),
          `+${ref}:${ref}`,
        ],
        { cwd: repo, env: this.gitEnv(), timeoutMs: this.opts.syncTimeoutMs ?? 600_000, ...(signal ? { signal } : {}) },
      );
    // The remote side's collect is idempotent, so a fetch that met another child's worktree being made here is simply run again.
    const r = await despiteWorktreeMade(fetch, signal);
    signal?.throwIfAborted();
    const made = /^arbor-collected ([0-9a-f]{40,64})$/m.exec(r.stderr);
    if (r.code !== 0 || !made) throw this.syncError('bring the changes back from', r);
    const local = await run('git', ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`], {
      cwd: repo,
      env: withBareExplicit(this.env()),
      timeoutMs: 30_000,
    });
    if (local.stdout.trim() !== made[1])
      throw new PlacementError(
        'SYNC_FAILED',
        `the changes of ${ws.nodeId} were committed on ${this.where} (${made[1]}) but ${ref} here is ${local.stdout.trim() || 'missing'}; run collect again.`,
      );
    return { commit: made[1]! };
  }

  async cleanup(ws: PlacedWorkspace): Promise<void> {
    const args = [...sshArgs(this.settings), this.settings.host!, shLine(CLEANUP_SCRIPT, [ws.cwd, baseRef(ws.nodeId)])];
    const r = await run('ssh', args, { cwd: '/', env: this.env(), timeoutMs: this.opts.checkTimeoutMs ?? 60_000 });
    if (r.code !== 0) throw this.unreachable(r.stderr, r.code);
  }

  private repoDir(repo: string): string {
    return path.posix.join(this.remoteDir, 'repos', `${repoKey(repo)}.git`);
  }

  private unreachable(stderr: string, code: number | null): PlacementError {
    const line = lastLine(stderr) || (code === null ? 'no answer in time' : `ssh exited ${code}`);
    return new PlacementError(
      'UNREACHABLE',
      `cannot reach ${this.where} over ssh: ${line}. Check that \`ssh ${this.settings.host}\` logs in without a prompt (a key in your ssh agent or "identityFile", the host key in known_hosts) and that the host is up.`,
    );
  }

  private syncError(what: string, r: Ran): PlacementError {
    if (r.end === 'spawn-error')
      return new PlacementError('SYNC_FAILED', `git could not start (${r.error}); install git here to use placement "${this.settings.name}".`);
    const line = lastLine(r.stderr, GIT_GENERIC);
    if (SSH_FAILURE.test(line)) return this.unreachable(line, r.code);
    const why = r.end === 'timeout' ? 'no answer in time' : line || `git exited ${r.code}`;
    return new PlacementError(
      'SYNC_FAILED',
      `could not ${what} ${this.where}: ${why}. Check that git is installed there and that ${this.settings.remoteDir ?? DEFAULT_REMOTE_DIR} is writable.`,
    );
  }
}
