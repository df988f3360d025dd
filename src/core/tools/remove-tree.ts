import * as fs from 'node:fs';
import * as path from 'node:path';
import { OPEN_FOLDER, OPEN_ROOT, pinnable, pinnedPath } from './pinned-path';

// A folder and everything below it removed while something may still change it (a far node's
// agent whose close failed, its commands): `fs.rm`'s recursion works by path — it fails `rmdir`
// with ENOTEMPTY, then lists the same path again — so a folder swapped for a link between the
// two is listed through the link, and what is out there deleted. Here each folder is opened from
// the one above it held open, with no link followed (decision 0097's walk), its entries listed
// through that descriptor and removed by their one name in it: a link is unlinked, never
// followed, wherever and whenever it appears. Where folders cannot be pinned (no /proc), by path.

/** Failures trying again will not change: permissions (the caller may make folders writable and call again), a read-only file system, a mount. */
const LASTING = new Set(['EACCES', 'EPERM', 'EROFS', 'EBUSY']);

/** The errors an entry below already gave up on: its folders above pass them on as they are (their attempts would multiply). */
const final = new WeakSet<object>();

/** How often an entry the agent keeps changing (a file made in a folder being emptied, a folder moved) is tried again. */
const ATTEMPTS = 5;

/**
 * Remove `target` (its parent is the caller's: opened by its path) and everything below it, no
 * link followed. Throws what the last attempt met (EACCES of a folder without write permission:
 * the caller may make it writable and call again); nothing at `target` is success.
 */
export function removeTree(target: string): void {
  if (!pinnable()) {
    fs.rmSync(target, { recursive: true, force: true });
    return;
  }
  let parent: number;
  try {
    parent = fs.openSync(path.dirname(target), OPEN_ROOT);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw e;
  }
  try {
    removeEntry(parent, path.basename(target), true);
  } finally {
    fs.closeSync(parent);
  }
}

/** The entry `name` of the folder held open as `dir` removed, whatever it is; `folder`: listed as one (a link there now is unlinked). */
function removeEntry(dir: number, name: string, folder: boolean): void {
  const at = pinnedPath(dir, name);
  for (let attempt = 1; ; attempt++) {
    try {
      if (folder) emptyAndRemove(at);
      else fs.unlinkSync(at);
      return;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code ?? '';
      if (code === 'ENOENT' && !final.has(e as object)) return;
      // Given up on below (or lasting): every folder above says the same, not trying again itself.
      if (final.has(e as object) || LASTING.has(code) || attempt >= ATTEMPTS) {
        final.add(e as object);
        throw e;
      }
      // Changed under it: a folder where a file was (EISDIR), a link or file where a folder was
      // (ELOOP, ENOTDIR), a folder refilled (ENOTEMPTY). What it is now decides the next attempt.
      const now = kindAt(at);
      if (now === undefined) return;
      folder = now === 'folder';
    }
  }
}

/** The folder at `at` (a pinned name) opened without following a link, emptied through that descriptor, then removed. */
function emptyAndRemove(at: string): void {
  const fd = fs.openSync(at, OPEN_FOLDER);
  try {
    for (const d of fs.readdirSync(pinnedPath(fd), { withFileTypes: true })) removeEntry(fd, d.name, d.isDirectory());
  } finally {
    fs.closeSync(fd);
  }
  fs.rmdirSync(at);
}

/** What is at `at` now, its last name not followed: a folder, something else, or nothing. */
function kindAt(at: string): 'folder' | 'other' | undefined {
  try {
    return fs.lstatSync(at).isDirectory() ? 'folder' : 'other';
  } catch {
    return undefined;
  }
}
