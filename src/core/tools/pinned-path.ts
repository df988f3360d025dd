import * as fs from 'node:fs';

// The pieces every walk through held-open folders shares (decision 0097): the open flags, whether
// this system can name an entry through a folder's descriptor, and that name. Node has no
// `openat`; on Linux `/proc/self/fd/<fd>/<name>` is the entry `name` in the very folder `fd` holds,
// whatever happened since to the names above it. `beneath.ts` (the file tools, a rewind, the
// checkpoints' reads) and `worktree/work-tree.ts` (the in-process base) walk so.

const C = fs.constants;
/** Not following a link at the last component (0 where the system has no such flag). */
export const NOFOLLOW = C.O_NOFOLLOW ?? 0;
/** Failing unless a folder is opened (0 where the system has no such flag). */
export const DIRECTORY = C.O_DIRECTORY ?? 0;
/** A walk's first folder, its root (a checked real path: opened by that path): read-only, a folder. */
export const OPEN_ROOT = C.O_RDONLY | DIRECTORY;
/** A folder opened on the way: read-only, a folder, no link followed (a link there now is ELOOP, a file ENOTDIR). */
export const OPEN_FOLDER = C.O_RDONLY | DIRECTORY | NOFOLLOW;
/** A file opened to be read as it is: no link followed, never waiting on a FIFO. */
export const READ_AS_IS = C.O_RDONLY | NOFOLLOW | (C.O_NONBLOCK ?? 0);

let known: boolean | undefined;
/** Whether folders can be pinned here: Linux with /proc mounted (checked once). Elsewhere callers act by path. */
export function pinnable(): boolean {
  known ??= process.platform === 'linux' && fs.existsSync('/proc/self/fd');
  return known;
}

/** The path of entry `name` (one name, no `/`) in the folder held open as `fd`, or of that folder itself. */
export function pinnedPath(fd: number, name?: string): string {
  return name === undefined ? `/proc/self/fd/${fd}` : `/proc/self/fd/${fd}/${name}`;
}
