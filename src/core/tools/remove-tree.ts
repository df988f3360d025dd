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
 * How deep folders are held open at once. A command can make a tree deeper than the stack of a
 * recursion or the descriptors a process may hold (`mkdir d && cd d`, thousands of times): a folder
 * this deep is moved up, by its one name, into the top folder being removed, and emptied from there.
 */
const MAX_DEPTH = 128;
/** The most times the top folder is listed again for what was moved up into it (an agent that keeps making deep trees gets no more). */
const MAX_ROUNDS = 10_000;

/** One removal's top folder (held open while it is emptied) and how many folders were moved up into it. */
interface Walk {
  top?: number;
  moved: number;
  /** Each folder given its owner's rwx as it is opened (`RemoveOptions.writable`). */
  writable: boolean;
}

export interface RemoveOptions {
  /**
   * Give every folder the owner's rwx through its descriptor as it is reached, before it is
   * emptied or moved up (a node folder whose agent took the write bit from its folders): a walk
   * of its own beforehand could not reach below what a recursion or the descriptors do.
   */
  writable?: boolean;
}

/**
 * Remove `target` (its parent is the caller's: opened by its path) and everything below it, no
 * link followed. Throws what the last attempt met (EACCES of a folder without write permission:
 * the caller may make it writable and call again); nothing at `target` is success.
 */
export function removeTree(target: string, options: RemoveOptions = {}): void {
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
    removeEntry(parent, path.basename(target), true, { moved: 0, writable: options.writable === true }, 0);
  } finally {
    fs.closeSync(parent);
  }
}

/** The entry `name` of the folder held open as `dir` removed, whatever it is; `folder`: listed as one (a link there now is unlinked). */
function removeEntry(dir: number, name: string, folder: boolean, walk: Walk, depth: number): void {
  const at = pinnedPath(dir, name);
  for (let attempt = 1; ; attempt++) {
    try {
      if (folder) emptyAndRemove(at, walk, depth);
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

/**
 * The folder at `at` (a pinned name) opened without following a link, emptied through that
 * descriptor, then removed. At `MAX_DEPTH` its folders are moved up into the top folder instead,
 * which lists itself again until nothing more was moved up into it.
 */
function emptyAndRemove(at: string, walk: Walk, depth: number): void {
  const fd = fs.openSync(at, OPEN_FOLDER);
  if (walk.writable) ownerWritable(fd);
  const top = walk.top === undefined;
  if (top) walk.top = fd;
  try {
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const moved = walk.moved;
      for (const d of fs.readdirSync(pinnedPath(fd), { withFileTypes: true })) {
        if (depth >= MAX_DEPTH && d.isDirectory() && moveUp(fd, d.name, walk)) continue;
        removeEntry(fd, d.name, d.isDirectory(), walk, depth + 1);
      }
      if (!top || walk.moved === moved) break;
    }
  } finally {
    if (top) walk.top = undefined;
    fs.closeSync(fd);
  }
  fs.rmdirSync(at);
}

/**
 * The folder `name` of the folder held open as `dir` renamed, by that one name (a link there now
 * is moved, not followed), into the top folder under a name of its own; false when it could not
 * be (gone: nothing to do; another file system: removed where it is).
 */
function moveUp(dir: number, name: string, walk: Walk): boolean {
  const top = walk.top;
  if (top === undefined) return false;
  for (let tries = 0; tries < ATTEMPTS; tries++) {
    try {
      fs.renameSync(pinnedPath(dir, name), pinnedPath(top, `.arbor-removing-${process.pid}-${walk.moved++}`));
      return true;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return true;
      // A folder moved to another parent needs its own write bit (its `..` changes): given back once.
      if (code === 'EACCES' && walk.writable && tries === 0) {
        try {
          const child = fs.openSync(pinnedPath(dir, name), OPEN_FOLDER);
          try {
            ownerWritable(child);
          } finally {
            fs.closeSync(child);
          }
        } catch {
          return false; // not a folder now, or not ours: removed where it is (it says why)
        }
        continue;
      }
      // A name the agent took meanwhile (a folder with things in it, a file): the next one.
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST' && code !== 'ENOTDIR' && code !== 'EISDIR') return false;
    }
  }
  return false;
}

/** The folder held open as `fd` given its owner's rwx (not ours to change: left as it is, its removal says why). */
function ownerWritable(fd: number): void {
  try {
    fs.fchmodSync(fd, (fs.fstatSync(fd).mode & 0o7777) | 0o700);
  } catch {
    // not ours to change
  }
}

/** What is at `at` now, its last name not followed: a folder, something else, or nothing. */
function kindAt(at: string): 'folder' | 'other' | undefined {
  try {
    return fs.lstatSync(at).isDirectory() ? 'folder' : 'other';
  } catch {
    return undefined;
  }
}
