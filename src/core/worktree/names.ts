import * as path from 'node:path';

/** Where worktrees live: next to the store folder, never inside it (the store is a protected path). */
export function worktreesDirOf(storeDir: string): string {
  return path.join(path.dirname(storeDir), 'worktrees');
}

/**
 * The branch of a child's worktree: `arbor/<label>-<short id>` (the label made ref-safe, at
 * most 40 characters), or `arbor/<short id>`. The short id is the child id's last part, so two
 * children never share a branch.
 */
export function branchOf(childId: string, label?: string): string {
  const short = childId.split('.').pop() ?? childId;
  const slug = (label ?? '')
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/\.{2,}/g, '.')
    .replace(/^[-.]+|[-.]+$/g, '')
    .slice(0, 40)
    .replace(/[-.]+$/g, '');
  return `arbor/${slug ? `${slug}-` : ''}${short.replace(/[^A-Za-z0-9_-]/g, '')}`;
}

/** A path is inside a folder (or is it). */
export function isInside(p: string, dir: string): boolean {
  const r = path.relative(dir, p);
  return r === '' || (!r.startsWith('..') && !path.isAbsolute(r));
}
