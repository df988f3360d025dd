/**
 * Why a workflow run (or one `agent()` call in it) failed. The first five are fatal inside
 * the script: `agent()` throws them and the combinators pass them up instead of turning
 * them into `null` (seed 002). A script that ends by throwing one of them ends the run with
 * that code; any other throw is `SCRIPT_ERROR` (the host decides: `SCRIPT_CODES`). `BUDGET`
 * ends a run whose agent a budget stopped (the run's own or an ancestor's).
 */
export type WorkflowErrorCode =
  | 'AGENT_CAP'
  | 'CANCELLED'
  | 'WALL_CLOCK'
  | 'BUDGET'
  | 'BAD_AGENT_REQUEST'
  | 'BAD_INPUT'
  | 'NOT_LIVE'
  | 'NO_SANDBOX'
  /** No OS sandbox could start and a ceiling (Restricted Mode, an explicit CLI `--sandbox`) rules out running the script without one. */
  | 'POLICY_CEILING'
  | 'SCRIPT_PARSE'
  | 'SCRIPT_ERROR'
  | 'SCRIPT_OOM'
  | 'SCRIPT_STALLED'
  | 'SCRIPT_EXITED'
  | 'SCRIPT_PROTOCOL'
  | 'RESULT_NOT_JSON'
  | 'RESULT_TOO_LARGE'
  /** The script returned while agents it started still ran: they were cancelled (its result is kept). */
  | 'AGENTS_UNFINISHED';

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

/** The codes a script's own failure may end a run with; anything else it names reads as `SCRIPT_ERROR`. */
export const SCRIPT_CODES: ReadonlySet<string> = new Set<WorkflowErrorCode>([
  'AGENT_CAP',
  'CANCELLED',
  'WALL_CLOCK',
  'BUDGET',
  'BAD_AGENT_REQUEST',
  'RESULT_NOT_JSON',
  // the script process's own refusal of a result past what one message carries (workflow-child.ts)
  'RESULT_TOO_LARGE',
]);

/** The run's code for a script's failure that named `code`. */
export const scriptCode = (code: string): WorkflowErrorCode => (SCRIPT_CODES.has(code) ? (code as WorkflowErrorCode) : 'SCRIPT_ERROR');
