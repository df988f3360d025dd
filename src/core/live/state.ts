import { type LiveState, type SessionStatus, sessionStatus } from '../session/status';
import type { SessionSummary } from '../session/summary';

/**
 * Everything only this process knows of a session now (decision 0054): the status fold's
 * inputs (`LiveState`) and what the faces show beside the status. One assembler
 * (`Harness.liveOf`) fills it for every face: the panel's tree, `list_agents`,
 * `arbor sessions --json`, the status bar and `arbor acp`.
 */
export interface SessionLive extends Required<LiveState> {
  /** In memory and not released: its parent may still hear from it (a continuable child in its release delay, a one-shot child until its result is taken). */
  resident: boolean;
  /** Its goal is armed here (activation is never in the log). */
  goalArmed: boolean;
  /** Workflow runs of this session going in this process. */
  workflows: string[];
  /** A mirror (an ACP agent's own sub-session) that its agent says works. */
  mirrorRunning: boolean;
}

/** Nothing runs it here: a CLI without a harness, or a session no process has open. */
export const AT_REST: SessionLive = Object.freeze({
  running: false,
  queued: false,
  awaitingApproval: false,
  waitingForChildren: false,
  resident: false,
  goalArmed: false,
  workflows: [],
  mirrorRunning: false,
}) as SessionLive;

/** A session as every face shows it: what it did (the summary), what it does now, and the one status. */
export interface SessionView {
  id: string;
  /** Read-only: the store's own copy when the caller passed none. */
  summary: Readonly<SessionSummary>;
  live: SessionLive;
  status: SessionStatus;
}

/** The one status question, over a summary and the live state. */
export function viewOf(id: string, summary: Readonly<SessionSummary>, live: SessionLive = AT_REST): SessionView {
  return { id, summary, live, status: sessionStatus(summary, live) };
}
