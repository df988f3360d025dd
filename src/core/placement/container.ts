import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { git, WorktreeError } from '../worktree/git';
import { isInside } from '../worktree/names';
import { lastLine, run, transportEnv } from './exec';
import { nodeKey, placedRef, storeBeside } from './layout';
import { arborVerdict, probe } from './probe';
import { acpFlags, acpScript, CHECK_SCRIPT } from './shell';
import type { TransportOptions } from './ssh';
import { type PlacedProcess, type PlacedWorkspace, PlacementError, type PlacementInfo, type PlacementSettings, type PlacementTransport } from './types';

// The container transport (decisions 0071, 0072): `podman` or `docker` runs the user's image
// with `arbor acp` inside. The workspace does not travel over a link: the node's copy is a local
// git worktree of the base commit (`<workDir>/nodes/<node>`, made and committed here, outside
// every sandbox), mounted into the container at the same path, with the inner arbor's store
// beside it (`<workDir>/stores/<node>`, kept after cleanup). The image must carry `sh` and
// `arbor` at this Arbor's version; the API key (only with `passApiKey`) goes in on stdin.

export interface ContainerOptions extends TransportOptions {
  /** Where node worktrees and stores live on this machine; default `<repository's .git>/arbor-placed/<placement>`. */
  workDir?: string;
}

/** How long a container whose removal failed is watched for going by itself before it is reported left (`turnOver`). */
const LEFT_GRACE_MS = 10_000;

export class ContainerTransport implements PlacementTransport {
  private readonly engine: string;
  /** The containers each node folder's turns started (by name), until `turnOver` ends them. */
  private readonly started = new Map<string, string[]>();
  /** Each node folder's repository, as prepare made it: cleanup prunes its entry there even when the node broke its `.git`. */
  private readonly repoOf = new Map<string, string>();

  constructor(
    readonly settings: PlacementSettings,
    private readonly opts: ContainerOptions,
  ) {
    if (settings.kind !== 'container' || !settings.image)
      throw new PlacementError(
        'BAD_PLACEMENT',
        `placement "${settings.name}" is not a container placement with an "image"; give it "kind": "container" and "image".`,
      );
    this.engine = settings.engine ?? 'podman';
  }

  private get arbor(): string {
    return this.settings.arbor ?? 'arbor';
  }

  private runArgs(): string[] {
    // podman copies the host's proxy variables into the container by default (`--http-proxy`);
    // the engine keeps them (a pull may need the proxy), the container does not: a proxy URL can
    // carry credentials, and nothing of the host's travels that the placement did not name.
    const noProxy = path.basename(this.engine).startsWith('podman') ? ['--http-proxy=false'] : [];
    return ['run', '--rm', '-i', ...noProxy, ...(this.settings.runArgs ?? [])];
  }

  async check(signal?: AbortSignal): Promise<PlacementInfo> {
    const args = [...this.runArgs(), this.settings.image!, 'sh', '-c', CHECK_SCRIPT, 'arbor', this.arbor];
    const p = await probe(this.engine, args, transportEnv({}, this.opts.env), this.opts.checkTimeoutMs ?? 120_000, signal);
    signal?.throwIfAborted();
    if (p.spawnError)
      throw new PlacementError(
        'NO_ENGINE',
        `the container engine "${this.engine}" could not start (${p.spawnError}); install podman (or docker) or set the placement's "engine" to its path.`,
      );
    if (p.arborExit === undefined)
      throw new PlacementError(
        'UNREACHABLE',
        `${this.engine} could not run ${this.settings.image}: ${lastLine(p.stderr) || (p.code === null ? 'no answer in time' : `exit ${p.code}`)}. Build or pull the image (it needs sh and arbor ${this.opts.version}) and check the placement's "runArgs".`,
      );
    const verdict = arborVerdict(p, `image ${this.settings.image}`, this.arbor, this.opts.version);
    if (verdict) throw verdict;
    return { name: this.settings.name, kind: 'container', where: this.settings.image!, ...(p.rttMs !== undefined ? { rttMs: p.rttMs } : {}) };
  }

  async prepare(node: { nodeId: string; repo: string; commit: string }, signal?: AbortSignal): Promise<PlacedWorkspace> {
    const base = await this.workDir(node.repo);
    const wt = path.join(base, 'nodes', nodeKey(node.nodeId));
    try {
      if (fs.existsSync(wt)) await this.removeTree(wt, base, node.repo);
      await fsp.mkdir(path.dirname(wt), { recursive: true });
      await git(['worktree', 'add', '--quiet', '--detach', wt, node.commit], { cwd: node.repo });
      signal?.throwIfAborted();
      const cwd = fs.realpathSync(wt);
      this.repoOf.set(cwd, node.repo);
      await fsp.mkdir(storeBeside(cwd, node.nodeId), { recursive: true });
      return { nodeId: node.nodeId, base: node.commit, cwd };
    } catch (err) {
      if (err instanceof WorktreeError) throw new PlacementError('SYNC_FAILED', `could not make the worktree of ${node.nodeId} in ${base}: ${err.message}`);
      throw err;
    }
  }

