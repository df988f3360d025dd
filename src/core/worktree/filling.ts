import * as fs from 'node:fs';
import * as path from 'node:path';
import { git } from './git';
import { gitDirNamedBy, lockOf } from './repo-lock';

// Worktrees whose files are written only when asked for (decisions 0089, 0093). A placed child's
// local worktree is needed only when its changes are reviewed (decision 0074: they land there),
// so its entry and branch are made at once (`worktree add --no-checkout`), the child's changes
// move its branch alone, review and apply read that branch (`WorktreeService.work`), and its
// files are written only for whoever works in the folder itself (`filled`):
// a fan-out of placed children writes no checkout on this machine. Whatever reads, moves or
// removes such a worktree's files waits here first; one module owns the concept.

/** The fills under way, by the worktree's folder (its real path, as its `worktree` event says). */
const pending = new Map<string, Promise<unknown>>();

/**
 * The mark of a worktree made without its files: a file beside its folder (Arbor's worktrees
 * folder), written before its entry is made and removed once its files are whole, so a stop at
 * any moment leaves it. Only a worktree so marked is ever written again (`filled`): one whose
 * index is missing for any other reason (git run with `GIT_INDEX_FILE`, an index removed by
 * hand) has its files, perhaps a child's work, and `read-tree --reset` would put HEAD's over them.
 */
export function unfilledMark(dir: string): string {
  return `${dir}.unfilled`;
}

/** `dir`'s entry is about to be made without its files: marked first (see `unfilledMark`). */
export function markUnfilled(dir: string): void {
  fs.writeFileSync(unfilledMark(dir), '');
}

/** The files of the worktree at `dir` (entry made without a checkout), written beside other worktrees' (reading no other entry); then its mark goes. */
export async function fill(dir: string): Promise<void> {
  await lockOf(dir).shared(() => git(['read-tree', '-u', '--reset', 'HEAD'], { cwd: dir }));
  fs.rmSync(unfilledMark(dir), { force: true });
}

/**
 * Move a worktree nobody has read yet (marked, its files never written, nothing filling it) by
 * its branch alone: `move` (which must leave the index unwritten) runs recorded as the
 * worktree's work under way, so a reader arriving meanwhile waits for it, then writes the new
 * HEAD's files. False, running nothing, when the worktree has its files or a fill is under way:
 * the caller moves it as any worktree (its files whole first: `filled`).
 */
export function moveUnfilled(dir: string, move: () => Promise<unknown>): Promise<void> | false {
  // (No await between the look and the record: a reader arriving meanwhile waits for the move.)
  if (pending.has(keyOf(dir)) || !cutShort(dir)) return false;
  const moving = move();
  // A refused move (a torn commit) leaves the worktree as it was: its waiting readers fill that; the refusal is the mover's.
  track(
    dir,
    moving.catch(() => undefined),
  );
  return moving.then(() => undefined);
}

/** The key of `dir` in `pending`: its real path where it exists (a caller may hold another spelling of it). */
function keyOf(dir: string): string {
  try {
    return fs.realpathSync.native(dir);
  } catch {
    return dir;
  }
}

/** `work` is writing `dir`'s files: recorded until it ends, so nobody starts another fill beside it. */
function track(folder: string, work: Promise<unknown>): Promise<unknown> {
  const dir = keyOf(folder);
  pending.set(dir, work);
  const forget = () => {
    if (pending.get(dir) === work) pending.delete(dir);
  };
  work.then(forget, forget);
  return work;
}

/** Waits until no fill of `dir` is under way (one that failed throws, unless `quiet`). */
async function idle(folder: string, quiet: boolean): Promise<void> {
  const dir = keyOf(folder);
  let last: Promise<unknown> | undefined;
  for (let under = pending.get(dir); under && under !== last; under = pending.get(dir)) {
    last = under;
    await (quiet ? under.catch(() => undefined) : under);
  }
}

/**
 * Resolves when `dir`'s files are whole: at once for a worktree that has them; after the fill or
 * move under way; and for one still marked without an index (never read yet, or a fill cut short:
 * git writes the index last, so a marked entry without one never got all its files) after
 * writing them — once, whoever else is waiting (two fills of one folder fight over its index
 * lock). A folder that is gone, or no worktree, is left to its caller.
 */
export async function filled(dir: string): Promise<void> {
  await idle(dir, false);
  // A caller that looked at the same moment may have started the fill meanwhile: wait for that one.
  if (pending.has(keyOf(dir))) return filled(dir);
  // (No await between the look and the record: a caller arriving meanwhile waits for this fill.)
  if (cutShort(dir)) await track(dir, fill(dir));
}

/**
 * Whether `dir` was never read (decision 0093): marked, no index, once a fill or move under way
 * has ended. Nothing was ever handed out from its folder, so its work is its HEAD — a reviewer
 * or an apply reads the branch and writes no file. (A fill starting meanwhile writes that HEAD.)
 */
export async function unread(dir: string): Promise<boolean> {
  await idle(dir, true);
  return cutShort(dir);
}

/** Resolves when a fill under way has ended, however (a folder about to be removed needs no files). */
export async function settled(dir: string): Promise<void> {
  await idle(dir, true);
}

/** A worktree of ours made without its files (marked) whose index was never written: its files not (all) there, or none yet. */
function cutShort(dir: string): boolean {
  if (!fs.existsSync(unfilledMark(dir))) return false;
  let gitDir: string | undefined;
  try {
    gitDir = gitDirNamedBy(path.join(dir, '.git'));
  } catch {
    return false; // no worktree there (gone, or a `.git` folder: a repository's own)
  }
  return !!gitDir && fs.existsSync(gitDir) && !fs.existsSync(path.join(gitDir, 'index'));
}
