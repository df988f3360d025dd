import type { Agent } from '../agent/agent';
import type { PriceBook } from '../cost/prices';
import type { Spend } from '../cost/spend';
import type { SessionLive } from '../live/state';
import type { Budget } from '../session/budget';
import type { MessageSource, SessionHeader } from '../session/events';
import type { SessionSummary } from '../session/summary';
import type { FanoutLimiter } from './fanout';
import type { MirrorRegistry } from './mirrors';
import type { ContinuableStart, FollowupPath, StartOptions, SubagentRequest, SubagentRun } from './types';

/**
 * The subagent runtime as its tools, `control.ts` and hosts see it: public methods only.
 * The delegation tools take this interface, not the runtime class, so the runtime can
 * register them (report, submit_result) without an import circle.
 */
export interface SubagentControl {
  /** One-shot: the child runs one turn; `result` never rejects for a model failure; the caller disposes. */
  start(caller: Agent, providerName: string, request: SubagentRequest, opts?: StartOptions): Promise<SubagentRun>;
  /** Continuable: resolves once the first message is durably in the child's inbox. */
  startContinuable(caller: Agent, providerName: string, request: SubagentRequest, opts?: StartOptions): Promise<ContinuableStart>;
  /** Follow-up to a continuable child: inbox, wake, or cold resume. `callerId` null = the human. */
  /** `signal`: the sending turn's; once aborted before the message is written, nothing is sent (CANCELLED). */
  followup(callerId: string | null, childId: string, text: string, signal?: AbortSignal): Promise<{ messageId: string; path: FollowupPath }>;
  /** Deliver a message to a parent: a runtime notice that wakes it, or a quiet history entry. */
  deliver(parentId: string, text: string, source: MessageSource, quiet?: boolean): Promise<void>;
  /** The resident agent of a session, if any (the caller of a tool always is). */
  resident(id: string): Agent | undefined;
  /** A session's durable header (undefined: no such session). */
  header(id: string): SessionHeader | undefined;
  /** Every descendant of a session, breadth-first. */
  descendants(id: string): SessionHeader[];
  /** A session's summary, after checking that its log still reads (throws if it does not). */
  readSummary(id: string): Promise<SessionSummary>;
  /** The session and its ancestors, nearest first. */
  lineage(id: string): string[];
  /** The descriptor mode of a stored child, if it has one. */
  modeOf(childId: string): Promise<'one-shot' | 'continuable' | undefined>;
  /** A resident one-shot child (its result not yet taken). */
  isOneShot(id: string): boolean;
  /** A child whose turns a remote program runs (its provider has a driver, decision 0035). */
  isRemote(id: string): boolean;
  /** A resident, not yet released continuable child. */
  isActive(id: string): boolean;
  /** The depth a session was started or resumed at in this process (0 when unknown). */
  depthOf(id: string): number;
  /** The session has resident children (continuable activations or one-shots). */
  hasLiveChildren(id: string): boolean;
  /**
   * A turn of the session runs now: its resident agent's, or a mirror's (an ACP agent's own
   * sub-session, decision 0041, which works when its agent says so). What every status reader asks.
   */
  isRunning(id: string): boolean;
  /** That turn waits for a human's answer (a resident agent's approval, or a mirror's `requires_action`). */
  awaitsApproval(id: string): boolean;
  /** The session's live state, from the one assembler (decision 0054): what every status reader asks. */
  liveOf(id: string): SessionLive;
  /** A background one-shot result is on its way to the parent: `whenQuiet` waits for it. */
  trackBackground<T>(p: Promise<T>): Promise<T>;
  /** Prices per model now, when the deployment counts cost (decision 0033). */
  priceBook(): PriceBook | undefined;
  /** A session's own budget and what its subtree spent against it, when it has one (decision 0034). */
  budgetState(id: string): { budget: Budget; spent: Spend } | undefined;
  /** The bound on children running at once (`fanout.limit` follows the setting). */
  readonly fanout: FanoutLimiter;
  /** A remote program's own sub-sessions shown in the tree: whether they work now, how to stop one (decision 0041). */
  readonly mirrors: MirrorRegistry;
}
