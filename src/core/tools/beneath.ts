import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { makeDirs } from '../store/fsutil';
import { OPEN_FOLDER, OPEN_ROOT, pinnable, pinnedPath } from './pinned-path';
import { isWithin } from './real-path';

// Acting on a checked path without resolving it again (decision 0097). The file tools check a
// path as text (`paths.ts`: symlinks resolved, the real path inside a root), then act on it
// from the host, where no sandbox mount applies. Between the check and the act, a command
// running in the workspace can swap a folder on the way for a symlink (one atomic rename) and
// the act would follow it — out of the workspace, or into `.git`. So on Linux the folder that
// holds the target is reached from its root one name at a time, each opened with O_NOFOLLOW and
// O_DIRECTORY relative to the folder before it (through `/proc/self/fd/<fd>/<name>`, `pinned-path.ts`:
// Node has no `openat`), and the target is named through that open folder. A swap after a folder was
// opened changes nothing (the descriptor is the folder itself, and a confined command cannot
// move a folder off the workspace's mount); a swap before makes the walk meet a symlink, and
// the act is refused, having done nothing.

/** `PATH_CHANGED`: a folder on the way is a symlink (or no folder) now: the path changed after it was checked. */
export class PathChangedError extends Error {
  readonly code = 'PATH_CHANGED';
  constructor(readonly folder: string) {
    super(`the folder ${folder} is a symbolic link or not a folder any more (it changed after the path was checked)`);
  }
}

/** The refusal of a walk that met a symlink where a folder was checked. */
export function isPathChanged(e: unknown): e is PathChangedError {
  return e instanceof PathChangedError;
}

/** What a file tool says when its walk met a swapped folder: nothing was done, and why it may happen again. */
export function pathChangedRefusal(tool: string, shown: string, e: PathChangedError, existed: boolean): string {
  return (
    `${tool}: '${shown}' changed while it was being ${existed ? 'changed' : 'written'} (${e.message}); ${existed ? `'${shown}' was left as it was` : 'nothing was created'}. ` +
    'Something running in the workspace is replacing its folders with links: wait for it to end, then try again; the file tools never follow a link out of the checked path.'
  );
}

/** Whether `realPath` is acted on through a pinned folder (Linux, inside `root`); else callers keep their own checks. */
export function pins(realPath: string, root: string | undefined): root is string {
  return !!root && pinnable() && realPath !== root && isWithin(realPath, root);
}

/** Whether folder `dir` (at or under `root`) is walked through pinned folders (Linux, inside `root`). */
export function pinsFolder(dir: string, root: string | undefined): root is string {
  return !!root && pinnable() && (dir === root || isWithin(dir, root));
}

/** A folder held open: names in it are resolved in this very folder, whatever happens to the names above it. */
export class PinnedFolder {
  private constructor(private readonly fh: fsp.FileHandle) {}

  /** The path of `name` in this folder (no `/`: one entry). */
  at(name: string): string {
    if (name.includes('/') || name === '' || name === '.' || name === '..') throw new Error(`not one entry name: ${name}`);
    return pinnedPath(this.fh.fd, name);
  }

  /** This folder itself, as a path (to list it): the descriptor, whatever its name is now. */
  get self(): string {
    return pinnedPath(this.fh.fd);
  }

  /** The folder `name` in this one, held open (a listing's walk): a link or a file there now is PathChangedError. */
  async folder(name: string, shown: string): Promise<PinnedFolder> {
    try {
      return new PinnedFolder(await openFolder(this.at(name)));
    } catch (e) {
      throw refusal(e, shown);
    }
  }

  /** fsync of the folder (its renames made durable); best effort, as `syncDir`. */
  async sync(): Promise<void> {
    await this.fh.sync().catch(() => undefined);
  }

  close(): Promise<void> {
    return this.fh.close();
  }

  /**
   * Opens `dir` (a real path at or under `root`) by walking from `root`, refusing any symlink on
   * the way (PathChangedError); with `make`, missing folders are made on the way (0777 & umask,
   * as `mkdir -p`).
   */
  static async open(root: string, dir: string, make: boolean): Promise<PinnedFolder> {
    let fh = await fsp.open(root, OPEN_ROOT);
    try {
      let walked = root;
      for (const name of namesBetween(root, dir)) {
        walked = path.join(walked, name);
        const next = pinnedPath(fh.fd, name);
        let opened: fsp.FileHandle;
        try {
          opened = await openFolder(next);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || !make) throw refusal(e, walked);
          await fsp.mkdir(next).catch((m: NodeJS.ErrnoException) => {
            if (m.code !== 'EEXIST') throw m;
          });
          opened = await openFolder(next).catch((again) => {
            throw refusal(again, walked);
          });
        }
        await fh.close();
        fh = opened;
      }
      return new PinnedFolder(fh);
    } catch (e) {
      await fh.close().catch(() => undefined);
      throw e;
    }
  }
}

