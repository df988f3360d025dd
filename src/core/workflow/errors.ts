/**
 * Why a workflow run (or one `agent()` call in it) failed. The first five are fatal inside
 * the script: `agent()` throws them and the combinators pass them up instead of turning
 * them into `null` (seed 002). `BUDGET` is reserved for the token budget (a later issue):
 * the engine already ends a run with it when `WorkflowLimits.overBudget` says so.
 */
export type WorkflowErrorCode =
  | 'AGENT_CAP'
  | 'CANCELLED'
  | 'WALL_CLOCK'
  | 'BUDGET'
  | 'BAD_AGENT_REQUEST'
  | 'BAD_INPUT'
  | 'NOT_LIVE'
  | 'SCRIPT_PARSE'
  | 'SCRIPT_ERROR'
  | 'SCRIPT_OOM'
  | 'SCRIPT_STALLED'
  | 'SCRIPT_EXITED'
  | 'SCRIPT_PROTOCOL'
  | 'RESULT_NOT_JSON'
  | 'RESULT_TOO_LARGE';

/** Thrown to the script by `agent()`, and never turned into `null` by a combinator. */
export const FATAL_CODES: ReadonlySet<string> = new Set(['AGENT_CAP', 'CANCELLED', 'WALL_CLOCK', 'BUDGET', 'BAD_AGENT_REQUEST']);

export class WorkflowError extends Error {
  override readonly name = 'WorkflowError';
  constructor(
    readonly code: WorkflowErrorCode,
    message: string,
    /** For SCRIPT_PARSE / SCRIPT_ERROR: the line in the model's script (1-based). */
    readonly line?: number,
  ) {
    super(message);
  }
}
