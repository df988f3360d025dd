// One writer at a time per file, across every agent of the process: a parent and its
// children (or two children) that edit the same file run their read-modify-write one after
// another, in the order they asked, so no edit is computed from text another one replaced.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { CASE_INSENSITIVE_FS } from './real-path';

/** The last holder's release per real path; an entry is removed when its queue empties. */
const tails = new Map<string, Promise<void>>();

/** The key two names of one file share once resolved: the real path, folded where the file system folds case. */
export function pathKey(realPath: string): string {
  return CASE_INSENSITIVE_FS ? realPath.toLowerCase() : realPath;
}

/** Run `fn` holding the lock of `realPath` (FIFO); the lock is released however `fn` ends. */
export async function withPathLock<T>(realPath: string, fn: () => Promise<T>): Promise<T> {
  const key = pathKey(realPath);
  const before = tails.get(key) ?? Promise.resolve();
  let release!: () => void;
  const mine = new Promise<void>((resolve) => (release = resolve));
  const tail = before.then(() => mine);
  tails.set(key, tail);
  await before;
  try {
    return await fn();
  } finally {
    release();
    if (tails.get(key) === tail) tails.delete(key);
  }
}

/**
 * Run `fn` holding the locks of all `realPaths` (a multi-file writer: a worktree's apply), taken
 * one by one in sorted order; a tool holds one lock at a time, so no two holders wait on each other.
 */
export async function withPathLocks<T>(realPaths: readonly string[], fn: () => Promise<T>): Promise<T> {
  const keys = [...new Set(realPaths)].sort();
  const take = (i: number): Promise<T> => (i === keys.length ? fn() : withPathLock(keys[i], () => take(i + 1)));
  return take(0);
}

/** The path a file tool locks `file` under: its real path (its folder's real path and its name, for a file not there yet). */
export function lockPathOf(file: string): string {
  // The kernel's realpath, one call: the JS one lstats every folder of every path (a rewind's 200
  // files: 7–25 ms at load 8 against 3.5–5). Either gives the same path; `pathKey` folds its case.
  try {
    return fs.realpathSync.native(file);
  } catch {
    try {
      return path.join(fs.realpathSync.native(path.dirname(file)), path.basename(file));
    } catch {
      return file;
    }
  }
}
