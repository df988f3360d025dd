import * as fsp from 'node:fs/promises';
import * as path from 'node:path';

// The real path of a file and containment, on the real file system: the ground every path
// check of the tools stands on (paths.ts for the sandbox, protected-paths.ts for approvals).

/** Symlinks followed while resolving one path before giving up (Linux uses 40 for ELOOP). */
const MAX_SYMLINKS = 40;

export const CASE_INSENSITIVE_FS = process.platform === 'win32' || process.platform === 'darwin';

export function isWithin(target: string, dir: string): boolean {
  const t = CASE_INSENSITIVE_FS ? target.toLowerCase() : target;
  const d = CASE_INSENSITIVE_FS ? dir.toLowerCase() : dir;
  if (t === d) return true;
  return t.startsWith(d.endsWith(path.sep) ? d : d + path.sep);
}

/**
 * The path the kernel would reach, component by component: `.` dropped, `..` climbs
 * the real parent, every symlink (dangling ones too) is replaced by its target, and
 * components that do not exist yet are appended as they are. So a dangling link to
 * `/tmp/outside.txt` resolves to `/tmp/outside.txt`, which a create would have made.
 */
export async function physicalPath(absolute: string): Promise<{ ok: true; path: string } | { ok: false; message: string }> {
  const parsed = path.parse(absolute);
  let current = parsed.root;
  const pending = split(absolute.slice(parsed.root.length));
  let links = 0;
  while (pending.length) {
    const part = pending.shift()!;
    if (part === '' || part === '.') continue;
    if (part === '..') {
      current = path.dirname(current);
      continue;
    }
    const next = path.join(current, part);
    let isLink = false;
    try {
      isLink = (await fsp.lstat(next)).isSymbolicLink();
    } catch {
      // Missing (or unreadable): nothing to follow; a create would make it right here.
    }
    if (!isLink) {
      current = next;
      continue;
    }
    if (++links > MAX_SYMLINKS) return { ok: false, message: `too many symbolic links (more than ${MAX_SYMLINKS}; a loop?)` };
    let target: string;
    try {
      target = await fsp.readlink(next);
    } catch (e) {
      return { ok: false, message: `cannot read the symbolic link ${next}: ${(e as Error).message}` };
    }
    if (path.isAbsolute(target)) {
      const t = path.parse(target);
      current = t.root;
      pending.unshift(...split(target.slice(t.root.length)));
    } else {
      pending.unshift(...split(target));
    }
  }
  return { ok: true, path: current };
}

function split(rest: string): string[] {
  return rest.split(process.platform === 'win32' ? /[\\/]/ : '/');
}
