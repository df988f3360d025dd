import { sizeOf } from '../subagent/remote-bounds';
import { git } from '../worktree/git';
import { PlacementError } from './types';

// What a placed child's changes may write here (decision 0081 amended). A bundle is bounded as it
// travels (MAX_SYNC_BYTES), but it is compressed: 256 MiB of it can hold a blob of zeros a
// thousand times that size, which the review would read whole and an apply would write into the
// workspace until the disk is full. So the commit that came back is measured before anything
// names it or moves to it: what its files hold, from git's object headers (nothing is inflated).

/** What one placed child's changes may hold: all changed files' bytes together, and how many files. */
export interface ChangeBounds {
  bytes: number;
  files: number;
}

export const CHANGE_BOUNDS: ChangeBounds = { bytes: 1024 * 1024 * 1024, files: 100_000 };

/** A file entry of `git diff-tree -r -z`: `:<old mode> <new mode> <old id> <new id> <status>`, then its path. */
const ENTRY = /^:\d{6} (\d{6}) [0-9a-f]+ ([0-9a-f]+) [A-Z]\d*$/;

/**
 * Refuses (SYNC_FAILED) changes from `base` to `commit` past `bounds` (CHANGE_BOUNDS unless a
 * test gives smaller ones), naming the largest file. Submodule links and removals write nothing
 * and count nothing.
 */
export async function boundChanges(
  repo: string,
  base: string,
  commit: string,
  nodeId: string,
  bounds: ChangeBounds = CHANGE_BOUNDS,
  /** `git diff-tree -r -z --no-renames base commit`'s output, when the caller already has it (`childChanges`). */
  listed?: string,
): Promise<void> {
  const refuse = (what: string) =>
    new PlacementError(
      'SYNC_FAILED',
      `the changes of ${nodeId} that came back ${what}, more than one child's changes may (${sizeOf(bounds.bytes)}, ${bounds.files.toLocaleString('en')} files); nothing of them was taken in. Remove what should not come back (build output, data files) from the child's folder on the placement, then send the child a message to collect again.`,
    );
  let listing: string;
  try {
    listing = listed ?? (await git(['diff-tree', '-r', '-z', '--no-renames', base, commit], { cwd: repo })).stdout;
  } catch (err) {
    throw refuse(`could not be listed (${(err as Error).message})`);
  }
  const parts = listing.split('\0');
  const files: { path: string; id: string }[] = [];
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const m = ENTRY.exec(parts[i]);
    if (!m || m[1] === '160000' || /^0+$/.test(m[2])) continue; // a submodule link, or a removal
    files.push({ path: parts[i + 1], id: m[2] });
    if (files.length > bounds.files) throw refuse(`touch more than ${bounds.files.toLocaleString('en')} files`);
  }
  if (files.length === 0) return;
  const sizes = (await git(['cat-file', '--batch-check=%(objectsize)'], { cwd: repo, input: `${files.map((f) => f.id).join('\n')}\n` })).stdout
    .trim()
    .split('\n');
  let total = 0;
  let largest = { path: '', size: -1 };
  sizes.forEach((line, i) => {
    const size = Number(line);
    if (!Number.isSafeInteger(size)) throw refuse(`name an object this repository does not hold (${files[i]?.path})`);
    total += size;
    if (size > largest.size) largest = { path: files[i].path, size };
  });
  if (total > bounds.bytes) throw refuse(`would write ${sizeOf(total)} in ${files.length} files (the largest, ${largest.path}, ${sizeOf(largest.size)})`);
}

/**
 * The changes of `commit` when it is a child of `base` (one parent, that one: what a far side's
 * collect makes), asked of one git: its parents and its diff against them (`diff-tree --always
 * --format=%P`). The listing is `boundChanges`'s; undefined when `commit` is anything else (no
 * parent, a merge, another parent, not here) — the caller then asks the long way.
 */
export async function childChanges(repo: string, base: string, commit: string): Promise<string | undefined> {
  const out = await git(['diff-tree', '-r', '-z', '--no-renames', '--always', '--format=%P', commit], { cwd: repo }).catch(() => undefined);
  if (!out) return undefined;
  const end = out.stdout.indexOf('\0');
  if (end < 0 || out.stdout.slice(0, end) !== base) return undefined;
  // After the header: a newline, then the entries (nothing at all when the commit changed nothing).
  return out.stdout.slice(end + 1).replace(/^\n/, '');
}
