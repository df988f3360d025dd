import * as fs from 'node:fs';
import * as path from 'node:path';
import { beneathSync } from '../tools/beneath';
import { READ_AS_IS } from '../tools/pinned-path';

// A workspace's project files (instructions, agent files) are read only where they really are
// inside it: their real path, links followed, below the workspace's real root (decision 0056).
// The file is then opened at that real path through its folder pinned from the root, no link
// followed (decision 0097): a command that swaps the file, or a folder above it, for a link to
// a file elsewhere between the check and the open makes the open fail, never read that file.

/** The real path of `p` (links followed), or `p` itself when it cannot be resolved. */
export function realOr(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return p;
  }
}

/** True when `p` is below `root` (not `root` itself), both real paths. */
export function strictlyInside(root: string, p: string): boolean {
  const rel = path.relative(root, p);
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
}

/**
 * A descriptor of `p` opened for reading (never blocking on a FIFO), or `outside` when its real
 * path is not below `realRoot`. Throws what the open met: `ELOOP` or `PATH_CHANGED` when a link
 * took the place of the file or of a folder above it after the check (`changedWhileRead`).
 */
export function openInside(realRoot: string, p: string): number | 'outside' {
  const real = realOr(p);
  if (!strictlyInside(realRoot, real)) return 'outside';
  return beneathSync(real, realRoot, (target) => fs.openSync(target, READ_AS_IS));
}

/** Whether an open failed because a link took the file's (or a folder's) place after it was checked. */
export function changedWhileRead(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ELOOP' || code === 'PATH_CHANGED';
}
