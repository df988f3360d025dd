import type { ModelClient } from '../model/types';
import type { PolicyCeiling } from '../policy/sandbox';
import type { ApprovalPolicy, InboxAcceptedEvent, MessageSource, SandboxMode, StopReason, ToolCall } from '../session/events';
import type { ApprovalPort, ProtectedPath, Tool, ToolContext, ToolResult } from '../tools/tool';
import type { SessionWriter } from './session-writer';

/** The inbox message a turn runs (claimed, with its text and where it came from). */
export interface ClaimedMessage {
  messageId: string;
  text: string;
  source: MessageSource;
}

/** How a turn ended. */
export interface TurnOutcome {
  stopReason: StopReason;
  error?: string;
}

/** Runs one claimed message as a turn: `runTurn` (the model loop) or a remote program's driver. */
export type TurnRunner = (cfg: AgentConfig, msg: ClaimedMessage, signal: AbortSignal, beforeStep?: () => Promise<void>) => Promise<TurnOutcome>;

export interface AgentConfig extends ToolCallHooks {
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
  /** Deployment defaults; the session's own policy events override them, never past `ceiling` (Restricted Mode). */
  defaults: { sandbox: SandboxMode; approval: ApprovalPolicy; ceiling?: PolicyCeiling };
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
   * for the kinds it does not judge. `signal` is aborted when the agent is stopped while it
   * judges (decision 0099): its answer is then not awaited, the message stays queued unjudged,
   * and nothing runs — so a slow hook never holds a Stop; it should stop its own work then.
   */
  admit?: (msg: InboxAcceptedEvent, signal: AbortSignal) => boolean | Promise<boolean>;
  /**
   * Asked before a queued message's turn opens (before any compaction or `admit`): undefined
   * lets it open with no await; a promise holds it until it settles — true asks again (the queue's
   * head may have changed meanwhile; the hook answers undefined once nothing holds), false keeps
   * the message queued and unclaimed and pauses the agent (nothing runs until a waking message or
   * a resume). The worktree gate holds a turn so while the folder its session works in is being
   * applied, discarded or kept (decision 0126, amended in s60). Contract: must not throw (a throw
   * or a rejection counts as false: fail closed, the message is kept); bounded by its giver;
   * `signal` is aborted by a Stop, which does not wait for it: the message stays queued and the
   * agent paused at once.
   */
  beforeTurnOpen?: (signal: AbortSignal) => Promise<boolean> | undefined;
  /**
   * Checked before each model request, after the fan-out slot is taken and before anything of
   * the request is written: a refusal ends the turn with stop reason `budget` and its message,
   * and no request is made (issue 15, decision 0034); a grant's `maxTokens` is the completion
   * cap the request then carries — the same number the budget reserved (decision 0043).
   * Contract: synchronous, must not throw (a throw is a refusal: fail closed), and cheap — it
   * runs at every step of every agent.
   */
  beforeRequest?: (req: RequestBound) => RequestVerdict;
  /**
   * Awaited at each step's safe point, before the request is built: tools still coming up (an
   * MCP server's first start) are waited for, so the request carries them (decision 0055
   * amended). Returns undefined when nothing is starting (the request pays nothing). Contract:
   * must not reject, is bounded by its giver, and settles at once when `signal` aborts (Stop).
   */
  toolsReady?: (signal: AbortSignal) => Promise<void> | undefined;
  /** Replaces the model loop (a remote child, issue 13): the same claim → turn/start → … → turn/end contract. */
  runTurn?: TurnRunner;
  /**
   * Asked when the model answered with no tool call and the turn would end `completed`
   * (Claude Code's `Stop` hook): a returned reason is appended as a `hook` message and the turn
   * goes on with it; undefined ends the turn. `continued` counts the reasons this turn already
   * went on with: the turn asks at most `MAX_STOP_CONTINUES` times, so a hook cannot loop forever.
   * Contract: must not throw (a throw or a rejection ends the turn as if it said nothing).
   * `signal` is the turn's: once it is aborted (Stop) the answer is not awaited and the turn
   * ends interrupted at once (decision 0099); the hook should stop its own work then.
   */
  beforeTurnEnd?: (c: { text: string; continued: number; signal: AbortSignal }) => Promise<string | undefined>;
  /**
   * Awaited just before a compaction starts (Claude Code's `PreCompact`), to observe it: it
   * cannot stop one. Contract: must not throw (a throw is dropped). `signal`, when given, is a
   * Stop of the agent: the hook should end its work (its process group is killed).
   */
  beforeCompaction?: (c: { reason: 'manual' | 'threshold'; signal?: AbortSignal }) => Promise<void>;
  /**
   * Called synchronously once every call of a step was answered, just before the step's
   * `tool/result`s are staged: a layer stages its own records of the step here (hook runs), so
   * they share the results' group commit. Contract: synchronous, must not throw (a throw is dropped).
   */
  beforeResults?: () => void;
}

