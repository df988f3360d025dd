import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CLEANUP_SCRIPT } from '../../src/core/placement/shell';
import { despiteWorktreeMadeOrThrow } from '../../src/core/placement/ssh';
import type { PlacedProcess, PlacedWorkspace, PlacementInfo, PlacementSettings, PlacementTransport } from '../../src/core/placement/types';
import { PlacementError } from '../../src/core/placement/types';
import { arborBin } from './cli-bundle';

// A real placement transport for the placed node's tests (issue 26, decision 0074): the "other
// side" is a folder on this machine — a bare repository, a worktree per node, a store per node —
// and the process is this repository's own `arbor acp` (bin/arbor.js) started there. Everything
// above the transport (the ACP driver, the mirrored log, the sync as git, reconnects) is real;
// T's ssh and container transports implement the same contract over the wire.

const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 'arbor',
  GIT_AUTHOR_EMAIL: 'arbor@localhost',
  GIT_COMMITTER_NAME: 'arbor',
  GIT_COMMITTER_EMAIL: 'arbor@localhost',
  GIT_CONFIG_NOSYSTEM: '1',
};

function git(cwd: string, ...args: string[]): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile('git', ['-c', 'core.hooksPath=/dev/null', ...args], { cwd, env: GIT_ENV, encoding: 'utf8', maxBuffer: 64 << 20 }, (err, stdout, stderr) =>
      err ? reject(new PlacementError('SYNC_FAILED', `git ${args.join(' ')} failed in ${cwd}: ${stderr || err.message}`)) : resolve(stdout),
    ),
  );
}

/** A git step run again, as the ssh transport's, while it fails only because a worktree was being made beside it. */
const retried = (step: () => Promise<string>): Promise<string> => despiteWorktreeMadeOrThrow(step);

export interface LocalAcpOptions {
  /** The placement's name (`placement: "<name>"`). */
  name: string;
  /** The "other side": a folder this transport owns. */
  remoteDir: string;
  /** The model endpoint `arbor acp` uses there. */
  baseUrl: string;
  model?: string;
  /** Offer the kept connection (one `arbor acp` for every node, decision 0077); default true. False: a process per turn. */
  keep?: boolean;
  /**
   * The workspace over the kept connection (decision 0081): its `arbor acp` gets `--node-repos`
   * and the transport says `syncOverLink`. `'old-arbor'`: it says so, but the far side has no
   * `--node-repos` (an older arbor): the methods are missing and push/fetch must take over.
   */
  linkSync?: boolean | 'old-arbor';
}

export interface LocalAcpTransport extends PlacementTransport {
  /** How many prepares, collects, per-turn processes, kept connections and cleanups it made (what the tests check). */
  readonly counts: { prepare: number; collect: number; process: number; connection: number; cleanup: number };
  /** The bare repository on the other side. */
  readonly remoteRepo: string;
}

