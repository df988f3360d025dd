import type { Harness } from '../../core/harness';
import type { ApprovalReply } from '../../core/policy/approval';
import type { SessionEvent } from '../../core/session/events';
import type { HostToWebview, RequestMessage, RequestResults, RequestType, WebviewToHost } from '../../protocol';
import type { GoalActions } from '../goal-actions';
import type { RunFeed } from '../run-feed';
import type { SessionFeed } from '../session-feed';
import type { ControllerHooks, ViewPort } from '../view-port';

/** One handler per request: what it returns is the success answer's payload (`RequestResults`). */
export type RequestHandlers = { [K in RequestType]: (port: ViewPort, msg: RequestMessage<K>) => Promise<RequestResults[K]> };
export type NoticeType = Exclude<WebviewToHost['type'], RequestType>;
/** One handler per message that expects no answer (a failure is logged). */
export type NoticeHandlers = { [K in NoticeType]: (port: ViewPort, msg: Extract<WebviewToHost, { type: K }>) => Promise<void> | void };

/**
 * What the handler maps need of the panel controller, passed in explicitly (the controller
 * builds it; handlers never import the controller, so no import circle).
 */
export interface HandlerContext {
  /** The harness, opened on first use. */
  ensure(): Promise<Harness>;
  hooks: ControllerHooks;
  feed: Pick<SessionFeed, 'reset' | 'older' | 'grants' | 'queue'>;
  runFeed: Pick<RunFeed, 'reset'>;
  goals: GoalActions;
  /** A panel's snapshot: its port takes the host's selection; the selection's number (decision 0120). */
  adopt(port: ViewPort): number;
  /** A view selected a session itself (`ViewSelection.follow`); false: a stale restore, dropped. */
  follow(port: ViewPort, sessionId: string, composedUnder: number | undefined, restored: boolean): boolean;
  /** Show a session in a view (a transcript tab opens it in a tab of its own). */
  select(port: ViewPort, sessionId: string): void;
  /** Settles when the first fold of every log is done (it never rejects). */
  folded(): Promise<void>;
  /** What the `state/snapshot` answer carries besides the selection. */
  nodes(): Extract<HostToWebview, { type: 'state/snapshot' }>['nodes'];
  approvals(): Extract<HostToWebview, { type: 'state/snapshot' }>['approvals'];
  mcpServers(): HostToWebview;
  projectFiles(h: Harness): HostToWebview;
  /** The panel's notice of orphaned worktrees (decision 0060). */
  worktreeOrphans(h: Harness): Promise<HostToWebview>;
  /** To every connected view. */
  broadcast(msg: HostToWebview): void;
  answer(requestId: string, reply: ApprovalReply): boolean;
  newDraft(): void;
  nameOf(sessionId: string): Promise<string>;
  /** The tree shows this node (a session, or a workflow run once the logs are folded). */
  shows(id: string): boolean;
  interrupt(sessionId: string): Promise<string[]>;
  cancelWorkflow(runId: string): Promise<void>;
  forkAndShow(sessionId: string, seq: number, from: 'panel' | 'transcript'): Promise<string>;
  send(sessionId: string, text: string): Promise<void>;
  events(sessionId: string): Promise<readonly SessionEvent[]>;
  setBudget(sessionId: string, budget: { maxTokens?: number; maxCostUsd?: number } | null): Promise<void>;
  startAgent(agent: string, port?: ViewPort): Promise<string>;
  /** "Try N ways…" (decision 0061): ask how, start the ways, show the first. */
  tryWays(sessionId: string, seq: number, port?: ViewPort): Promise<{ group?: string; ways: string[] }>;
}
