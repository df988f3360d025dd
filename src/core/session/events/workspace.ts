import type { Base } from './base';

// What happened to the workspace: a child's worktree (decision 0060), a step's checkpoint (decision 0059). Not model history.

/** Where a worktree child's worktree is, and what has become of it (decision 0060). */
export type WorktreeState = 'open' | 'applied' | 'discarded' | 'kept' | 'inherited';

/**
 * A child's git worktree (decision 0060), last event after the seed wins. `open`: created at the
 * child's start, its only root is `root`; `applied` / `discarded` / `kept`: what the human did
 * with it; `inherited`: a descendant of a worktree child, confined to the same worktree (the
 * `owner`'s). The fold of these events is what a cold resume roots the child in.
 */
export interface WorktreeEvent extends Base<'worktree'> {
  state: WorktreeState;
  /** The repository's top folder (the parent's checkout). */
  repo: string;
  /** The worktree's folder. */
  path: string;
  /** The child's root inside it (the parent's root at the same place in the repository). */
  root: string;
  branch: string;
  /** The commit it was created from: the parent's state then, uncommitted changes included. */
  base: string;
  /** The session whose worktree it is (set on `inherited`). */
  owner?: string;
  /** The commit on the branch the state change was made from (`applied`, `kept`). */
  head?: string;
  /** Files the change touched (`applied`). */
  files?: number;
}

/** One file a step changed (decision 0059): absolute path, git blob ids in the root's shadow repository (null: absent), the call that changed it. */
export interface CheckpointChange {
  path: string;
  /** The real workspace root holding it: its shadow repository holds the blobs. */
  root: string;
  before: string | null;
  after: string | null;
  callId: string;
  /** The tool that changed it (`write_file`, `edit_file`, `run_command`), or `rewind`. */
  tool: string;
  /**
   * Recorded at an open after a crash cut its call (decision 0059): `after` is what the open found,
   * which may hold edits made between the crash and the open; a rewind asks before restoring it.
   */
  recovered?: true;
  /**
   * `before` was an executable file (a command's or a rewind's change, read from the mode git or
   * the file has): a rewind that makes it again makes it executable. File tools keep a file's mode,
   * so their changes say nothing of it.
   */
  beforeExecutable?: true;
}

/** A file left out of checkpoints (said once per session): ignored by the root's `.gitignore`, or over the size cap. */
export interface CheckpointSkip {
  path: string;
  reason: 'ignored' | 'too-large';
}

/**
 * What one step of a turn changed in the workspace (issue 24, decision 0059), staged with the
 * step's results. A rewind records one too (tool `rewind`, with `rewind`), so it can be undone.
 * Not model history.
 */
export interface CheckpointEvent extends Base<'checkpoint'> {
  turnId?: string;
  changes: CheckpointChange[];
  skipped?: CheckpointSkip[];
  /** Set on a rewind's own record: the point it went back to (or the rewind it undid), and which sessions' changes. */
  rewind?: { toSeq?: number; undoes?: number; subtree: boolean; sessions: string[] };
}
