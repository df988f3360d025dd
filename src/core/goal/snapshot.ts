import type { GoalBlockCode, GoalSnapshot, SessionEvent } from '../session/events';
import { GOAL_LIMITS } from '../session/validate';

export type { GoalBlockCode, GoalOperation, GoalPhase, GoalSnapshot } from '../session/events';
export { GOAL_LIMITS };

export type GoalErrorCode =
  /** The session has no goal (never set, or cleared). */
  | 'NO_GOAL'
  /** Goals belong to root conversations; a subagent cannot hold one. */
  | 'NOT_ROOT'
  | 'BAD_OBJECTIVE'
  | 'BAD_MAX_ROUNDS'
  /** The operation does not apply in the goal's phase (e.g. pause a complete goal). */
  | 'BAD_PHASE'
  /** Resume with every round used: raise the limit first. */
  | 'ROUNDS_EXHAUSTED'
  /** The harness is closing: no goal changes any more. */
  | 'CLOSED';

/** A refused goal operation: the code says what happened, the message what to do. */
export class GoalError extends Error {
  override readonly name = 'GoalError';
  constructor(
    readonly code: GoalErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** The goal of a log: the last `goal/change` wins (a tombstone clears), plus the last revision used. */
export interface GoalFold {
  goal: GoalSnapshot | null;
  revision: number;
}

export function emptyGoalFold(): GoalFold {
  return { goal: null, revision: 0 };
}

/** Move the fold by one event; true when it was a `goal/change`. */
export function foldGoalEvent(f: GoalFold, e: SessionEvent): boolean {
  if (e.type !== 'goal/change') return false;
  f.goal = e.goal ? structuredClone(e.goal) : null;
  f.revision = e.goal?.revision ?? f.revision + 1;
  return true;
}

/** A round limit the human gave: a whole number from 1 to GOAL_LIMITS.maxRounds, else BAD_MAX_ROUNDS. */
export function checkMaxRounds(n: unknown): number {
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1 || n > GOAL_LIMITS.maxRounds) {
    throw new GoalError('BAD_MAX_ROUNDS', `The round limit must be a whole number from 1 to ${GOAL_LIMITS.maxRounds}; got ${String(n)}.`);
  }
  return n;
}

export function checkObjective(s: unknown): string {
  const t = typeof s === 'string' ? s.trim() : '';
  if (t.length === 0) throw new GoalError('BAD_OBJECTIVE', 'A goal needs an objective: say what the conversation should achieve.');
  if (t.length > GOAL_LIMITS.objectiveChars)
    throw new GoalError('BAD_OBJECTIVE', `The objective is ${t.length} characters; keep it under ${GOAL_LIMITS.objectiveChars}.`);
  return t;
}

/** The block reason a code gets when none is written. */
export function blockMessage(code: GoalBlockCode, g: GoalSnapshot): string {
  if (code === 'round-limit') return `Goal reached its limit of ${g.maxGoalRounds} rounds; raise the limit, then resume.`;
  if (code === 'prompt-rejected') return 'A human message came before the planned goal round; the round was dropped. Resume the goal to go on.';
  if (code === 'round-error') return 'Goal rounds kept failing; check the model, then resume.';
  return 'The model reported that it cannot go on.';
}

/**
 * The user message of one round: the objective travels here, never in the system prompt, and in
 * every round (a compaction may fold the earlier ones away). How to report is said in full in the
 * first round after the human set or resumed the goal; the rounds that follow it point to the
 * `goal` tool, whose description says the same, instead of adding it to the context again.
 */
export function roundText(g: GoalSnapshot, first: boolean): string {
  const head = `[Goal round ${g.roundsStarted} of ${g.maxGoalRounds}] Keep working toward this goal:\n\n${g.objective}\n\n`;
  if (!first) return `${head}Take the next step; report through the \`goal\` tool.`;
  return (
    head +
    'Take the next step. When the goal is achieved call `goal` with action "complete"; if you cannot go on, action "block" with a reason; ' +
    'to leave a note of where you are, action "progress".'
  );
}

/** Whether a round after a goal in this state is the first of a run: the human has just set, resumed or re-limited it. */
export function startsRun(before: GoalSnapshot): boolean {
  return before.operation !== 'round' && before.operation !== 'progress';
}
