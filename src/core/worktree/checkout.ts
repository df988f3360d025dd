import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { confinedAdd } from './confined';
import { markUnfilled, settled, unfilledMark } from './filling';
import { git, WorktreeError } from './git';
import { isInside } from './names';
import { commitBody, looseCommitTree, writeObjectSync } from './objects';
import { lockOf, type RepoLock, repoLock } from './repo-lock';
import type { RepoState, RepoStateCache } from './repo-state';
import { repoFacts, snapshot } from './snapshot';
import { workTreeOf } from './work-tree';

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
  /** The bubblewrap the deployment's commands run under (`bwrapPath`; default `bwrap`): git's `add -A` of the base runs under it (`confined.ts`). */
  bwrap: string;
  /** The repository's facts kept between children: with them, a plain repository's base is made in-process (decision 0082). */
  repos?: RepoStateCache;
  /**
   * Make the worktree's entry and branch only; its work is read from its branch, its files written only when asked for
   * (decisions 0089, 0093: a placed child, whose turn runs elsewhere): `filled(place.path)`.
   */
  filesLater?: boolean;
}

/**
 * A new worktree on a new branch, from the parent's current state: a commit of its working tree
 * (uncommitted and untracked files included, ignored ones not) on top of HEAD, made with a
 * separate index, so the user's index, HEAD and files stay as they are.
 *
 * With the repository facts kept (`repos`) and a plain repository, the base is made in-process
 * and one `git worktree add -b <branch> <dir> <base>` follows (decision 0082, `inProcessBase`).
 * Otherwise two lines run at once (issue 25, decision 0076): the base (`rev-parse`, then the
 * snapshot's `add -A`, its tree and commit written in-process where the index is a plain one) and
 * an empty worktree (`git worktree add --no-checkout --detach`: git's own bookkeeping, no files).
 * When both are there, one `git checkout -b <branch> <base>` in the new worktree writes the
 * base's files and starts the branch — the checkout a plain `git worktree add` does anyway. A
 * repository without commits (no HEAD to start the empty worktree from) takes the sequential
 * way. Whatever fails, nothing of ours is left behind.
 */
