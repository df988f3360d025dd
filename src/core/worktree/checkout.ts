import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { git, WorktreeError } from './git';
import { isInside } from './names';
import { lockOf } from './repo-lock';
import { repoFacts, snapshot } from './snapshot';

// Making and removing a child's worktree (decision 0060). Arbor does this outside every
// sandbox; the child only ever writes inside the folder made here.

/** Where a worktree is: what its `worktree` events record. */
export interface WorktreePlace {
  repo: string;
  path: string;
  root: string;
  branch: string;
  base: string;
}

export interface CreateRequest {
  /** The parent's first root: the repository holding it is the one checked out. */
  parentRoot: string;
  /** The worktree's folder (under the worktrees folder, named by the child id). */
  dir: string;
  branch: string;
  /** Paths never copied into the child's base (the store, the worktrees folder). */
  excludes: readonly string[];
  /** A line for the base commit's message. */
  note: string;
}

/**
 * A new worktree on a new branch, from the parent's current state: a commit of its working tree
 * (uncommitted and untracked files included, ignored ones not) on top of HEAD, made with a
 * separate index, so the user's index, HEAD and files stay as they are.
 *
 * Two lines run at once (issue 25): the base (`rev-parse`, then the snapshot's `add -A`, its
 * tree and commit written in-process where the index is a plain one) and an empty worktree (`git worktree add --no-checkout --detach`:
 * git's own bookkeeping, no files). When both are there, one `git checkout -b <branch> <base>`
 * in the new worktree writes the base's files and starts the branch — the checkout a plain
 * `git worktree add` does anyway. A repository without commits (no HEAD to start the empty
 * worktree from) takes the sequential way. Whatever fails, nothing of ours is left behind.
 */
export async function createWorktree(req: CreateRequest): Promise<WorktreePlace> {
  await fsp.mkdir(path.dirname(req.dir), { recursive: true });
  // Git's bookkeeping of a new worktree goes alone in this repository (repo-lock.ts): another child's add beside it fails.
  const lock = lockOf(req.parentRoot);
  const empty = lock.alone(() => git(['worktree', 'add', '--quiet', '--no-checkout', '--detach', req.dir, 'HEAD'], { cwd: req.parentRoot }));
  const based = (async () => {
    const facts = await repoFacts(req.parentRoot);
    const repo = fs.realpathSync(facts.top);
    const commit = { message: `arbor: base of ${req.note}`, ...(facts.head ? { parent: facts.head } : {}) };
    const base = await snapshot(repo, { excludes: req.excludes, index: facts.index, objects: facts.objects, commit });
    return { repo, head: facts.head, base: base.commit! };
  })();
  const [made, b] = await Promise.allSettled([empty, based]);
  const undo = () => removeWorktree({ repo: req.parentRoot, path: req.dir, branch: '' }, path.dirname(req.dir)).catch(() => undefined);
  if (b.status === 'rejected') {
    if (made.status === 'fulfilled') await undo();
    throw b.reason;
  }
  const { repo, head, base } = b.value;
  if (made.status === 'rejected') {
    if (head) throw made.reason;
    await lock.alone(() => git(['worktree', 'add', '--quiet', '-b', req.branch, req.dir, base], { cwd: repo }));
  } else {
    try {
      // The files beside other children's (it reads their entries, never one half made).
      await lock.shared(() => git(['checkout', '--quiet', '--no-recurse-submodules', '-b', req.branch, base], { cwd: req.dir }));
    } catch (err) {
      await undo();
      throw err;
    }
  }
  const rel = path.relative(repo, fs.realpathSync(req.parentRoot));
  const wt = fs.realpathSync(req.dir);
  return { repo, path: wt, root: rel ? path.join(wt, rel) : wt, branch: req.branch, base };
}

/**
 * Record the worktree's files as a commit on its branch (Arbor's, outside the sandbox), when
 * anything changed; the branch's head either way.
 */
export async function commitWorktree(place: WorktreePlace, message: string): Promise<string> {
  await git(['add', '-A'], { cwd: place.path });
  const changed = (await git(['diff', '--cached', '--quiet'], { cwd: place.path, okCodes: [1] })).code === 1;
  if (changed) await git(['commit', '--quiet', '--no-verify', '-m', message], { cwd: place.path });
  return (await git(['rev-parse', 'HEAD'], { cwd: place.path })).stdout.trim();
}

/** The branch's head, or undefined when the branch is gone. */
export async function branchHead(repo: string, branch: string): Promise<string | undefined> {
  const r = await git(['rev-parse', '--verify', '--quiet', `refs/heads/${branch}^{commit}`], { cwd: repo, okCodes: [1] });
  return r.code === 0 ? r.stdout.trim() : undefined;
}

/**
 * Remove the worktree folder (and git's record of it) and, unless `keepBranch`, its branch.
 * Safe to repeat: what is already gone is skipped. Only a folder inside `within` is ever deleted.
 */
export async function removeWorktree(
  place: Pick<WorktreePlace, 'repo' | 'path' | 'branch'>,
  within: string,
  opts: { keepBranch?: boolean } = {},
): Promise<void> {
  const dir = fs.existsSync(within) ? fs.realpathSync(within) : within;
  if (!(isInside(place.path, within) || isInside(place.path, dir)) || place.path === within || place.path === dir)
    throw new WorktreeError('UNSAFE_PATH', `${place.path} is not inside Arbor's worktrees folder ${within}; remove it by hand if it is yours.`);
  if (fs.existsSync(place.repo))
    await lockOf(place.repo).alone(async () => {
      await git(['worktree', 'remove', '--force', '--force', place.path], { cwd: place.repo, okCodes: [128] }).catch(() => undefined);
      await git(['worktree', 'prune'], { cwd: place.repo }).catch(() => undefined);
    });
  await fsp.rm(place.path, { recursive: true, force: true });
  if (!opts.keepBranch && fs.existsSync(place.repo) && place.branch.startsWith('arbor/'))
    await lockOf(place.repo)
      .shared(() => git(['branch', '-D', '--quiet', place.branch], { cwd: place.repo, okCodes: [1] }))
      .catch(() => undefined);
}
