import * as fs from 'node:fs';
import * as path from 'node:path';
import { git } from './git';
import { lockOf } from './repo-lock';

// Worktrees whose files are still being written (decision 0089). A placed child's local worktree
// is needed only when its changes come back (decision 0074: they land there for review), so its
// entry and branch are made at once (`worktree add --no-checkout`) and its files are written
// beside the child's first turn on the other side, not before it. Whatever reads, moves or
// removes such a worktree's files waits here first; one module owns the concept.

/** The fills under way, by the worktree's folder (its real path, as its `worktree` event says). */
const pending = new Map<string, Promise<unknown>>();

/** The files of the worktree at `dir` (entry made without a checkout), written beside other worktrees' (reading no other entry). */
export function fill(dir: string): Promise<unknown> {
  return lockOf(dir).shared(() => git(['read-tree', '-u', '--reset', 'HEAD'], { cwd: dir }));
}

/** `dir`'s files are being written (`fill`); what touches them waits (`filled`). */
export function fillLater(dir: string): void {
  const done = fill(dir).catch(() => undefined); // (cut short: `filled` writes them again)
  pending.set(dir, done);
  void done.then(() => {
    if (pending.get(dir) === done) pending.delete(dir);
  });
}

/**
 * Resolves when `dir`'s files are whole: at once for a worktree nothing is filling; after the
 * fill under way; and for one whose fill was cut short (it failed, or Arbor stopped meanwhile —
 * git writes the index last, so a worktree entry without one never got all its files) after
 * writing them again. A folder that is gone, or no worktree, is left to its caller.
 */
export async function filled(dir: string): Promise<void> {
  await pending.get(dir);
  if (cutShort(dir)) await fill(dir);
}

/** Resolves when a fill under way has ended, however (a folder about to be removed needs no files). */
export async function settled(dir: string): Promise<void> {
  await pending.get(dir);
}

/** A worktree of git's whose index was never written: made without a checkout, its files not (all) there. */
function cutShort(dir: string): boolean {
  let gitDir: string | undefined;
  try {
    gitDir = /^gitdir: (.+)$/m.exec(fs.readFileSync(path.join(dir, '.git'), 'utf8'))?.[1]?.trim();
  } catch {
    return false; // no worktree there (gone, or a `.git` folder: a repository's own)
  }
  return !!gitDir && fs.existsSync(path.resolve(dir, gitDir)) && !fs.existsSync(path.join(path.resolve(dir, gitDir), 'index'));
}
