import type { Base } from './base';

// A goal's durable snapshots (decision 0029). Not model history.

/** A goal's phase (seed 002): the clear tombstone is `goal: null`, not a phase. */
export type GoalPhase = 'active' | 'paused' | 'blocked' | 'complete';
/** Which operation wrote a goal snapshot (the human's, the driver's or the model's). */
export type GoalOperation = 'set' | 'pause' | 'resume' | 'limit' | 'round' | 'interrupt' | 'progress' | 'complete' | 'block';
/** Why a goal is blocked: rounds used up, a human prompt beat a queued round, the model said so, rounds kept failing. */
export type GoalBlockCode = 'round-limit' | 'prompt-rejected' | 'model' | 'round-error';

/**
 * Every durable fact of a goal, whole (decision 0029): the last `goal/change` is the goal.
 * Whether it is armed (may run rounds by itself) is never here: that is the live process's.
 */
export interface GoalSnapshot {
  objective: string;
  phase: GoalPhase;
  maxGoalRounds: number;
  roundsStarted: number;
  /** Grows by one with every snapshot of this session (across clears): a queued round names the revision it was planned under. */
  revision: number;
  operation: GoalOperation;
  /** Only when `phase` is `blocked`. */
  blocked?: { code: GoalBlockCode; message: string };
  /** The model's latest progress report. */
  note?: string;
}

export interface GoalChangeEvent extends Base<'goal/change'> {
  /** null: the goal was cleared (the tombstone; it takes the next revision). */
  goal: GoalSnapshot | null;
}