const openFolder = (p: string) => fsp.open(p, OPEN_FOLDER);

/** The folder names from `root` down to `dir` (none when they are the same). */
function namesBetween(root: string, dir: string): string[] {
  const rel = path.relative(root, dir);
  return rel === '' ? [] : rel.split(path.sep);
}

/** A symlink or a file where a folder was checked: the path changed; anything else as it came. */
function refusal(e: unknown, folder: string): unknown {
  const code = (e as NodeJS.ErrnoException).code;
  return code === 'ELOOP' || code === 'ENOTDIR' ? new PathChangedError(folder) : e;
}

/**
 * Runs `act` on the path that names `realPath`'s entry through its pinned folder (`folder` set),
 * or on `realPath` itself where no folder can be pinned (not Linux, or no root: a target outside
 * every root, which only full-access reaches and nothing confines anyway).
 */
export async function beneath<T>(
  realPath: string,
  root: string | undefined,
  make: boolean,
  act: (target: string, folder?: PinnedFolder) => Promise<T>,
): Promise<T> {
  if (!pins(realPath, root)) {
    if (make) await makeDirs(path.dirname(realPath));
    return act(realPath);
  }
  const folder = await PinnedFolder.open(root, path.dirname(realPath), make);
  try {
    return await act(folder.at(path.basename(realPath)), folder);
  } finally {
    await folder.close();
  }
}

/**
 * Runs `act` with folder `dir` (at or under `root`) pinned from its root — many files of one
 * folder acted on after one walk (a rewind) — or with none where no folder can be pinned (then
 * the caller acts by path, as `beneath` does). A missing folder: made with `make`, else `act`
 * is not run (there is nothing in it to act on) and the answer is undefined.
 */
export async function inFolder<T>(dir: string, root: string | undefined, make: boolean, act: (folder?: PinnedFolder) => Promise<T>): Promise<T | undefined> {
  if (!pinsFolder(dir, root)) {
    if (make) await makeDirs(dir);
    return act();
  }
  let folder: PinnedFolder;
  try {
    folder = await PinnedFolder.open(root, dir, make);
  } catch (e) {
    if (!make && (e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  try {
    return await act(folder);
  } finally {
    await folder.close();
  }
}

/** Synchronous `beneath` for reads only (a rewind plan reading 200 files on the calling thread). */
export function beneathSync<T>(realPath: string, root: string | undefined, act: (target: string) => T): T {
  if (!pins(realPath, root)) return act(realPath);
  const fd = openFolderOfSync(realPath, root);
  try {
    return act(pinnedPath(fd, path.basename(realPath)));
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * `beneath` whose walk opens its folders on the calling thread (microseconds each, where a hop
 * through the thread pool per folder is not) and whose `act` waits: the folder stays open until it
 * settles. The sandbox's stand-ins are removed so, all of a command's at once (`sandbox/shadows.ts`).
 */
export async function beneathOpenedSync<T>(realPath: string, root: string | undefined, act: (target: string) => Promise<T>): Promise<T> {
  if (!pins(realPath, root)) return act(realPath);
  const fd = openFolderOfSync(realPath, root);
  try {
    return await act(pinnedPath(fd, path.basename(realPath)));
  } finally {
    fs.closeSync(fd);
  }
}

/** The folder holding `realPath`, opened from `root` one name at a time with no link followed (PathChangedError at a link or a file). */
function openFolderOfSync(realPath: string, root: string): number {
  let fd = fs.openSync(root, OPEN_ROOT);
  try {
    let walked = root;
    for (const name of namesBetween(root, path.dirname(realPath))) {
      walked = path.join(walked, name);
      let next: number;
      try {
        next = fs.openSync(pinnedPath(fd, name), OPEN_FOLDER);
      } catch (e) {
        throw refusal(e, walked);
      }
      fs.closeSync(fd);
      fd = next;
    }
    return fd;
  } catch (e) {
    fs.closeSync(fd);
    throw e;
  }
}
