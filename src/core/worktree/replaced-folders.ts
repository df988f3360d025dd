import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import type { PinnedFolder } from '../tools/beneath';
import { WorktreeError } from './git';

// A folder the child made a file, or a file it made a folder (decision 0060, amended in s57).
// Git's tree diff lists the file `dir` before the entries `dir/…` of the folder it replaces, so
// the apply writes every removal first, then the rest: a folder's entries are gone before the file
// of its name is written, a file is gone before the entries of the folder of its name. One order,
// `inApplyOrder`, for the apply and for its replay after a crash (`apply-intent.ts`), so a cut
// apply is always a prefix of it. The emptied folder is removed with `rmdir` alone, never
// recursively: an entry that appeared there since the check makes it fail, and nothing the apply
// did not check is ever deleted.

const ZERO = /^0+$/;

/** A change that removes its path (no new blob). */
export const isRemoval = (c: { newSha: string }): boolean => ZERO.test(c.newSha);

/** Removals first, each part in git's order: the one order an apply writes in, and replays in. */
export function inApplyOrder<T extends { newSha: string }>(changes: readonly T[]): T[] {
  return [...changes.filter(isRemoval), ...changes.filter((c) => !isRemoval(c))];
}

/** The paths `changes` remove. */
export function removalsOf(changes: readonly { newSha: string; path: string }[]): Set<string> {
  return new Set(changes.filter(isRemoval).map((c) => c.path));
}

/**
 * What the folder `rel` of the workspace at `top` holds that the merge does not remove: every entry
 * that is not a folder (a file, a link — never followed —, anything else) whose path is not in
 * `removed`, at most `limit` of them. Empty folders hold nothing; they go with it.
 */
export async function leftoversIn(top: string, rel: string, removed: ReadonlySet<string>, limit = 5): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    for (const d of await fsp.readdir(path.join(top, dir), { withFileTypes: true })) {
      if (out.length >= limit) return;
      const child = `${dir}/${d.name}`;
      if (d.isDirectory()) await walk(child);
      else if (!removed.has(child)) out.push(child);
    }
  };
  await walk(rel);
  return out;
}

/** What a leftover refuses: the path, why it stays, and what to do. */
export function leftoverReason(rel: string, leftovers: readonly string[]): string {
  return (
    `${rel} is a folder in the workspace that the child made a file, and it holds ${leftovers.join(', ')}, which the child's change does not remove (ignored by git, or made since the snapshot): apply never deletes what it did not check. ` +
    `Move ${leftovers.length > 1 ? 'them' : 'it'} out of ${rel} (or take the child's change by hand), then apply again.`
  );
}

/**
 * Remove the folder at `at` (entry `rel` of the workspace) once the removals before emptied it: the
 * folders in it bottom up, with `rmdir` only. With `parent` (its folder held open, `beneath.ts`)
 * each folder is opened from the one above with no link followed; a link swapped in is refused
 * (PathChangedError), never followed. An entry that is no folder (it appeared since the check)
 * stops it, deleting nothing.
 */
export async function removeEmptiedFolder(at: string, rel: string, parent?: PinnedFolder): Promise<void> {
  const name = path.basename(at);
  const held = parent ? await parent.folder(name, rel) : undefined;
  try {
    const listed = held ? held.self : at;
    for (const d of await fsp.readdir(listed, { withFileTypes: true })) {
      const inner = `${rel}/${d.name}`;
      if (!d.isDirectory()) {
        throw new WorktreeError(
          'CONFLICT',
          `${inner} appeared in the workspace after the apply checked ${rel} (the folder the child made a file); it was not deleted. Move it out of ${rel}, then apply again.`,
        );
      }
      await removeEmptiedFolder(held ? held.at(d.name) : path.join(at, d.name), inner, held);
    }
  } finally {
    await held?.close();
  }
  await fsp.rmdir(at);
}

const IN_THE_WAY = /^CONFLICT \(file\/directory\): directory in the way of (.+) from ([0-9a-f]+); moving it to (.+) instead\.$/;

/**
 * Git's words for a path one side made a file and the other a folder name a path that exists
 * nowhere (`dir~<commit>`, where its merge would move the folder) and nothing to do. Said
 * instead: the path, what the workspace changed there since the worktree was made
 * (`changedSince`), and what to do. The side named after "from" holds the file.
 */
export async function explainReplaced<T extends { path: string; message: string }>(
  conflicts: readonly T[],
  child: string,
  changedSince: (rel: string) => Promise<string[]>,
): Promise<T[]> {
  const out: T[] = [];
  for (const c of conflicts) {
    const m = IN_THE_WAY.exec(c.message);
    if (!m) {
      out.push(c);
      continue;
    }
    const [, rel, side] = m;
    const changed = (await changedSince(rel)).slice(0, 5);
    const what = changed.length ? changed.join(', ') : 'files';
    const message = child.startsWith(side)
      ? `${rel} is a folder in the workspace that the child made a file, and the workspace changed ${what} in it since the worktree was made: apply never overwrites or deletes the user's changes, and nothing was written. Move ${changed.length === 1 ? 'it' : 'them'} out of ${rel} (or take the child's change by hand), then apply again.`
      : `${rel} is a file in the workspace that the child made a folder, and the workspace changed it since the worktree was made: apply never overwrites or deletes the user's changes, and nothing was written. Move ${rel} aside (or take the child's change by hand), then apply again.`;
    out.push({ ...c, path: rel, message });
  }
  return out;
}
