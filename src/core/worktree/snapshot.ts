import * as fsp from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { confinedAdd } from './confined';
import { git, notARepo, WorktreeError } from './git';
import { writeIndexTree } from './index-tree';
import { canWriteObjects, commitBody, writeCommit } from './objects';

// The state of a checkout as a git tree, without touching its index, HEAD or files (decision
// 0060): a copy of its index (so unchanged files are not hashed again) becomes a separate index
// (`GIT_INDEX_FILE`), `git add -A` records the working tree in it — tracked changes, deletions and
// untracked files that are not ignored — and `write-tree` makes the tree. `git stash create`
// would leave untracked files out.

export interface Snapshot {
  tree: string;
  /** Set when a commit was asked for. */
  commit?: string;
}

/** Where a checkout's repository is, in one `git rev-parse`: its top, its index file, its HEAD commit (none in a repository without commits). */
export interface RepoFacts {
  top: string;
  index: string;
  /** The repository's objects folder (the common one, for a linked worktree). */
  objects: string;
  head?: string;
}

/** The repository facts of `dir` (a `NOT_A_REPO` error saying what to do outside one). */
export async function repoFacts(dir: string): Promise<RepoFacts> {
  let out: string;
  try {
    // `--verify -q HEAD` prints nothing (exit 1) where there is no commit yet; the other lines come first.
    out = (await git(['rev-parse', '--show-toplevel', '--git-path', 'index', '--git-path', 'objects', '--verify', '-q', 'HEAD'], { cwd: dir, okCodes: [1] }))
      .stdout;
  } catch (err) {
    if (err instanceof WorktreeError && err.code === 'NO_GIT') throw err;
    throw notARepo(dir, err);
  }
  const [top, index, objects, head] = out.split('\n');
  if (!top || !index || !objects) throw notARepo(dir);
  return { top, index: path.resolve(dir, index), objects: path.resolve(dir, objects), ...(head ? { head } : {}) };
}

/** The commit HEAD names, or undefined in a repository without commits. */
export async function headOf(cwd: string): Promise<string | undefined> {
  const r = await git(['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], { cwd, okCodes: [1] });
  return r.code === 0 ? r.stdout.trim() : undefined;
}

/**
 * Snapshot the checkout at `top`. `excludes` (absolute paths: the store, the worktrees folder)
 * are left out when inside it. With `commit`, a commit of the tree is made on `parent` (none: a root commit).
 * `index`: the checkout's index file when the caller already knows it (one git process fewer);
 * `objects`: its objects folder, where the commit is then written in-process (`objects.ts`).
 * `bwrap`: the bubblewrap the deployment's commands run under; git's `add -A` runs under it (`confined.ts`).
 */
export async function snapshot(
  top: string,
  opts: { bwrap: string; excludes?: readonly string[]; commit?: { message: string; parent?: string }; index?: string; objects?: string },
): Promise<Snapshot> {
  const tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'arbor-index-'));
  try {
    const index = path.join(tmp, 'index');
    const own = opts.index ?? path.resolve(top, (await git(['rev-parse', '--git-path', 'index'], { cwd: top })).stdout.trim());
    const env = { GIT_INDEX_FILE: index };
    const copied = await copyIndex(own, index);
    if (!copied && (await headOf(top))) await git(['read-tree', 'HEAD'], { cwd: top, env });
    const skip = (opts.excludes ?? []).map((p) => path.relative(top, p)).filter((r) => r !== '' && !r.startsWith('..') && !path.isAbsolute(r));
    // Confined (`confined.ts`): a folder swapped for a link never leads git out of what a command sees.
    await confinedAdd(top, {
      bwrap: opts.bwrap,
      index,
      pathspec: ['.', ...skip.map((r) => `:(exclude)${r}`)],
      ...(opts.objects ? { objects: opts.objects } : {}),
    });
    // The tree in-process where the index is a plain one of a sha1 repository (`index-tree.ts`), else git's.
    const mine = opts.objects && canWriteObjects(opts.commit?.parent) && opts.commit?.parent ? await writeIndexTree(index, opts.objects) : undefined;
    const tree = mine ?? (await git(['write-tree'], { cwd: top, env })).stdout.trim();
    if (!opts.commit) return { tree };
    if (opts.objects && canWriteObjects(opts.commit.parent))
      return { tree, commit: await writeCommit(opts.objects, commitBody(tree, opts.commit.parent, opts.commit.message)) };
    const parent = opts.commit.parent ? ['-p', opts.commit.parent] : [];
    const commit = (await git(['commit-tree', tree, ...parent, '-m', opts.commit.message], { cwd: top })).stdout.trim();
    return { tree, commit };
  } finally {
    await fsp.rm(tmp, { recursive: true, force: true });
  }
}

/**
 * Copy an index, keeping its mtime (floored to the second): git rehashes an entry whose file is
 * not older than the index ("racily clean"), and a copy stamped now would make a file changed in
 * the same instant as the user's last index write look unchanged — its change missed.
 */
async function copyIndex(from: string, to: string): Promise<boolean> {
  try {
    const st = await fsp.stat(from);
    await fsp.copyFile(from, to);
    const secs = Math.floor(st.mtimeMs / 1000);
    await fsp.utimes(to, secs, secs);
    return true;
  } catch {
    return false;
  }
}
