/**
 * Why a workflow run (or one `agent()` call in it) failed. The first five are fatal inside
 * the script: `agent()` throws them and the combinators pass them up instead of turning
 * them into `null` (seed 002; the list is `FATAL` in `workflow-child.ts`, which imports no
 * module of ours). `BUDGET` ends a run whose agent a budget stopped (the run's own or an
 * ancestor's).
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
