import type { ModelClient } from '../model/types';
import type { ApprovalPolicy, InboxAcceptedEvent, SandboxMode } from '../session/events';
import type { ApprovalPort, ProtectedPath, Tool } from '../tools/tool';
import type { SessionWriter } from './session-writer';
import type { ClaimedMessage, TurnOutcome } from './turn';

/** Runs one claimed message as a turn: `runTurn` (the model loop) or a remote program's driver. */
export type TurnRunner = (cfg: AgentConfig, msg: ClaimedMessage, signal: AbortSignal, beforeStep?: () => Promise<void>) => Promise<TurnOutcome>;

export interface AgentConfig {
  writer: SessionWriter;
  model: ModelClient;
  modelName: string;
  maxTokens?: number;
  /** The tools this agent sees, resolved by scope; read at every step. */
  tools: () => readonly Tool[];
  /** The system prompt, assembled by scope; read at every step. */
  system: () => string;
  /** Real paths of the workspace folders. */
  roots: readonly string[];
  /** Paths writes need approval for besides the protected names (the session store). */
  protectedPaths?: readonly ProtectedPath[];
  /** Deployment defaults; the session's own policy events override them. */
  defaults: { sandbox: SandboxMode; approval: ApprovalPolicy };
  approval?: ApprovalPort;
  /** Model calls allowed in one turn before it ends with an error. */
  maxSteps?: number;
  /** Compact before a turn once the last prompt reached this many tokens. */
  compaction?: { thresholdTokens: number; keepTurns?: number };
  /** A child's slot under the harness-wide limit on children running at once; roots have none. */
  admission?: Admission;
  /** Streamed text and reasoning, for live views (not persisted until the message ends). */
  onDelta?: (kind: 'text' | 'reasoning', delta: string) => void;
  /**
   * Checked just before a claimed message would run (after any compaction): false means the
   * message is claimed (`inbox/claimed`) and no turn runs for it. Goal rounds use it so a queued
   * round is checked again when it reaches the head (decision 0029). Contract: it must not
   * throw (a throw or a rejection counts as false: fail closed) and should answer quickly, as
   * the agent's loop waits for it; it is called for every message, so it answers true at once
   * for the kinds it does not judge.
   */
  admit?: (msg: InboxAcceptedEvent) => boolean | Promise<boolean>;
  /** Replaces the model loop (a remote child, issue 13): the same claim → turn/start → … → turn/end contract. */
  runTurn?: TurnRunner;
}

export const DEFAULT_MAX_STEPS = 50;

/**
 * A slot a turn holds while it runs (the subagent runtime's fan-out limit). `enter` comes
 * before each model request and resolves once the turn holds a slot, or at once when `signal`
 * is aborted (then the turn ends before any request); `leave` when the turn has ended.
 */
export interface Admission {
  enter(signal: AbortSignal): Promise<void>;
  leave(): void;
}
