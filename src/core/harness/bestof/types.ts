import type { SessionStatus } from '../../session/status';
import type { WorktreeListing } from '../../worktree/service';

// What "Try N ways" (decision 0061) takes and shows: the public shapes of `harness.bestOf`.

/** One way asked for: its own model and/or agent file (both absent: the conversation's). */
export interface WaySpec {
  model?: string;
  agent?: string;
}

export interface BestOfStart {
  /** Required on a reply; on the human's own message, absent re-runs that message. */
  prompt?: string;
  /** 2–4 ways. */
  ways: readonly WaySpec[];
}

/** A file a way changed, with its added and removed line counts (from the unified diff). */
export interface WayFile {
  path: string;
  status: 'added' | 'modified' | 'deleted' | 'type-changed';
  added: number;
  removed: number;
}

export interface WayView {
  /** The way's session id (its worktree and its conversation). */
  id: string;
  way: number;
  title: string;
  model?: string;
  agent?: string;
  /** Its status now (running, settled, failed, …). */
  status: SessionStatus | 'unknown';
  /** Its turn has ended (or it never ran here): its result can be compared. */
  settled: boolean;
  /** Its last answer (the outcome), or the error its turn ended with. */
  outcome?: string;
  error?: string;
  /** Its worktree's state; `files` while its work can still be read (open or kept). */
  worktree: WorktreeListing['state'] | 'missing';
  branch?: string;
  files: WayFile[];
  /** Its worktree could not be read (what failed, what to do): `files` is then unknown, not empty. */
  unreadable?: string;
}

export interface GroupView {
  group: string;
  source: string;
  seq: number;
  prompt: string;
  ways: WayView[];
  /** The way applied first (the human's choice), if any. */
  chosen?: string;
  /** Every way has settled. */
  settled: boolean;
}

/** A group, as a list shows it (no diffs read). */
export interface GroupListing {
  group: string;
  source: string;
  seq: number;
  prompt: string;
  ways: string[];
}
