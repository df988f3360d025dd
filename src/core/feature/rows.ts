import type { Agent } from '../agent/agent';
import type { ToolCallHooks } from '../agent/config';
import type { LiveWhat, Observer } from '../live/changes';
import type { ApprovalRequest } from '../policy/approval';
import type { PromptSection } from '../scope/prompt';
import type { ScopeRegistry } from '../scope/registry';
import type { InboxAcceptedEvent } from '../session/events';
import type { Store } from '../store/store';
import type { SubagentRuntime } from '../subagent/runtime';
import type { ChildStart } from '../subagent/runtime-deps';
import type { SubagentProvider } from '../subagent/types';
import type { Tool } from '../tools/tool';

/**
 * What a feature's wiring gets from the harness: the registries it adds rows to, the subagent
 * runtime, and the harness's sessions as features reach them. (The `feature` layer ranks right
 * after `subagent`, the lowest that can name the runtime, so workflow, goal and a remote
 * provider's wiring — all above it — can each export a row.)
 */
export interface RowContext {
  tools: ScopeRegistry<Tool>;
  prompts: ScopeRegistry<PromptSection>;
  subagents: SubagentRuntime;
  /** Add a subagent provider (or replace the one of its name). */
  registerProvider(provider: SubagentProvider): void;
  host: {
    readonly store: Store;
    resident(id: string): Agent | undefined;
    openSession(id: string): Promise<Agent>;
    isSubagent(id: string): Promise<boolean>;
    /** The one change stream (decision 0054). */
    observe(fn: Observer): () => void;
    /** Live state the log does not show moved: observers hear it (and the session's parent, as `children`). */
    report(id: string, what: LiveWhat): void;
    /** Where the streamed text of a session no agent here runs (a mirror) goes: the change stream. Its events get there through the store. */
    streamOf(id: string): (kind: 'text' | 'reasoning', text: string) => void;
  };
}

/**
 * The lifecycle points a feature may take part in. Contracts: none may throw; `admit`,
 * `beforeToolCall` and `afterToolCall` keep the agent's contracts (see AgentConfig), and the
 * harness composes the rows' answers (every admit must say yes; the first block wins; each
 * after-hook sees the result the previous one left).
 */
export interface FeatureHooks extends Pick<ToolCallHooks, 'beforeToolCall' | 'afterToolCall'> {
  /** `signal`: aborted when the agent is stopped while it judges (AgentConfig.admit). */
  admit?(sessionId: string, msg: InboxAcceptedEvent, signal?: AbortSignal): boolean | Promise<boolean>;
  /** A root session was opened from its log (recovered, before its queue runs). */
  opened?(agent: Agent): Promise<void>;
  /**
   * A human Stop reached these sessions (a subtree), called in the Stop's tick, right after each
   * resident agent was paused and before any turn is ended: e.g. an active goal pauses, whether a
   * round runs or the Stop fell between two (decision 0127, amended s59). Must not reject.
   */
  stopped?(ids: readonly string[]): Promise<void>;
  /** The harness is closing: rows close in reverse order, before any turn is cancelled. */
  close?(why: string): Promise<void>;
  /**
   * A turn of `sessionId` would end `completed`: a returned reason makes it go on (the agent's
   * `beforeTurnEnd`, bounded there). The first row with a reason wins. Must not throw.
   */
  turnEnding?(sessionId: string, c: { text: string; continued: number; signal?: AbortSignal }): Promise<string | undefined>;
  /** Every call of a step of `sessionId` was answered; its results are staged next, synchronously after this (the agent's `beforeResults`). */
  stepAnswered?(sessionId: string): void;
  /** A compaction of `sessionId` is about to start (observe only). Must not throw. */
  compacting?(sessionId: string, reason: 'manual' | 'threshold', signal?: AbortSignal): Promise<void>;
  /** A child is about to be created: a returned reason vetoes it (the runtime's `beforeStart`). The first veto wins. */
  subagentStarting?(c: ChildStart): Promise<string | undefined>;
  /**
   * Tools this row is still bringing up (an MCP server's first start): a promise that settles
   * once they are registered or given up on, bounded by the row; undefined when nothing is
   * starting. A model request waits for it (the agent's `toolsReady`). Must not reject, and
   * settles at once when `signal` (a Stop of the turn) aborts.
   */
  toolsStarting?(signal: AbortSignal): Promise<void> | undefined;
  /** A human is being asked to approve an action (observe only: not awaited by the ask). Must not throw. */
  approvalAsked?(request: ApprovalRequest, signal: AbortSignal | undefined): void;
  /**
   * A row still has a settled root in hand and needs it resident (`Harness.release` refuses while
   * one says so): e.g. an armed goal whose next round is due. Synchronous; must not throw.
   */
  holds?(agent: Agent): boolean;
  /** `settle` waits for this, and is done only when `isQuiet` holds. */
  whenQuiet?(): Promise<void>;
  isQuiet?(): boolean;
}

/** One feature's wiring file exports one row: a name, and what wiring it returns. */
export interface FeatureRow<S = unknown> {
  name: string;
  wire(ctx: RowContext): { service: S; hooks?: FeatureHooks };
}
