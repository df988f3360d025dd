import type { WorktreeState } from '../session/events';
import type { MergeConflict } from './merge';

// The public shapes of `WorktreeService` (`harness.worktrees`, decision 0060).

/** One worktree child, as `list` shows it. */
export interface WorktreeListing {
  id: string;
  label?: string;
  path: string;
  branch: string;
  base: string;
  state: Exclude<WorktreeState, 'inherited'>;
  /** Its node is in the store (always, for a listed child; orphans are listed by `orphans`). */
  nodeExists: boolean;
  /** Its folder is still there (open: yes; kept/applied/discarded: no, unless a cleanup was cut). */
  folderExists: boolean;
  /** Files it changed against its base (open: the folder now; kept: the branch; applied: as applied). */
  filesChanged?: number;
  /**
   * Its folder holds no files yet (a placed child's, decision 0093): its work is its branch,
   * which review and apply read; `git -C <path> reset --hard` writes them for someone who wants
   * the folder itself.
   */
  unwritten?: true;
  /** Git could not list its changes (what failed, what to do); `filesChanged` is then absent, never a 0. */
  changesUnread?: string;
}

export type ApplyResult = { applied: true; files: string[] } | { applied: false; conflicts: MergeConflict[] };

export interface ApplyOptions {
  /**
   * A placed child's changes to protected paths (`protected-names.ts`: `.vscode`, `.arbor`, `.claude`, `.codex`, `.gemini`, `.git`-like, a
   * `.code-workspace`) are written: the user saw them and said so again. Without it they are
   * conflicts marked `protected` and nothing is written (decision 0060, amended in s49).
   */
  protectedOk?: boolean;
}
