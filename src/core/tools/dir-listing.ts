import type { Dirent, Stats } from 'node:fs';
import * as fs from 'node:fs';
import * as path from 'node:path';

// A folder's listing, read again only when the folder changed: shared by the protected-entry walk
// (`protected-walk.ts`, decision 0042) and a checkpoint root's stat digest (`checkpoint/stat-index.ts`,
// decision 0066). The key is the folder's device, inode and ctime: adding, removing or renaming an
// entry changes the ctime, and unlike the mtime no process can set it back. A listing read within a
// clock tick of the folder's ctime is not trusted (a change in the same tick leaves the ctime as it
// was: git's "racy index"), so the caller gives the horizon its ctime must be older than.
// Synchronous on purpose: an `lstat` costs microseconds, a hop through libuv's thread pool per
// folder ~0.4 ms on a loaded machine.

/** What a listing was read under: the folder's identity and ctime, and whether that ctime could be trusted. */
export interface ListingStamp {
  dev: number;
  ino: number;
  /** Milliseconds with the nanoseconds as a fraction (a double keeps them to a quarter of a microsecond). */
  ctimeMs: number;
  trusted: boolean;
}

export type EntryKind = 'dir' | 'file' | 'link' | 'other';

/**
 * `dir`'s entries read now (with the stamp to keep beside what the caller makes of them), or
 * `cached` itself when it was trusted and the folder's device, inode and ctime are unchanged;
 * undefined when the folder is gone, unreadable or not a folder. A new listing is trusted when
 * the folder's ctime is before `horizon`.
 */
export function relist<L extends ListingStamp>(
  dir: string,
  cached: L | undefined,
  horizon: number,
): { cached: L } | { stamp: ListingStamp; dirents: Dirent[] } | undefined {
  const st = lstatOrUndefined(dir);
  if (!st?.isDirectory()) return undefined;
  if (cached?.trusted && cached.ino === st.ino && cached.dev === st.dev && cached.ctimeMs === st.ctimeMs) return { cached };
  let dirents: Dirent[];
  try {
    dirents = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return undefined;
  }
  return { stamp: { dev: st.dev, ino: st.ino, ctimeMs: st.ctimeMs, trusted: st.ctimeMs < horizon }, dirents };
}

/** What a listed entry is; where the listing does not say (DT_UNKNOWN, some file systems) the inode is asked. Undefined: it is gone. */
export function entryKind(dir: string, d: Dirent): EntryKind | undefined {
  const kind: EntryKind = d.isSymbolicLink() ? 'link' : d.isDirectory() ? 'dir' : d.isFile() ? 'file' : 'other';
  if (kind !== 'other' || d.isFIFO() || d.isSocket() || d.isBlockDevice() || d.isCharacterDevice()) return kind;
  return kindOf(path.join(dir, d.name));
}

/** What is at `p` now (a link is not followed); undefined when nothing is. */
export function kindOf(p: string): EntryKind | undefined {
  const s = lstatOrUndefined(p);
  return s && (s.isSymbolicLink() ? 'link' : s.isDirectory() ? 'dir' : s.isFile() ? 'file' : 'other');
}

export function lstatOrUndefined(p: string): Stats | undefined {
  try {
    return fs.lstatSync(p);
  } catch {
    return undefined;
  }
}
