import { git } from './git';
import { blob, treeChanges } from './merge';
import { objectsOnly } from './objects-only';

// What a worktree child changed: per file, the base content and the child's content (for an
// editor's diff view) and a unified diff (decision 0060). Read from git objects, never the
// parent's files.

export interface FileChange {
  /** Repository-relative, with `/`. */
  path: string;
  status: 'added' | 'modified' | 'deleted' | 'type-changed';
  /** Absent when the file did not exist on that side; `binary` when either side is not text. */
  before?: string;
  after?: string;
  binary?: true;
  /** `git diff` of this file, base → child. */
  unified: string;
}

/** Files past this are listed without their content (the unified diff still says they changed). */
export const MAX_DIFF_FILES = 500;
/** A side larger than this is not sent as text. */
const MAX_TEXT_BYTES = 2 * 1024 * 1024;

const STATUS: Record<string, FileChange['status']> = { A: 'added', M: 'modified', D: 'deleted', T: 'type-changed' };

/** The changed paths between two trees (or commits), cheap: no contents. */
export async function changedPaths(repo: string, from: string, to: string): Promise<string[]> {
  return (await treeChanges(repo, from, to)).map((c) => c.path);
}

export async function diffTrees(repo: string, from: string, to: string): Promise<FileChange[]> {
  const changes = await treeChanges(repo, from, to);
  const out: FileChange[] = [];
  // Not in the work tree: its `.gitattributes` would pick a textconv of the user's config to run unconfined (`objects-only.ts`).
  const where = await objectsOnly(repo);
  for (const [i, c] of changes.entries()) {
    const status = STATUS[c.status[0]] ?? 'modified';
    const unified = (await git(['diff', '--no-color', '--no-ext-diff', from, to, '--', c.path], where)).stdout;
    const f: FileChange = { path: c.path, status, unified };
    if (i < MAX_DIFF_FILES) {
      const before = /^0+$/.test(c.oldSha) ? undefined : await blob(repo, c.oldSha);
      const after = /^0+$/.test(c.newSha) ? undefined : await blob(repo, c.newSha);
      if ([before, after].some((b) => b && !isText(b))) f.binary = true;
      else {
        if (before) f.before = before.toString('utf8');
        if (after) f.after = after.toString('utf8');
      }
    }
    out.push(f);
  }
  return out;
}

function isText(b: Buffer): boolean {
  return b.length <= MAX_TEXT_BYTES && !b.subarray(0, 8000).includes(0);
}
