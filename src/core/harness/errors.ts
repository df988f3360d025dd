/** What a harness operation refused, and so what the caller (the CLI, the panel) can say to do. */
export type HarnessErrorCode =
  /** A workspace folder does not exist. */
  | 'NO_WORKSPACE'
  /** No session with that id in the store. */
  | 'UNKNOWN_SESSION'
  /** A fork point names no event of the session. */
  | 'NO_SUCH_EVENT'
  /** A fork point lies in a turn that has not ended. */
  | 'TURN_NOT_ENDED'
  /** A session (or one under it) is running; interrupt it first. */
  | 'RUNNING'
  /** No active grant with that id (revoked already, or never given). */
  | 'UNKNOWN_GRANT'
  /** Agents keep waking each other: settle gave up. */
  | 'NOT_SETTLING'
  /** No agent file defines that name. */
  | 'UNKNOWN_AGENT';

/** A refusal of the harness façade, with a code hosts map to advice (like `SubagentError`). */
export class HarnessError extends Error {
  override readonly name = 'HarnessError';
  constructor(
    readonly code: HarnessErrorCode,
    message: string,
  ) {
    super(message);
  }
}
