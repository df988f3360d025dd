import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { git, repoTop, WorktreeError } from './git';
import { isInside } from './names';
import { headOf, snapshot } from './snapshot';

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
 */
export async function createWorktree(req: CreateRequest): Promise<WorktreePlace> {
  const repo = fs.realpathSync(await repoTop(req.parentRoot));
  const rel = path.relative(repo, fs.realpathSync(req.parentRoot));
  const head = await headOf(repo);
  const base = await snapshot(repo, { excludes: req.excludes, commit: { message: `arbor: base of ${req.note}`, ...(head ? { parent: head } : {}) } });
  await fsp.mkdir(path.dirname(req.dir), { recursive: true });
  await git(['worktree', 'add', '--quiet', '-b', req.branch, req.dir, base.commit!], { cwd: repo });
  const wt = fs.realpathSync(req.dir);
  return { repo, path: wt, root: rel ? path.join(wt, rel) : wt, branch: req.branch, base: base.commit! };
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
  if (fs.existsSync(place.repo)) {
    await git(['worktree', 'remove', '--force', '--force', place.path], { cwd: place.repo, okCodes: [128] }).catch(() => undefined);
    await git(['worktree', 'prune'], { cwd: place.repo }).catch(() => undefined);
  }
  await fsp.rm(place.path, { recursive: true, force: true });
  if (!opts.keepBranch && fs.existsSync(place.repo) && place.branch.startsWith('arbor/'))
    await git(['branch', '-D', '--quiet', place.branch], { cwd: place.repo, okCodes: [1] }).catch(() => undefined);
}
