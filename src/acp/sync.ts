import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { bundleOfPack, ingestBundle } from '../core/placement/bundle';
import { baseRef, placedRef } from '../core/placement/layout';
import { despiteWorktreeMadeOrThrow } from '../core/placement/ssh';
import { CHUNK_BYTES, MAX_SYNC_BYTES, SYNC_METHODS, SYNC_TOO_BIG, type SyncMethod, type SyncWire, TRANSFER_NAME } from '../core/placement/sync-wire';
import { bareRepo, git, initFinished, WorktreeError } from '../core/worktree/git';
import { repoLock } from '../core/worktree/repo-lock';
import { syncRefused } from './errors';
import { present, ReleasedNodes, removeNodeFolder } from './released-nodes';
import { SpareWorktrees } from './spare-worktrees';
import { commitNode, commitOf, type NodeDirs, named, nodeFolder, nodeGitDir, nodeOf, repoDirOf } from './sync-node';

// `arbor acp --node-repos DIR`'s side of the workspace over the kept connection (decision 0081):
// a handler per `_arbor/sync/*` method. `have` + `chunk` + `prepare` are what a `git push` and the
// push path's receive-pack script did (the commit there, the node's base ref, its worktree);
// `collect` + `read` what its upload-pack script and `git fetch` did, over the link that already
// carries the node's session. Bundles wait in `<repos>/.transfers`, outside every node's folder.

/** A transfer untouched this long was abandoned (a dropped link, a far side restarted): the next start removes it. */
const STALE_TRANSFER_MS = 24 * 60 * 60 * 1000;

type Handler<M extends SyncMethod> = (params: SyncWire[M][0]) => Promise<SyncWire[M][1]>;
export type SyncHandlers = { [M in SyncMethod]: Handler<M> };

/** How long a prepare waits for the releases under way (then makes its worktree anew). */
const RELEASE_WAIT_MS = 5_000;
/** How long the far side's close waits for them before it removes the spares. */
const RELEASE_CLOSE_WAIT_MS = 15_000;

export class NodeSync {
  private readonly transfers: string;
  /** Finished nodes' worktrees, reused by the next nodes (decision 0114). */
  private readonly spares: SpareWorktrees;
  /** Releases answered and still under way (the node's close, its move to the spares), by node. */
  private readonly releasing = new Map<string, Promise<void>>();
  /** Nodes released here and not yet gone (amended 0114): what a release could not finish is swept. */
  private readonly released: ReleasedNodes;
  /** The sweep under way (one at a time). */
  private sweeping: Promise<void> | undefined;

  constructor(
    private readonly dirs: NodeDirs,
    /** A released node's folder (real path) is let go of by whatever still holds it open (its harness: its MCP servers, its sandboxes). */
    private readonly letGo: (root: string) => Promise<unknown> = async () => undefined,
    /** A line for the person running the far side (stderr). */
    warn: (line: string) => void = () => undefined,
  ) {
    this.transfers = path.join(dirs.repos, '.transfers');
    sweep(this.transfers, STALE_TRANSFER_MS);
    this.spares = new SpareWorktrees(dirs.repos);
    this.released = new ReleasedNodes(dirs.repos, warn);
  }

  /** The far side closes: the releases under way end first, then no released node's folder and no kept worktree stays behind. */
  async close(): Promise<void> {
    await this.releasesSettled(RELEASE_CLOSE_WAIT_MS);
    await this.sweep();
    await this.released.close();
    await this.spares.removeAll();
  }

