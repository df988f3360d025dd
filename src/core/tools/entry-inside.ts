import * as fs from 'node:fs';
import { beneathSync, isPathChanged } from './beneath';
import { READ_AS_IS } from './pinned-path';

// One workspace entry read as git would record it, through its folder pinned from the root
// (decision 0097, amended in s51): what the checkpoints' snapshot stores in place of `git add`,
// which reads by path and follows a folder a command swaps for a link. A link or a file where a
// folder was is what git itself records then — the entry is absent (git never descends through a
// link) — so a swap can only make a file look gone, never bring in one from outside.

/** What is at a path inside a root, as git records it: a file or a link's bytes and git mode, a file over the cap, or nothing. */
export type InsideEntry = { kind: 'blob'; mode: number; bytes: Buffer } | { kind: 'large' } | { kind: 'gone' };

/**
 * The entry at `abs` (a path under `root`) read through its pinned folder: a regular file's bytes
 * (mode 100755 when its owner may run it, else 100644), a link's target (120000), `large` past
 * `maxBytes`, else `gone` (missing, a folder or anything else, or a link or a file on the way).
 */
export function readEntryInside(abs: string, root: string, maxBytes: number): InsideEntry {
  try {
    return beneathSync(abs, root, (target) => {
      const st = fs.lstatSync(target);
      if (st.isSymbolicLink()) return { kind: 'blob', mode: 0o120000, bytes: fs.readlinkSync(target, { encoding: 'buffer' }) };
      if (!st.isFile()) return { kind: 'gone' };
      const fd = fs.openSync(target, READ_AS_IS);
      try {
        const now = fs.fstatSync(fd);
        if (!now.isFile()) return { kind: 'gone' };
        if (now.size > maxBytes) return { kind: 'large' };
        return { kind: 'blob', mode: now.mode & 0o100 ? 0o100755 : 0o100644, bytes: fs.readFileSync(fd) };
      } finally {
        fs.closeSync(fd);
      }
    });
  } catch (e) {
    // Swapped since the lstat (ELOOP), a link or a file on the way (PATH_CHANGED), gone meanwhile.
    const code = (e as NodeJS.ErrnoException).code;
    if (isPathChanged(e) || code === 'ENOENT' || code === 'ENOTDIR' || code === 'ELOOP') return { kind: 'gone' };
    throw e;
  }
}
