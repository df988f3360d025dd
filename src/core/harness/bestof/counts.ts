import type { FileChange } from '../../worktree/diff';
import type { WayFile } from './types';

/** Added and removed lines of one file's unified diff (the `+++`/`---` header lines are not counted). */
export function wayFile(f: FileChange): WayFile {
  let added = 0;
  let removed = 0;
  for (const line of f.unified.split('\n')) {
    if (line.startsWith('+++') || line.startsWith('---')) continue;
    if (line.startsWith('+')) added++;
    else if (line.startsWith('-')) removed++;
  }
  return { path: f.path, status: f.status, added, removed };
}