  process(ws: PlacedWorkspace): PlacedProcess {
    const store = storeBeside(ws.cwd, ws.nodeId);
    return {
      command: this.engine,
      args: [
        ...this.runArgs(),
        // Named, so the engine can end it when its client is gone (`turnOver`): a stopped client leaves its container running.
        '--name',
        this.containerName(ws),
        '-v',
        `${ws.cwd}:${ws.cwd}`,
        '-v',
        `${store}:${store}`,
        '-w',
        ws.cwd,
        this.settings.image!,
        'sh',
        '-c',
        acpScript(this.settings),
        'arbor',
        this.arbor,
        ws.cwd,
        store,
        ...acpFlags(this.settings),
      ],
      env: transportEnv({}, this.opts.env),
      ...(this.settings.passApiKey ? { preamble: `${this.opts.apiKey?.() ?? ''}\n` } : {}),
    };
  }

  async collect(ws: PlacedWorkspace, repo: string, signal?: AbortSignal): Promise<{ commit: string }> {
    // The folder was the container's to write: git is told the node's entry in the repository, never left to find a `.git` there.
    const gd = nodeGitDir(ws.cwd, [ws.cwd, storeBeside(ws.cwd, ws.nodeId)]);
    const G = (...args: string[]) => git(['--git-dir', gd, '--work-tree', ws.cwd, ...args], { cwd: ws.cwd });
    try {
      // Everything in the worktree (new, changed, deleted; ignored files stay) on top of its HEAD.
      await G('add', '-A');
      signal?.throwIfAborted();
      const tree = (await G('write-tree')).stdout.trim();
      const head = (await G('rev-parse', 'HEAD')).stdout.trim();
      const headTree = (await G('rev-parse', `${head}^{tree}`)).stdout.trim();
      const commit = tree === headTree ? head : ((await this.previous(ws, repo, tree, head)) ?? (await this.commitTree(ws, repo, tree, head)));
      await git(['update-ref', placedRef(ws.nodeId), commit], { cwd: repo });
      return { commit };
    } catch (err) {
      if (err instanceof WorktreeError) throw new PlacementError('SYNC_FAILED', `could not commit the changes of ${ws.nodeId} in ${ws.cwd}: ${err.message}`);
      throw err;
    }
  }

  /** The last collect's commit when nothing changed since (a repeated collect makes no new commit). */
  private async previous(ws: PlacedWorkspace, repo: string, tree: string, head: string): Promise<string | undefined> {
    const ref = placedRef(ws.nodeId);
    const prev = await git(['rev-parse', '-q', '--verify', `${ref}^{commit}`], { cwd: repo, okCodes: [1] });
    if (prev.code !== 0) return undefined;
    const c = prev.stdout.trim();
    const [t, p] = (await git(['rev-parse', `${c}^{tree}`, `${c}^`], { cwd: repo, okCodes: [128] })).stdout.trim().split('\n');
    return t === tree && p === head ? c : undefined;
  }

  private async commitTree(ws: PlacedWorkspace, repo: string, tree: string, head: string): Promise<string> {
    return (await git(['commit-tree', tree, '-p', head, '-m', `arbor: changes of ${ws.nodeId} on ${this.settings.name}`], { cwd: repo })).stdout.trim();
  }

  /** A fresh name for each container a node's turn starts, kept by node folder until `turnOver` removes them. */
  private containerName(ws: PlacedWorkspace): string {
    const name = `arbor-${randomBytes(8).toString('hex')}`;
    this.started.set(ws.cwd, [...(this.started.get(ws.cwd) ?? []), name]);
    return name;
  }

  async turnOver(ws: PlacedWorkspace): Promise<void> {
    // `--rm` removes a container that ended; one still running (its process ignored the stop) is killed and removed here.
    const names = this.started.get(ws.cwd) ?? [];
    if (!names.length) return;
    const podman = path.basename(this.engine).startsWith('podman');
    const env = transportEnv({}, this.opts.env);
    const remove = (which: readonly string[]) =>
      run(this.engine, ['rm', '--force', ...(podman ? ['--ignore', '--time', '0'] : []), ...which], { cwd: '/', env, timeoutMs: 60_000 });
    let rm = await remove(names);
    // A failed `rm` may have removed some (docker fails on a name already gone): those still listed are what is left.
    let left = rm.code === 0 ? [] : await this.stillListed(names, env);
    // podman can fail while a killed container is still going (libpod: "timed out waiting for file …/exits/…"):
    // it gets a few seconds to be gone, then is asked once more.
    for (const until = Date.now() + LEFT_GRACE_MS; left.length && Date.now() < until; ) {
      await new Promise((r) => setTimeout(r, 500));
      left = await this.stillListed(left, env);
    }
    if (left.length) {
      rm = await remove(left);
      left = rm.code === 0 ? [] : await this.stillListed(left, env);
    }
    if (!left.length) {
      this.started.delete(ws.cwd);
      return;
    }
    this.started.set(ws.cwd, left);
    const why = rm.error ?? (lastLine(rm.stderr) || (rm.end === 'exited' ? `exit code ${rm.code}` : rm.end));
    throw new PlacementError(
      'CONTAINER_LEFT',
      `${this.engine} could not remove the container${left.length > 1 ? 's' : ''} of this node's turn (${left.join(', ')}: ${why}); ` +
        `it may still run and write the node's folder, so its changes were not collected. Remove ${left.length > 1 ? 'them' : 'it'} with \`${this.engine} rm --force ${left.join(' ')}\`, then send the child a message to collect them.`,
    );
  }

