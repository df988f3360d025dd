import type { ApprovalPort } from '../policy/approval';
import type { PolicyCeiling } from '../policy/sandbox';
import type { ApprovalPolicy, Refusal, SandboxMode, StopReason, SubagentRemoteEvent, Usage } from '../session/events';
import type { TurnBounds } from './remote-bounds';

/**
 * The remote seam (issue 13, decision 0035): a provider may carry a driver that runs a
 * child's turn in another program (Codex, Claude Code, another Arbor) instead of Arbor's
 * model loop. The runtime still owns the child's session, inbox, one-shot result, cancel,
 * listing and disposal; the driver only turns the program's stream into sink calls.
 */
export interface RemoteDriver {
  /** 'codex' | 'claude-code' | 'dsh-sdk' | … */
  program: string;
  /** Prefixes the program's tool names in the log (`codex:shell`), so no reader takes them for Arbor's own. */
  toolPrefix: string;
  /**
   * Who serves the program's model requests, as Arbor knows it (the descriptor's
   * `modelProvider`): 'anthropic' for Claude Code, 'openai-compatible' for another Arbor;
   * absent, the program itself (its own configuration chooses, as Codex's and an ACP agent's do).
   */
  modelProvider?: string;
  /**
   * The model the program is told to run, read when a child starts (its setting; another
   * Arbor's endpoint model). Undefined: the program's own default, recorded when it says which.
   */
  model?(): string | undefined;
  /** Refuse a mode the program cannot enforce (UNSUPPORTED_SANDBOX) instead of running it wider. */
  supports(sandbox: SandboxMode): boolean;
  /** The wall-clock limit of one turn (ms); absent: DEFAULT_TURN_TIMEOUT_MS. Past it the program is stopped and the turn ends `error`. */
  turnTimeoutMs?: number;
  runTurn(ctx: RemoteTurnContext, sink: RemoteSink): Promise<RemoteOutcome>;
}

export interface RemoteTurnContext {
  childId: string;
  /** What the program is asked: the delegation notice the child was given, then the task. */
  prompt: string;
  cwd: string;
  /** Effective policy, folded from the child's own log (its delegation events): never wider than the parent's. */
  sandbox: SandboxMode;
  approvalPolicy: ApprovalPolicy;
  /**
   * Where a program that asks before acting (ACP's `session/request_permission`) is answered
   * under approval `ask`: the escalating port (the human, the child's lineage shown, a timeout
   * that denies). Absent: nobody can answer, every such question is refused.
   */
  approval?: ApprovalPort;
  /**
   * The deployment's ceiling (decision 0125): a program's question is about acting past its own
   * mode, outside any OS sandbox, so under one narrower than full-access it is refused unasked.
   */
  ceiling?: PolicyCeiling;
  /** Aborted by an interrupt (reason 'interrupted' or an InterruptReason) or a disposal ('cancelled'). */
  signal: AbortSignal;
  // ── for a driver whose child lives on across turns (a placed child, decision 0074) ──
  /** This turn's message alone (`prompt` adds the delegation notice to it). */
  task?: string;
  /** The child's roots (a worktree child's worktree). */
  roots?: readonly string[];
  /** The program's session id recorded by an earlier turn (the last `subagent/remote`): the session to load again. */
  resume?: string;
  /** The child's persona (its descriptor's), for a program that takes it as words. */
  persona?: string;
  /** A one-shot child: no turn follows this one (NOT_CONTINUABLE), so what it keeps elsewhere may go once its changes are back. */
  oneShot?: boolean;
}

/** How the program's turn ended, as the driver read it. The wrapper turns an abort into interrupted/cancelled. */
export interface RemoteOutcome {
  stopReason: StopReason;
  error?: string;
  /**
   * Something of the turn may still run (a container the engine could not remove: CONTAINER_LEFT),
   * in words that say what and how to end it: the turn's error even when it was stopped, where
   * `error` gives way to the stop's own reason.
   */
  left?: string;
}

/** A remote turn's wall-clock limit when its settings give none: an hour (`arbor.remote.turnTimeoutMinutes`). */
export const DEFAULT_TURN_TIMEOUT_MS = 60 * 60 * 1000;

/** Identity of the program's run: recorded once as `subagent/remote` (its payload). */
export type RemoteIdentity = Omit<SubagentRemoteEvent, 'seq' | 'type' | 'at'>;

/**
 * Where a driver sends what the program said and did. It keeps the session's rules:
 * buffered text/reasoning become one `assistant/message` (before a tool call, or at the end),
 * call ids are unique in the turn, results for unknown ids are dropped (counted), calls left
 * unanswered are closed with error stand-ins, usage goes on the last assistant message.
 */
export interface RemoteSink {
  /** Live only (the panel's streaming text); not persisted. */
  delta(kind: 'text' | 'reasoning', text: string): void;
  /** Content to persist with the next assistant message. */
  text(text: string): void;
  reasoning(text: string): void;
  /** The model name the program reports (goes on the assistant messages). */
  model(name: string): void;
  /** A call the program made, under its own tool name (the sink prefixes it, e.g. `codex:shell`). */
  toolCall(id: string, name: string, args: unknown): Promise<void>;
  toolResult(id: string, content: string, isError: boolean): Promise<void>;
  /** The turn's total usage (replaces any earlier report). */
  usage(u: Usage): void;
  external(info: RemoteIdentity): Promise<void>;
  /** A line or event the driver skipped (non-JSON, unknown type, a sub-agent's line): counted, never fatal. */
  skipped(kind: string): void;
  /**
   * What the turn may still keep (decision 0044): a driver that gathers pieces before handing
   * them over (ACP's chunks, a call's streamed output) keeps no more than `bounds.room()`.
   */
  readonly bounds: TurnBounds;
  /** The driver dropped this much of what the program sent (`what`: "text", "tool output"…): said in the transcript. */
  cut(what: string, bytes: number): void;
  /** The program was refused what it asked permission for, for this call: its result carries the refusal mark (decision 0015). */
  refused(id: string, refusal: Refusal): void;
}