/** `arbor acp` in a worktree copy under `remoteDir`: prepare = push + worktree there; collect = commit there + fetch here. */
export function localAcpTransport(o: LocalAcpOptions): LocalAcpTransport {
  const settings: PlacementSettings = {
    name: o.name,
    kind: 'ssh',
    host: '127.0.0.1',
    remoteDir: o.remoteDir,
    baseUrl: o.baseUrl,
    ...(o.model ? { model: o.model } : {}),
  };
  const remoteRepo = path.join(o.remoteDir, 'repo.git');
  const counts = { prepare: 0, collect: 0, process: 0, connection: 0, cleanup: 0 };
  // One git at a time on the bare repository for the repository made and a node's worktree removed.
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(fn: () => Promise<T>): Promise<T> => {
    const next = queue.then(fn, fn);
    queue = next.catch(() => undefined);
    return next;
  };
  let checked: Promise<PlacementInfo> | undefined;
  const ready = serial(async () => {
    fs.mkdirSync(o.remoteDir, { recursive: true });
    if (!fs.existsSync(remoteRepo)) await git(o.remoteDir, 'init', '-q', '--bare', remoteRepo);
  });
  return {
    settings,
    counts,
    remoteRepo,
    check() {
      checked ??= (async () => {
        const t0 = performance.now();
        const version = await new Promise<string>((resolve, reject) =>
          execFile(process.execPath, [arborBin(), '--version'], { encoding: 'utf8' }, (err, out) =>
            err ? reject(new PlacementError('NO_ARBOR', `arbor --version failed: ${err.message}`)) : resolve(out.trim()),
          ),
        );
        if (!version) throw new PlacementError('NO_ARBOR', 'arbor --version said nothing');
        return { name: o.name, kind: 'ssh' as const, where: `local:${o.remoteDir}`, rttMs: Math.round(performance.now() - t0) };
      })();
      return checked.then((i) => ({ ...i }));
    },
    async prepare(node) {
      counts.prepare++;
      await ready;
      const wt = path.join(o.remoteDir, 'wt', node.nodeId);
      // As the ssh transport does: a push that met another node's worktree being made there is tried again.
      await retried(() => git(node.repo, 'push', '-q', '--force', remoteRepo, `${node.commit}:refs/arbor/base/${node.nodeId}`));
      // As the ssh transport's PREPARE_SCRIPT does: each node's worktree is made beside the others', not one after another
      // (git keeps each in worktrees/<name>, a name per node; decision 0077 measured the queue this used to be).
      if (fs.existsSync(wt)) await git(remoteRepo, 'worktree', 'remove', '--force', wt);
      await git(remoteRepo, 'worktree', 'add', '-q', '--detach', wt, node.commit);
      return { nodeId: node.nodeId, base: node.commit, cwd: wt };
    },
    process(ws: PlacedWorkspace): PlacedProcess {
      counts.process++;
      const store = path.join(o.remoteDir, 'stores', ws.nodeId);
      return {
        command: process.execPath,
        args: [arborBin(), 'acp', '--workspace', ws.cwd, '--store', store, '--base-url', o.baseUrl, ...(o.model ? ['--model', o.model] : [])],
        env: {},
      };
    },
    ...(o.keep === false
      ? {}
      : {
          connection(): PlacedProcess {
            counts.connection++;
            const nodes = path.join(o.remoteDir, 'wt');
            const stores = path.join(o.remoteDir, 'stores');
            fs.mkdirSync(nodes, { recursive: true });
            fs.mkdirSync(stores, { recursive: true });
            return {
              command: process.execPath,
              args: [
                // The far process's own Node flags, from the runner's FAR_NODE_ARGS (e.g. `--cpu-prof --cpu-prof-dir=DIR`, which NODE_OPTIONS refuses).
                ...(process.env.FAR_NODE_ARGS?.split(' ').filter(Boolean) ?? []),
                arborBin(),
                'acp',
                '--nodes',
                nodes,
                '--node-stores',
                stores,
                ...(o.linkSync === true ? ['--node-repos', path.join(o.remoteDir, 'repos')] : []),
                '--base-url',
                o.baseUrl,
                ...(o.model ? ['--model', o.model] : []),
              ],
              env: {},
            };
          },
        }),
    ...(o.linkSync ? { syncOverLink: true } : {}),
    async collect(ws, repo) {
      counts.collect++;
      await git(ws.cwd, 'add', '-A');
      const changed = await git(ws.cwd, 'diff', '--cached', '--quiet').then(
        () => false,
        () => true,
      );
      if (changed) await git(ws.cwd, 'commit', '-q', '--no-verify', '-m', `arbor: placed node ${ws.nodeId}`);
      const head = (await git(ws.cwd, 'rev-parse', 'HEAD')).trim();
      const ref = `refs/arbor/placed/${ws.nodeId}`;
      await git(ws.cwd, 'update-ref', ref, head);
      // As the ssh transport does: a fetch that met another child's worktree being made here is tried again.
      await retried(() => git(repo, 'fetch', '-q', '--no-tags', remoteRepo, `+${ref}:${ref}`));
      return { commit: head };
    },
    async cleanup(ws) {
      counts.cleanup++;
      // A worktree made over the link belongs to repos/<key>.git: the ssh transport's own cleanup script finds it from the worktree.
      if (o.linkSync === true)
        await new Promise<void>((resolve) => execFile('sh', ['-c', CLEANUP_SCRIPT, 'arbor', ws.cwd, `refs/arbor/base/${ws.nodeId}`], () => resolve()));
      else await serial(() => git(remoteRepo, 'worktree', 'remove', '--force', ws.cwd).catch(() => ''));
    },
  };
}
