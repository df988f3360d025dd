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
  | 'UNKNOWN_AGENT'
  /** Best of N (decision 0061): a reply needs the prompt each way runs. */
  | 'PROMPT_REQUIRED'
  /** Best of N: the ways asked for are not 2–4, or the source cannot be tried several ways. */
  | 'BAD_WAYS'
  /** Best of N: no group with that id, or that session is not one of its ways. */
  | 'UNKNOWN_GROUP'
  /** Best of N: "Discard the others" names a way that was not applied (nothing came into the files). */
  | 'NOT_APPLIED'
  /** A subagent asked to open as a conversation of its own (a root): it runs only as itself, through the runtime. */
  | 'NOT_ROOT'
  /** The worktree a conversation works in was applied, discarded or kept (decision 0126): nothing more runs there. */
  | 'WORKTREE_CLOSED';

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
