import { gitDirs } from './confined';
import { bareRepo } from './git';

// Where a git that needs only the repository's objects runs (decision 0113): a diff of two
// commits for a review, the in-memory merge of an apply. Run in the work tree, git reads the
// `.gitattributes` files there — which any confined command can write, tracked or not — and an
// attribute picks which driver of the user's config git runs, on the host, unconfined, on bytes
// the command chose: `diff=X` runs `diff.X.textconv`, `merge=X` runs `merge.X.driver`. Run in the
// git folder itself, named (`--git-dir`), git reads no `.gitattributes` of the work tree: only
// `info/attributes` and the user's own attributes file (and any inside the git folder), which no
// command can write. Tested: `worktree/planted-attributes`.

/** The options that run git on `repo`'s objects alone: its common git folder (read from `.git`, `gitDirs`), named, as the folder git runs in. */
export async function objectsOnly(repo: string): Promise<{ cwd: string; gitDir: string }> {
  return bareRepo((await gitDirs(repo)).commonDir);
}
