import type { SessionSummary } from './summary';

/**
 * A session's status, one vocabulary for every reader (tree, `list_agents`, `arbor sessions`,
 * the status bar): running a turn; its turn queued for a free slot (the limit on children
 * running at once: no request made yet); running but blocked on a human's approval; waiting for its
 * own live children; idle (a conversation between turns); settled (a delegated child whose
 * last turn completed); interrupted (stopped — by a human, or by its subtree's budget — or its
 * process died during the turn); failed.
 */
export type SessionStatus = 'running' | 'queued' | 'approval' | 'waiting' | 'idle' | 'settled' | 'interrupted' | 'failed';

/** What only the live process knows. Absent: nothing runs the session (CLI, after a crash). */
export interface LiveState {
  /** A turn of this session runs in this process (or a compaction the user asked for: a model request of its own). */
  running: boolean;
  /** That turn waits for a free slot before its first request (the fan-out limit). */
  queued?: boolean;
  /** That turn waits for a human's answer to an approval. */
  awaitingApproval?: boolean;
  /** It has resident children that are still working (running or waiting themselves). */
  waitingForChildren: boolean;
}

/**
 * The one status fold. A turn the log shows open that no live process runs means the
 * process that ran it is gone: `interrupted`, never `settled`.
 */
export function sessionStatus(s: SessionSummary, live?: LiveState): SessionStatus {
  if (live?.running) return live.queued ? 'queued' : live.awaitingApproval ? 'approval' : 'running';
  if (live?.waitingForChildren) return 'waiting';
  if (s.openTurn) return 'interrupted';
  const last = s.lastStopReason;
  // A budget stop is a stop, not a failure (decision 0034): nothing went wrong, the work was
  // cut where the budget said, and a message after the budget is raised goes on from there.
  if (last === 'interrupted' || last === 'cancelled' || last === 'budget') return 'interrupted';
  if (last === 'error') return 'failed';
  if (last && s.delegated) return 'settled';
  return 'idle';
}