/** How many times one turn goes on with a `beforeTurnEnd` reason before it ends anyway. */
export const MAX_STOP_CONTINUES = 3;

/** What a request is about to be, for a budget check: its model, body size and completion cap. */
export interface RequestBound {
  model: string;
  bytes: number;
  /** The deployment's own cap: the most the request may carry. */
  maxTokens?: number;
  /** The request cannot carry a cap (a remote program's): all of it must fit, or it is refused. */
  fixed?: boolean;
  /** A compaction's summary request: held apart from a turn's (both may be in flight), until its `compaction/end`. */
  compaction?: boolean;
}

/** A budget check's answer: refused, allowed with the cap the request must carry, or no budget applies. */
export type RequestVerdict = { refuse: string } | { maxTokens: number; loweredBy?: string } | undefined;

export const DEFAULT_MAX_STEPS = 50;

/** A tool's progress note, as hosts receive it (never in the log, never seen by the model). */
export interface ToolProgress {
  callId: string;
  tool: string;
  text: string;
}

/**
 * The points around each tool call a layer above plugs into (pi-mono's `beforeToolCall`).
 * Contracts: none may throw (a throw is caught: see each); all are awaited by the call they
 * wrap, so they answer quickly. Calls of one step run in parallel, and so do their hooks.
 */
export interface ToolCallHooks {
  /**
   * Just before a known tool runs with arguments that parsed and passed the schema (unknown
   * tools and bad arguments are answered without hooks). Return a result to answer the call
   * instead of running the tool (a block: say why in `content`, code it), or nothing to run it.
   * A throw or a rejection blocks the call with code BLOCKED (fail closed). `ctx` is the
   * call's context: a hook may ask the human through its approval port, never widen it.
   */
  beforeToolCall?: (c: {
    call: ToolCall;
    args: Record<string, unknown>;
    ctx: ToolContext;
  }) => ToolResult | undefined | undefined | Promise<ToolResult | undefined | undefined>;
  /**
   * After a call was answered (by the tool or by `beforeToolCall`), before the result is
   * written: return a result to replace it, or nothing to keep it. A throw or a rejection
   * keeps the result as it was. `args` is absent when the arguments did not parse.
   */
  afterToolCall?: (c: {
    call: ToolCall;
    args?: Record<string, unknown>;
    result: ToolResult;
    /** The call's context (session, policy, approval port): a hook may ask with it, never widen it. */
    ctx: ToolContext;
  }) => ToolResult | undefined | undefined | Promise<ToolResult | undefined | undefined>;
  /** A tool said how it is going (`ToolContext.progress`). Must not throw (a throw is dropped). */
  onProgress?: (p: ToolProgress) => void;
  /**
   * Called when `Agent.awaitingApproval` changes: a question of its turn was asked, or answered
   * (or abandoned). Contract: synchronous, must not throw (a throw is dropped); for views.
   */
  onApprovalChange?: () => void;
}

/**
 * A slot a turn holds while it runs (the subagent runtime's fan-out limit). `enter` comes
 * before each model request and resolves once the turn holds a slot, or at once when `signal`
 * is aborted (then the turn ends before any request). `leave` comes once the turn's closing
 * facts (its last reply, `turn/end`) are staged — it makes no request after that, and the next
 * child's request overlaps this one's last fdatasync (decision 0024, amended) — and again when
 * the turn has returned (or thrown); contract: idempotent, synchronous, must not throw.
 */
export interface Admission {
  enter(signal: AbortSignal): Promise<void>;
  leave(): void;
}
