import * as fsp from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { git } from './git';

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

/** The commit HEAD names, or undefined in a repository without commits. */
export async function headOf(cwd: string): Promise<string | undefined> {
  const r = await git(['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], { cwd, okCodes: [1] });
  return r.code === 0 ? r.stdout.trim() : undefined;
}

/**
 * Snapshot the checkout at `top`. `excludes` (absolute paths: the store, the worktrees folder)
 * are left out when inside it. With `commit`, a commit of the tree is made on `parent` (none: a root commit).
 */
export async function snapshot(top: string, opts: { excludes?: readonly string[]; commit?: { message: string; parent?: string } } = {}): Promise<Snapshot> {
  const tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'arbor-index-'));
  try {
    const index = path.join(tmp, 'index');
    const own = path.resolve(top, (await git(['rev-parse', '--git-path', 'index'], { cwd: top })).stdout.trim());
    const env = { GIT_INDEX_FILE: index };
    const copied = await fsp.copyFile(own, index).then(
      () => true,
      () => false,
    );
    if (!copied && (await headOf(top))) await git(['read-tree', 'HEAD'], { cwd: top, env });
    const skip = (opts.excludes ?? []).map((p) => path.relative(top, p)).filter((r) => r !== '' && !r.startsWith('..') && !path.isAbsolute(r));
    await git(['add', '-A', '--', '.', ...skip.map((r) => `:(exclude)${r}`)], { cwd: top, env });
    const tree = (await git(['write-tree'], { cwd: top, env })).stdout.trim();
    if (!opts.commit) return { tree };
    const parent = opts.commit.parent ? ['-p', opts.commit.parent] : [];
    const commit = (await git(['commit-tree', tree, ...parent, '-m', opts.commit.message], { cwd: top })).stdout.trim();
    return { tree, commit };
  } finally {
    await fsp.rm(tmp, { recursive: true, force: true });
  }
}
