import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { git, WorktreeError } from '../worktree/git';
import { isInside } from '../worktree/names';
import { lastLine, transportEnv } from './exec';
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

export class ContainerTransport implements PlacementTransport {
  private readonly engine: string;

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
      if (fs.existsSync(wt)) await this.removeTree(wt, base);
      await fsp.mkdir(path.dirname(wt), { recursive: true });
      await git(['worktree', 'add', '--quiet', '--detach', wt, node.commit], { cwd: node.repo });
      signal?.throwIfAborted();
      const cwd = fs.realpathSync(wt);
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
    try {
      // Everything in the worktree (new, changed, deleted; ignored files stay) on top of its HEAD.
      await git(['add', '-A'], { cwd: ws.cwd });
      signal?.throwIfAborted();
      const tree = (await git(['write-tree'], { cwd: ws.cwd })).stdout.trim();
      const head = (await git(['rev-parse', 'HEAD'], { cwd: ws.cwd })).stdout.trim();
      const headTree = (await git(['rev-parse', `${head}^{tree}`], { cwd: ws.cwd })).stdout.trim();
      const commit = tree === headTree ? head : ((await this.previous(ws, tree, head)) ?? (await this.commitTree(ws, tree, head)));
      await git(['update-ref', placedRef(ws.nodeId), commit], { cwd: repo });
      return { commit };
    } catch (err) {
      if (err instanceof WorktreeError) throw new PlacementError('SYNC_FAILED', `could not commit the changes of ${ws.nodeId} in ${ws.cwd}: ${err.message}`);
      throw err;
    }
  }

  /** The last collect's commit when nothing changed since (a repeated collect makes no new commit). */
  private async previous(ws: PlacedWorkspace, tree: string, head: string): Promise<string | undefined> {
    const ref = placedRef(ws.nodeId);
    const prev = await git(['rev-parse', '-q', '--verify', `${ref}^{commit}`], { cwd: ws.cwd, okCodes: [1] });
    if (prev.code !== 0) return undefined;
    const c = prev.stdout.trim();
    const [t, p] = (await git(['rev-parse', `${c}^{tree}`, `${c}^`], { cwd: ws.cwd, okCodes: [128] })).stdout.trim().split('\n');
    return t === tree && p === head ? c : undefined;
  }

  private async commitTree(ws: PlacedWorkspace, tree: string, head: string): Promise<string> {
    return (await git(['commit-tree', tree, '-p', head, '-m', `arbor: changes of ${ws.nodeId} on ${this.settings.name}`], { cwd: ws.cwd })).stdout.trim();
  }

  async cleanup(ws: PlacedWorkspace): Promise<void> {
    await this.removeTree(ws.cwd, path.dirname(path.dirname(ws.cwd)));
  }

  /** The worktree and git's record of it; only a folder under `<base>/nodes` is ever deleted. */
  private async removeTree(wt: string, base: string): Promise<void> {
    if (!isInside(wt, path.join(base, 'nodes')) || path.dirname(wt) !== path.join(base, 'nodes'))
      throw new PlacementError('SYNC_FAILED', `${wt} is not a node worktree of this placement; remove it by hand if it is yours.`);
    if (!fs.existsSync(wt)) return;
    const common = await git(['rev-parse', '--git-common-dir'], { cwd: wt }).then(
      (r) => path.resolve(wt, r.stdout.trim()),
      () => undefined,
    );
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