  /** Which of `names` the engine still lists (every one when it cannot say). */
  private async stillListed(names: readonly string[], env: Record<string, string>): Promise<string[]> {
    const ps = await run(this.engine, ['ps', '--all', '--format', '{{.Names}}'], { cwd: '/', env, timeoutMs: 60_000 });
    if (ps.code !== 0) return [...names];
    const listed = new Set(ps.stdout.split('\n').map((l) => l.trim()));
    return names.filter((n) => listed.has(n));
  }

  async cleanup(ws: PlacedWorkspace): Promise<void> {
    // What a turn left running (its removal failed then) is tried once more before its folder goes.
    await this.turnOver(ws).catch(() => undefined);
    await this.removeTree(ws.cwd, path.dirname(path.dirname(ws.cwd)), this.repoOf.get(ws.cwd));
    this.repoOf.delete(ws.cwd);
  }

  /** The worktree and git's record of it; only a folder under `<base>/nodes` is ever deleted. */
  private async removeTree(wt: string, base: string, repo?: string): Promise<void> {
    if (!isInside(wt, path.join(base, 'nodes')) || path.dirname(wt) !== path.join(base, 'nodes'))
      throw new PlacementError('SYNC_FAILED', `${wt} is not a node worktree of this placement; remove it by hand if it is yours.`);
    if (!fs.existsSync(wt)) return;
    // Its repository as the node's entry there says (never git's look into the folder the container wrote); a swapped `.git`: the one it was made in.
    let common = repo ? path.resolve(repo, (await git(['rev-parse', '--git-common-dir'], { cwd: repo })).stdout.trim()) : undefined;
    try {
      common = path.dirname(path.dirname(nodeGitDir(wt, [wt])));
    } catch {
      // (common stays the repository's, when known: the folder goes, and prune forgets its entry.)
    }
    if (common) await git(['--git-dir', common, 'worktree', 'remove', '--force', '--force', wt], { cwd: base }).catch(() => undefined);
    await fsp.rm(wt, { recursive: true, force: true });
    if (common) await git(['--git-dir', common, 'worktree', 'prune'], { cwd: base }).catch(() => undefined);
  }

  private async workDir(repo: string): Promise<string> {
    if (this.opts.workDir) return path.resolve(this.opts.workDir);
    const common = (await git(['rev-parse', '--git-common-dir'], { cwd: repo })).stdout.trim();
    return path.join(path.resolve(repo, common), 'arbor-placed', this.settings.name);
  }
}

/**
 * The node's entry in its repository (`<common>/worktrees/<name>`), read from the folder's `.git`
 * as text and checked both ways, as the ssh side's NODE_GIT (decision 0081): the folder is the
 * container's to write (`mounted`), so a `.git` that is not the file `worktree add` wrote, or
 * that names a folder the container could write, or an entry that does not name this folder
 * back, is refused — git run on it here would read the node's own config (core.fsmonitor runs a command).
 */
export function nodeGitDir(wt: string, mounted: readonly string[]): string {
  const unsafe = (why: string) =>
    new PlacementError('SYNC_FAILED', `the node folder ${wt} ${why}; nothing of it is collected (run the task on the placement again).`);
  const dotGit = path.join(wt, '.git');
  const st = fs.lstatSync(dotGit, { throwIfNoEntry: false });
  if (!st?.isFile()) throw unsafe('has a .git that is not the file a worktree has');
  const head = Buffer.alloc(4096);
  const fd = fs.openSync(dotGit, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  let n: number;
  try {
    n = fs.readSync(fd, head, 0, head.length, 0);
  } finally {
    fs.closeSync(fd);
  }
  const named = /^gitdir: (.+)$/m.exec(head.subarray(0, n).toString('utf8'))?.[1]?.trim();
  if (!named) throw unsafe('has a .git that names no repository');
  const gd = path.resolve(wt, named);
  let real = gd;
  try {
    real = fs.realpathSync.native(gd);
  } catch {
    // (missing: the entry check below says so)
  }
  if (path.basename(path.dirname(gd)) !== 'worktrees' || [gd, real].some((p) => mounted.some((m) => isInside(p, m))))
    throw unsafe('has a .git pointing outside its repository');
  let back: string | undefined;
  try {
    back = fs.readFileSync(path.join(gd, 'gitdir'), 'utf8').trim();
  } catch {
    back = undefined;
  }
  if (back !== path.join(fs.realpathSync(wt), '.git')) throw unsafe('has a .git pointing at another worktree');
  return gd;
}