export async function createWorktree(req: CreateRequest): Promise<WorktreePlace> {
  fs.mkdirSync(path.dirname(req.dir), { recursive: true });
  const known = req.repos && (await req.repos.state(req.parentRoot));
  // Git's bookkeeping of a new worktree goes alone in this repository (repo-lock.ts): another child's add beside it fails.
  const lock = known ? repoLock(fs.realpathSync.native(known.commonDir)) : lockOf(req.parentRoot);
  const made = known && (await inProcessBase(req, known, lock));
  if (made) return made;
  const empty = lock.alone(() => git(['worktree', 'add', '--quiet', '--no-checkout', '--detach', req.dir, 'HEAD'], { cwd: req.parentRoot }));
  const based = (async () => {
    const facts = known ?? (await repoFacts(req.parentRoot));
    const repo = fs.realpathSync(facts.top);
    const commit = { message: `arbor: base of ${req.note}`, ...(facts.head ? { parent: facts.head } : {}) };
    const base = await snapshot(repo, { bwrap: req.bwrap, excludes: req.excludes, index: facts.index, objects: facts.objects, commit });
    return { repo, head: facts.head, base: base.commit! };
  })();
  const [added, b] = await Promise.allSettled([empty, based]);
  const undo = () => removeWorktree({ repo: req.parentRoot, path: req.dir, branch: '' }, path.dirname(req.dir)).catch(() => undefined);
  if (b.status === 'rejected') {
    if (added.status === 'fulfilled') await undo();
    throw b.reason;
  }
  const { repo, head, base } = b.value;
  if (added.status === 'rejected') {
    if (head) throw added.reason;
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
  return placeOf(req, repo, base);
}

function placeOf(req: CreateRequest, repo: string, base: string): WorktreePlace {
  const rel = path.relative(repo, fs.realpathSync.native(req.parentRoot));
  const wt = fs.realpathSync.native(req.dir);
  return { repo, path: wt, root: rel ? path.join(wt, rel) : wt, branch: req.branch, base };
}

/**
 * The base made in-process (decision 0082): with the repository's facts from the cache and HEAD
 * from its files (`repo-state.ts`), the tree of the parent's files from its index and its files (`work-tree.ts`), the
 * commit written; then one `git worktree add -b <branch> <dir> <base>`, the same command a bare
 * worktree takes. Undefined where the repository is not a plain one: the caller takes git's way.
 */
async function inProcessBase(req: CreateRequest, facts: RepoState, lock: RepoLock): Promise<WorktreePlace | undefined> {
  if (!facts.head || !facts.plain) return undefined;
  const repo = fs.realpathSync.native(facts.top);
  const tree = await workTreeOf({
    top: repo,
    index: facts.index,
    objects: facts.objects,
    excludes: req.excludes,
    excludeLines: facts.plain.excludeLines,
    memo: facts.memo,
  });
  if (!tree) return undefined;
  // A parent with nothing uncommitted starts its child at HEAD itself: a second commit of the same tree says nothing, and a placed child's far side already holds HEAD.
  const base =
    (await treeOfHead(repo, facts.head, facts)) === tree
      ? facts.head
      : writeObjectSync(facts.objects, 'commit', Buffer.from(commitBody(tree, facts.head, `arbor: base of ${req.note}`), 'utf8'));
  const later = req.filesLater ? ['--no-checkout'] : [];
  if (req.filesLater) markUnfilled(req.dir); // (before the entry: a stop right after it still says its files are missing)
  try {
    await lock.alone(() => git(['worktree', 'add', '--quiet', ...later, '-b', req.branch, req.dir, base], { cwd: repo }));
  } catch (err) {
    await removeWorktree({ repo, path: req.dir, branch: '' }, path.dirname(req.dir)).catch(() => undefined);
    throw err;
  }
  // (Its files, what `worktree add` would have checked out, are written only when asked for: decision 0093.)
  return placeOf(req, repo, base);
}

/**
 * HEAD's tree: from its loose object, else (HEAD packed: after a gc, or in the pack of a
 * repository it borrows from) asked of git once per HEAD and kept in the checkout's memo.
 */
async function treeOfHead(repo: string, head: string, facts: RepoState): Promise<string | undefined> {
  const loose = looseCommitTree(facts.objects, head);
  if (loose) return loose;
  if (facts.memo.headTree?.head === head) return facts.memo.headTree.tree;
  const r = await git(['rev-parse', '--verify', '--quiet', `${head}^{tree}`], { cwd: repo, okCodes: [1] });
  const tree = r.code === 0 ? r.stdout.trim() : undefined;
  if (tree) facts.memo.headTree = { head, tree };
  return tree;
}

/**
 * Record the worktree's files as a commit on its branch (Arbor's, outside the sandbox), when
 * anything changed; the branch's head either way. `bwrap`: the bubblewrap the deployment's
 * commands run under, which the `add -A` runs under too (`confined.ts`).
 */
export async function commitWorktree(place: WorktreePlace, message: string, bwrap: string): Promise<string> {
  // Confined (`confined.ts`): the child's own commands run in this folder and could swap one of its folders for a link.
  await confinedAdd(place.path, { bwrap });
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
  await settled(place.path); // (a fill under way ends before its folder goes)
  if (fs.existsSync(place.repo))
    await lockOf(place.repo).alone(async () => {
      await git(['worktree', 'remove', '--force', '--force', place.path], { cwd: place.repo, okCodes: [128] }).catch(() => undefined);
      await git(['worktree', 'prune'], { cwd: place.repo }).catch(() => undefined);
    });
  await fsp.rm(place.path, { recursive: true, force: true });
  await fsp.rm(unfilledMark(place.path), { force: true });
  if (!opts.keepBranch && fs.existsSync(place.repo) && place.branch.startsWith('arbor/'))
    await lockOf(place.repo)
      .shared(() => git(['branch', '-D', '--quiet', place.branch], { cwd: place.repo, okCodes: [1] }))
      .catch(() => undefined);
}