  /**
   * The folders of released nodes no release is finishing removed: this process's whose release
   * could not remove them, and those of a far process killed under way (amended 0114). Never a
   * node without a record (one the home side still owns), nor one another live process released.
   */
  sweep(): Promise<void> {
    this.sweeping ??= (async () => {
      for (const r of await this.released.orphans((node) => this.releasing.has(node))) {
        const repoDir = path.join(this.dirs.repos, `${r.repo}.git`);
        const wt = path.join(this.dirs.nodes, r.node);
        // The folder first: while it stays, nothing else is done (no repository lock, no git run).
        const kept = removeNodeFolder(wt);
        if (kept) {
          this.released.failed(r.node, `its folder ${wt}`, kept, 'remove it by hand: the next far process to start here then drops its record');
          continue;
        }
        if (fs.existsSync(repoDir))
          await this.lock(repoDir)
            .alone(() => git(['worktree', 'prune'], bareRepo(repoDir)))
            .catch(() => undefined);
        await git(['update-ref', '-d', baseRef(r.node)], bareRepo(repoDir)).catch(() => undefined);
        const left = this.released.done(r.node);
        if (left) this.released.failed(r.node, 'its record', left, 'its folder is gone; remove the record by hand');
      }
    })()
      .catch(() => undefined) // (what cannot be removed now is tried again by the next sweep)
      .finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  /** A node's folder removed as `removeNodeFolder` does (no git run in it), then its worktree entry pruned. */
  private async discard(repoDir: string, wt: string): Promise<void> {
    removeNodeFolder(wt);
    if (fs.existsSync(repoDir)) await this.lock(repoDir).alone(() => git(['worktree', 'prune'], bareRepo(repoDir)));
  }

  /** The releases under way settled, or `ms` passed (a release never rejects). */
  private async releasesSettled(ms: number): Promise<void> {
    if (this.releasing.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(this.releasing.values()), new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
    clearTimeout(timer);
  }

  /** Every method by its wire name (the server registers each). */
  methods(): [string, (params: unknown) => Promise<unknown>][] {
    const h = this.handlers();
    return (Object.keys(SYNC_METHODS) as SyncMethod[]).map((m) => {
      const handler = h[m] as (params: unknown) => Promise<unknown>;
      return [SYNC_METHODS[m], (p: unknown) => guarded(() => handler(objectOf(p)))];
    });
  }

  handlers(): SyncHandlers {
    return {
      have: async ({ repo, commits }) => {
        const repoDir = repoDirOf(this.dirs, repo);
        if (!Array.isArray(commits) || commits.length > 1000) throw syncRefused('BAD_SYNC_NAME', 'commits must be a list of at most 1000 commit ids');
        const asked = commits.map((c) => commitOf('commit', c));
        if (!initFinished(repoDir))
          await this.lock(repoDir).alone(async () => {
            fs.mkdirSync(this.dirs.repos, { recursive: true });
            // Over a half-made one too (a far side killed in the middle of this): `git init` completes it.
            if (!initFinished(repoDir)) await git(['init', '-q', '--bare', repoDir], { cwd: this.dirs.repos });
          });
        if (asked.length === 0) return { have: [] };
        const out = await git(['cat-file', '--batch-check=%(objectname) %(objecttype)'], { ...bareRepo(repoDir), input: `${asked.join('\n')}\n` });
        return { have: out.stdout.split('\n').flatMap((l) => (/^[0-9a-f]+ commit$/.test(l) ? [l.split(' ')[0]!] : [])) };
      },
      chunk: async ({ transfer, offset, data }) => {
        const file = this.transferFile('in', transfer);
        if (typeof data !== 'string' || !Number.isSafeInteger(offset))
          throw syncRefused('BAD_SYNC_NAME', 'a chunk needs a whole-number offset and base64 data');
        const bytes = Buffer.from(data, 'base64');
        if (bytes.length > CHUNK_BYTES) throw syncRefused('BAD_SYNC_NAME', `a chunk carries at most ${CHUNK_BYTES} bytes, this one ${bytes.length}`);
        fs.mkdirSync(this.transfers, { recursive: true });
        const size = fs.existsSync(file) ? fs.lstatSync(file).size : 0;
        if (offset !== size) throw syncRefused('SYNC_FAILED', `chunk at offset ${offset} but ${size} bytes are here; start the transfer again`);
        if (size + bytes.length > MAX_SYNC_BYTES) {
          fs.rmSync(file, { force: true });
          throw syncRefused(SYNC_TOO_BIG, `the bundle is past ${MAX_SYNC_BYTES} bytes; send it with git push instead`);
        }
        const fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_APPEND | fs.constants.O_NOFOLLOW, 0o600);
        try {
          fs.writeSync(fd, bytes);
        } finally {
          fs.closeSync(fd);
        }
        return { size: size + bytes.length };
      },
      prepare: async ({ repo, node, commit, transfer, data }) => {
        const repoDir = repoDirOf(this.dirs, repo);
        const id = nodeOf(node);
        const at = commitOf('commit', commit);
        if (!initFinished(repoDir)) throw syncRefused('SYNC_FAILED', `repository ${repo} is not here yet; ask ${SYNC_METHODS.have} first`);
        const bundle = transfer === undefined ? (data === undefined ? undefined : this.inline(data)) : this.taken(transfer);
        const lock = this.lock(repoDir);
        const wt = path.join(this.dirs.nodes, id);
        // The commit in (a pack of its own: no ref is read, so nodes' worktrees may be made beside it).
        if (bundle) await ingestBundle(bareRepo(repoDir), bundle);
        // The node's worktree entry goes alone: `git worktree add` (and a node prepared again: the old
        // worktree removed, the prune) reads every other worktree's entry, and fails on one half made
        // ("failed to read worktrees/<name>/commondir"). Only the entry: no file is checked out yet.
        // A finished node's worktree is taken where one is kept (decision 0114): reset, it writes only the files that differ.
        fs.mkdirSync(this.dirs.nodes, { recursive: true });
        const entry = (reuse: boolean) =>
          lock.alone(async () => {
            if (fs.existsSync(wt) || isLink(wt)) {
              await git(['worktree', 'remove', '--force', '--force', wt], bareRepo(repoDir)).catch(() => fs.rmSync(wt, { recursive: true, force: true }));
              await git(['worktree', 'prune'], bareRepo(repoDir));
            }
            if (reuse && (await this.spares.take(repoDir, wt))) return true;
            // (Beside a fallback's push into the same repository, another process: tried again, as that path does.)
            await despiteWorktreeMadeOrThrow(() => git(['worktree', 'add', '--quiet', '--no-checkout', '--detach', wt, at], bareRepo(repoDir)));
            return false;
          });
        // The files (the costly part) side by side with other nodes', reading no other worktree; the base ref (which keeps the commit) beside them.
        // Git is told the node's git folder, checked both ways, never left to find it through a `.git` the node's agent may have rewritten meanwhile.
        const files = (reused: boolean): Promise<unknown> => {
          const gitDir = nodeGitDir(repoDir, nodeFolder(this.dirs, id), id);
          return reused ? this.spares.reset(gitDir, wt, at) : git(['--git-dir', gitDir, '--work-tree', wt, 'read-tree', '-u', '--reset', 'HEAD'], { cwd: wt });
        };
        // (The checkout, the longer of the two, started first.)
        // Releases answered and still under way end first (their worktrees are the spares to take),
        // for a while only: a harness whose close hangs must not hold up every node after it.
        await this.releasesSettled(RELEASE_WAIT_MS);
        // (A node is never prepared again after its release; were it, its record must not sweep its new folder.)
        this.released.done(id);
        await this.sweep();
        const reused = await entry(true);
        const [ready] = await Promise.all([
          lock
            .shared(() => files(reused))
            .then(
              () => true,
              (err) => (reused ? false : Promise.reject(err)),
            ),
          git(['update-ref', baseRef(id), at], bareRepo(repoDir)),
        ]);
        // A kept worktree that cannot be reset to exactly the commit is not used: the node's worktree is made anew.
        if (!ready) await entry(false).then(() => lock.shared(() => files(false)));
        return { cwd: fs.realpathSync(wt) };
      },
      collect: async ({ repo, node, base, message }) => {
        const repoDir = repoDirOf(this.dirs, repo);
        const id = nodeOf(node);
        const from = commitOf('base', base);
        const wt = nodeFolder(this.dirs, id);
        if (!fs.existsSync(path.join(this.dirs.stores, id)))
          throw syncRefused(
            'UNKNOWN_NODE',
            `node ${id} has no store here: no session of it ever ran on this side; run a turn of it (session/new in its folder) before collecting`,
          );
        const gitDir = nodeGitDir(repoDir, wt, id);
        const ref = placedRef(id);
        const text = typeof message === 'string' && message.trim() ? message.slice(0, 1000) : `arbor: changes of ${id}`;
        // The pack back is made beside the ref's update (from the commit, not the ref), and rides on
        // the answer when it is small (most collects); a bigger one is bundled into a transfer file below.
        let small: Buffer | undefined;
        const packSmall = async (c: string) => {
          if (c === from) return;
          const p = await git(['pack-objects', '--stdout', '--thin', '--delta-base-offset', '--revs', '-q'], {
            ...bareRepo(repoDir),
            input: `${c}\n^${from}\n`,
            maxBuffer: CHUNK_BYTES,
            cutOk: true,
          });
          if (!p.cut) small = bundleOfPack(p.bytes, from, c, ref);
        };
        const commit = await this.lock(repoDir).shared(() => commitNode(gitDir, wt, ref, text, path.join(repoDir, 'objects'), packSmall));
        if (commit === from) return { commit };
        if (small && small.length <= CHUNK_BYTES) return { commit, data: small.toString('base64') };
        const transfer = randomBytes(12).toString('hex');
        const file = this.transferFile('out', transfer);
        fs.mkdirSync(this.transfers, { recursive: true });
        await git(['bundle', 'create', '--quiet', file, ref, `^${from}`], bareRepo(repoDir));
        const size = fs.statSync(file).size;
        if (size > MAX_SYNC_BYTES) {
          fs.rmSync(file, { force: true });
          throw syncRefused(SYNC_TOO_BIG, `node ${id}'s changes make a bundle of ${size} bytes, past ${MAX_SYNC_BYTES}; fetch them with git instead`);
        }
        return { commit, bundle: { transfer, size } };
      },
      release: async ({ repo, node }) => {
        const repoDir = repoDirOf(this.dirs, repo);
        const id = nodeOf(node);
        const wt = nodeFolder(this.dirs, id);
        // Kept only as the worktree it was made: its folder and `.git` checked both ways (else UNSAFE_NODE, and it stays for cleanup).
        nodeGitDir(repoDir, wt, id);
        // Written down before the answer (the home side forgets the node's copy on it): what this
        // release cannot finish is swept by the next prepare or close (amended 0114).
        await this.released.mark(id, path.basename(repoDir, '.git'));
        // Its sessions leave at once (`letGo` drops them before its first await: a prompt to one is
        // refused from here on). The answer does not wait for the harness's close and the move (a
        // fan-out's releases queue on the repository's lock): the child's result goes on; the node's
        // folder is a spare only once both are done. A `prepare` waits for releases under way first.
        const closing = this.letGo(fs.realpathSync(wt));
        const pending = (async () => {
          try {
            // Nothing of the node (its harness: MCP servers started in its folder, its resident sandboxes) may outlive it into the next node's files.
            await closing;
            await this.lock(repoDir).alone(() => this.spares.keep(repoDir, wt));
          } catch {
            // The close or the move threw: nobody else will remove the folder (the home side forgot it).
            await this.discard(repoDir, wt).catch(() => undefined);
          }
          await git(['update-ref', '-d', baseRef(id)], bareRepo(repoDir)).catch(() => undefined);
          if (!present(wt)) this.released.done(id);
        })().catch(() => undefined);
        this.releasing.set(id, pending);
        void pending.finally(() => this.releasing.get(id) === pending && this.releasing.delete(id));
        return {};
      },
      read: async ({ transfer, offset }) => {
        const file = this.transferFile('out', transfer);
        if (!Number.isSafeInteger(offset) || offset < 0) throw syncRefused('BAD_SYNC_NAME', 'read needs a whole-number offset of 0 or more');
        let fd: number;
        try {
          fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
        } catch {
          throw syncRefused('SYNC_FAILED', `no bundle ${transfer} is waiting here (it was read to its end, or the far side restarted); collect again`);
        }
        try {
          const size = fs.fstatSync(fd).size;
          const buf = Buffer.alloc(Math.max(0, Math.min(CHUNK_BYTES, size - offset)));
          const n = buf.length > 0 ? fs.readSync(fd, buf, 0, buf.length, offset) : 0;
          const eof = offset + n >= size;
          if (eof) fs.rmSync(file, { force: true });
          return { data: buf.subarray(0, n).toString('base64'), eof };
        } finally {
          fs.closeSync(fd);
        }
      },
    };
  }

  /** An inline bundle (prepare's `data`). */
  private inline(data: unknown): Buffer {
    if (typeof data !== 'string') throw syncRefused('BAD_SYNC_NAME', 'data must be base64 text');
    const bytes = Buffer.from(data, 'base64');
    if (bytes.length > CHUNK_BYTES) throw syncRefused('BAD_SYNC_NAME', `an inline bundle carries at most ${CHUNK_BYTES} bytes; send it in chunks`);
    return bytes;
  }

  /** An uploaded bundle's bytes, its file gone. */
  private taken(transfer: unknown): Buffer {
    const file = this.transferFile('in', transfer);
    try {
      const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
      try {
        return fs.readFileSync(fd);
      } finally {
        fs.closeSync(fd);
      }
    } catch {
      throw syncRefused('SYNC_FAILED', `no upload ${String(transfer)} is here (the far side restarted, or it was used); prepare again`);
    } finally {
      fs.rmSync(file, { force: true });
    }
  }

  private lock(repoDir: string) {
    return repoLock(path.resolve(repoDir));
  }

  private transferFile(way: 'in' | 'out', transfer: unknown): string {
    const name = named('transfer', transfer, (v) => {
      if (!TRANSFER_NAME.test(v)) throw new Error(`a transfer is named by 8 to 64 lowercase letters and digits, got "${v.slice(0, 80)}"`);
      return v;
    });
    return path.join(this.transfers, `${way}-${name}`);
  }
}

function objectOf(p: unknown): Record<string, unknown> {
  if (!p || typeof p !== 'object' || Array.isArray(p)) throw syncRefused('BAD_SYNC_NAME', 'params must be an object');
  return p as Record<string, unknown>;
}

/** A git failure there as SYNC_FAILED in git's words (a refusal already coded passes as it is). */
async function guarded<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof WorktreeError) throw syncRefused('SYNC_FAILED', err.message);
    throw err;
  }
}

function isLink(p: string): boolean {
  try {
    return fs.lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}

/** Transfers nobody finished (older than `ms`) go; what cannot be read or removed is left. */
function sweep(dir: string, ms: number): void {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return;
  }
  for (const n of names) {
    const p = path.join(dir, n);
    try {
      if (Date.now() - fs.lstatSync(p).mtimeMs > ms) fs.rmSync(p, { force: true });
    } catch {
      // gone meanwhile, or not ours to remove
    }
  }
}
