import * as fs from 'node:fs';
import { repoTop } from '../worktree/git';
import { headOf, snapshot } from '../worktree/snapshot';

/**
 * The commit a placed node starts from (decision 0072): the parent's current state — tracked
 * changes, deletions and untracked files that are not ignored — as a commit on top of HEAD, made
 * with a separate index (`worktree/snapshot.ts`), so the user's index, HEAD and files stay as they
 * are. `excludes` (absolute paths: the store, the worktrees folder) never travel. `bwrap`: the
 * bubblewrap the deployment's commands run under, which git's `add -A` runs under too.
 */
export async function workspaceCommit(root: string, excludes: readonly string[], note: string, bwrap: string): Promise<{ repo: string; commit: string }> {
  const repo = fs.realpathSync(await repoTop(root));
  const head = await headOf(repo);
  const snap = await snapshot(repo, { bwrap, excludes, commit: { message: `arbor: base of ${note}`, ...(head ? { parent: head } : {}) } });
  return { repo, commit: snap.commit! };
}
