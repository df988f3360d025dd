import * as fs from 'node:fs';
import * as path from 'node:path';

// A workspace's project files (instructions, agent files) are read only where they really are
// inside it: their real path, links followed, below the workspace's real root (decision 0056).

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
