import { describeError } from '../core/errors';
import type { Harness } from '../core/harness';
import type { ApprovalPort, ApprovalReply, ApprovalRequest } from '../core/policy/approval';
import type { SessionEvent } from '../core/session/events';
import { nameFromLog } from '../core/session/names';
import {
  type ApprovalPolicy,
  type HostToWebview,
  isRunNodeId,
  type NodeStatus,
  type ProjectFilesView,
  type RequestFailed,
  type RequestMessage,
  type SandboxMode,
  type SpendView,
  type TreeNode,
  type WebviewToHost,
} from '../protocol';
import { ApprovalDesk } from './approvals';
import { GoalActions } from './goal-actions';
import { bestOfRequests } from './handlers/bestof-requests';
import type { HandlerContext, NoticeHandlers, RequestHandlers } from './handlers/context';
import { goalRequests } from './handlers/goal-requests';
import { noticeHandlers } from './handlers/notices';
import { placementNames, placementRequests, startPlaced } from './handlers/placement-requests';
import { rewindRequests } from './handlers/rewind-requests';
import { sessionRequests } from './handlers/session-requests';
import { worktreeOrphans, worktreeRequests } from './handlers/worktree-requests';
import { nodeName } from './presenter/names';
import { projectView } from './presenter/project-view';
import { RunFeed } from './run-feed';
import { SessionFeed } from './session-feed';
import { requestForView } from './shown-paths';
import { TreeSync } from './tree-sync';
import { tryWays } from './try-ways';
import { describeInvalid, isWebviewToHost } from './validate-message';
import { type ControllerHooks, type ViewPort, ViewPorts } from './view-port';

export type { ControllerHooks, ViewPort } from './view-port';

/** The failure answer: the error's text, and its code when it has one (`HarnessError`, `StoreError`, `GoalError`, …). */
function failed(id: string, err: unknown): RequestFailed {
  const code = typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string' ? err.code : undefined;
  return { type: 'request/done', id, ok: false, error: err instanceof Error ? err.message : String(err), ...(code ? { code } : {}) };
}

/** A message or question that reached the controller after `dispose` (the window is closing or reloading). */
class PanelClosedError extends Error {
  readonly code = 'CLOSED';
  constructor(what: string) {
    super(`Arbor's panel is closing (the window is reloading or closing); ${what} was not done. Do it again once Arbor has reopened.`);
  }
}

/**
 * The host side of the panel and transcript tabs: validates every message, answers with a
 * snapshot on ready and deltas afterwards, and routes user intents into the harness.
 * It knows no VS Code API (hooks do), so it is tested without a VS Code.
 */
export class PanelController implements ApprovalPort {
  private readonly views = new ViewPorts();
  private readonly sync: TreeSync;
  private readonly feed: SessionFeed;
  /** What workflow run tabs receive. */
  private readonly runFeed: RunFeed;
  private readonly desk: ApprovalDesk;
  private harness: Harness | undefined;
  private selected: string | undefined;
  /** Settles when the first fold of every log is done (it never rejects). */
  private folded: Promise<void> = Promise.resolve();
  /** `dispose` ran: no message is acted on and no harness is opened from here on. */
  private disposed = false;
  /** Goal actions (the goal bar, the commands): set, pause, resume, clear, limit. */
  readonly goals = new GoalActions(() => this.ensure());
  /** One handler per message that expects no answer (`handlers/notices.ts`). */
  private readonly notices: NoticeHandlers;
  /** One handler per request (`handlers/session-requests.ts`, `handlers/goal-requests.ts`). */
  private readonly requests: RequestHandlers;

  constructor(
    private readonly getHarness: () => Promise<Harness>,
    private readonly hooks: ControllerHooks,
  ) {
    this.desk = new ApprovalDesk({
      opened: (prompt) => {
        this.sync.tree.setActivity(prompt.sessionId, 'waiting for approval');
        this.sync.pushMarked(prompt);
        this.broadcast({ type: 'approval/requested', prompt });
        this.hooks.approvalsChanged?.(this.desk.prompts(), prompt);
      },
      closed: (prompt, reply) => {
        this.sync.tree.setActivity(prompt.sessionId, undefined);
        this.broadcast({ type: 'approval/resolved', requestId: prompt.requestId, decision: reply.decision });
        this.sync.pushMarked(prompt);
        this.hooks.approvalsChanged?.(this.desk.prompts());
      },
    });
    const log = (level: 'info' | 'warn' | 'error', text: string): void => this.hooks.log(level, text);
    this.feed = new SessionFeed(this.views, {
      session: (id) => this.sessionOf(id),
      resident: (id) => this.harness?.resident(id),
      roots: () => this.harness?.roots ?? [],
      log,
    });
    this.runFeed = new RunFeed(this.views, {
      parentOf: (nodeId) => this.sync.tree.runs.parentSessionOf(nodeId),
      session: (id) => this.sessionOf(id),
      runOpen: (runId) => this.sync.tree.runOpen(runId),
      log,
    });
    this.sync = new TreeSync({
      harness: () => this.harness,
      views: this.views,
      feed: this.feed,
      runFeed: this.runFeed,
      desk: this.desk,
      log,
      mcpChanged: () => this.broadcast(this.mcpServers()),
    });
    const ctx: HandlerContext = {
      ensure: () => this.ensure(),
      hooks: this.hooks,
      feed: this.feed,
      runFeed: this.runFeed,
      goals: this.goals,
      selected: () => this.selected,
      setSelected: (id) => {
        this.selected = id;
      },
      select: (port, id) => this.select(port, id),
      folded: () => this.folded,
      nodes: () => this.sync.nodes(),
      approvals: () => this.desk.prompts(),
      mcpServers: () => this.mcpServers(),
      projectFiles: (h) => this.projectFiles(h),
      worktreeOrphans: (h) => worktreeOrphans(h),
      broadcast: (msg) => this.broadcast(msg),
      answer: (requestId, reply) => this.answer(requestId, reply),
      newDraft: () => this.newDraft(),
      nameOf: (id) => this.nameOf(id),
      shows: (id) => this.sync.tree.node(id) !== undefined,
      interrupt: (id) => this.interrupt(id),
      cancelWorkflow: (runId) => this.cancelWorkflow(runId),
      forkAndShow: (id, seq, from) => this.forkAndShow(id, seq, from),
      send: (id, text) => this.send(id, text),
      events: (id) => this.events(id),
      setBudget: (id, budget) => this.setBudget(id, budget),
      startAgent: (agent, port) => this.startAgent(agent, port),
      tryWays: (id, seq, port) => this.tryWays(id, seq, port),
    };
    this.notices = noticeHandlers(ctx);
    this.requests = {
      ...sessionRequests(ctx),
      ...goalRequests(ctx),
      ...rewindRequests(ctx),
      ...worktreeRequests(ctx),
      ...bestOfRequests(ctx),
      ...placementRequests(ctx),
    };
  }

  /** Sessions per status (the tree's one fold), for the status bar. */
  statusCounts(): Partial<Record<NodeStatus, number>> {
    return this.sync.statusCounts();
  }

  connect(port: ViewPort): () => void {
    return this.views.add(port);
  }

  /** Entry point for every message from a webview. Bad input gets an error reply, never a crash. */
  async receive(port: ViewPort, msg: unknown): Promise<void> {
    if (this.disposed) {
      // A view still posting while the host goes: a request gets its answer, nothing is done.
      const type = isWebviewToHost(msg) ? msg.type : 'a malformed message';
      this.hooks.log('warn', `${type} arrived after the panel was disposed; ignored`);
      if (isWebviewToHost(msg) && this.isRequest(msg)) port.post(failed(msg.id, new PanelClosedError(`"${msg.type}"`)));
      return;
    }
    if (!isWebviewToHost(msg)) {
      this.hooks.log('warn', `rejected webview message: ${describeInvalid(msg)}`);
      port.post({ type: 'message/rejected', code: 'BAD_MESSAGE', detail: describeInvalid(msg) });
      return;
    }
    if (this.isRequest(msg)) return this.request(port, msg);
    try {
      await (this.notices[msg.type] as (p: ViewPort, m: WebviewToHost) => Promise<void> | void)(port, msg);
    } catch (err) {
      this.hooks.log('error', `${msg.type} failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /** Run a request's handler and answer it once: its result, or its error with the error's code. */
  private async request(port: ViewPort, msg: RequestMessage): Promise<void> {
    try {
      const result = await (this.requests[msg.type] as (p: ViewPort, m: RequestMessage) => Promise<object>)(port, msg);
      port.post({ type: 'request/done', id: msg.id, ok: true, ...result } as HostToWebview);
    } catch (err) {
      const answer = failed(msg.id, err);
      this.hooks.log('error', `${msg.type} failed: ${answer.error}${answer.code ? ` (${answer.code})` : ''}`);
      port.post(answer);
    }
  }

  private isRequest(msg: WebviewToHost): msg is RequestMessage {
    return Object.hasOwn(this.requests, msg.type);
  }

  /** The human's approval port: every view shows the request; the first answer wins. */
  ask(request: ApprovalRequest, signal?: AbortSignal): Promise<ApprovalReply> {
    // No view will show it any more (`dispose` denied every pending one): denied, as they were.
    if (this.disposed) return Promise.resolve({ decision: 'deny' });
    return this.desk.ask(requestForView(request, this.harness?.roots ?? []), signal);
  }

  /** Answer a pending approval (a view, or the host's notification); false when already answered. */
  answer(requestId: string, reply: ApprovalReply): boolean {
    return this.desk.answer(requestId, reply);
  }

  // ── commands shared with the VS Code command palette ───────────────────────

  /** A human's "Cancel workflow": the run ends `cancelled` (its script stopped, its running agents cancelled). */
  async cancelWorkflow(runId: string): Promise<void> {
    const h = await this.ensure();
    if (!(await h.workflows.engine.cancel(runId))) throw new Error(`Workflow ${runId} is not running.`);
  }

  /**
   * Stop a subtree (the tree's Interrupt, the chat's Stop, the command): the session's turn
   * and the turns of all its running descendants; inboxes are kept and nothing resumes by itself.
   */

  async interrupt(sessionId: string): Promise<string[]> {
    const h = await this.ensure();
    const stopped = await h.interruptSubtree(sessionId);
    if (stopped.length === 0) throw new Error(`Nothing is running in ${this.knownName(sessionId) ?? sessionId} or under it.`);
    for (const id of stopped) this.sync.push(id);
    return stopped;
  }

  /**
   * Fork and show the fork the same way wherever it was asked for (the message's button or its
   * "Fork Conversation" menu): from a transcript tab in a tab of its own, and selected in the panel.
   */
  async forkAndShow(sessionId: string, seq: number, from: 'panel' | 'transcript'): Promise<string> {
    const fork = (await (await this.ensure()).forkSession(sessionId, seq)).id;
    if (from === 'transcript') this.hooks.openTranscript(fork);
    this.selectEverywhere(fork);
    return fork;
  }

  /** "Try N ways…" (decision 0061): the host asks how, the ways start, the first is shown where it was asked for. */
  async tryWays(sessionId: string, seq: number, port?: ViewPort): Promise<{ group?: string; ways: string[] }> {
    const r = await tryWays(await this.ensure(), this.hooks, sessionId, seq);
    if (r.ways[0]) port ? this.select(port, r.ways[0]) : this.selectEverywhere(r.ways[0]);
    return r;
  }

  /** A new conversation with an agent defined in a file (decision 0056), shown where it was asked for. */
  async startAgent(agent: string, port?: ViewPort): Promise<string> {
    const id = (await (await this.ensure()).createSession({ agent })).id;
    if (port) this.select(port, id);
    else this.selectEverywhere(id);
    return id;
  }

  /** The configured placements' names (decision 0074; the command's picker). */
  async placements(): Promise<string[]> {
    return placementNames(await this.ensure());
  }

  /** A human's task for a node on a placement (decision 0074): its continuable child, shown where the node is. */
  async runOnPlacement(sessionId: string, placement: string, prompt: string): Promise<string> {
    const child = await startPlaced(await this.ensure(), sessionId, placement, prompt);
    this.selectEverywhere(child);
    return child;
  }

  /** The agents defined in files now (the command's picker). */
  async agents(): Promise<ProjectFilesView['agents']> {
    const h = await this.ensure();
    h.project.refresh();
    return this.projectFiles(h).files.agents;
  }

  /** A project file may have changed (the host's file watcher): re-read; views hear it if it did. */
  async projectChanged(): Promise<void> {
    (await this.ensure()).project.refresh();
  }

  private projectFiles(h: Harness): Extract<HostToWebview, { type: 'project/files' }> {
    return { type: 'project/files', files: projectView(h.project.snapshot(), h.roots[0]) };
  }

  async send(sessionId: string, text: string): Promise<void> {
    const h = await this.ensure();
    await h.send(sessionId, text);
  }

  async events(sessionId: string): Promise<readonly SessionEvent[]> {
    return (await this.sessionOf(sessionId)).events;
  }

  /** Compact a conversation now (waits for its running turn). */
  async compact(sessionId: string): Promise<string> {
    const h = await this.ensure();
    if (await h.isSubagent(sessionId)) throw new Error('Compact a subagent from its parent; Arbor compacts conversations you own.');
    const r = await (await h.openSession(sessionId)).compact();
    return r.outcome === 'committed'
      ? 'Compacted: the earlier conversation is now a summary (the raw log keeps everything).'
      : `Not compacted (${r.outcome}${r.error ? `: ${r.error}` : ''}).`;
  }

  async deleteSession(sessionId: string): Promise<string[]> {
    const ids = await (await this.ensure()).deleteSession(sessionId);
    for (const id of ids) this.feed.forget(id);
    this.sync.removed(ids);
    this.hooks.statusChanged?.();
    return ids;
  }

  /** Every tree node, once every log has been folded (labels and statuses known). */
  async nodes(): Promise<TreeNode[]> {
    await this.ensure();
    await this.folded;
    return this.sync.tree.nodes();
  }

  /** What to call a session now, if the tree knows it (label ?? title ?? short fallback). */
  knownName(sessionId: string): string | undefined {
    const n = this.sync.tree.node(sessionId);
    return n ? nodeName(n) : undefined;
  }

  /** What to call a session, read from its own log when the tree has not folded it yet. */
  async nameOf(sessionId: string): Promise<string> {
    if (isRunNodeId(sessionId)) {
      await this.ensure();
      await this.folded;
      return this.knownName(sessionId) ?? 'Workflow run';
    }
    const s = await this.sessionOf(sessionId);
    return nameFromLog(s.header, s.events);
  }

  /** The MCP servers' states as the panel lists them (decision 0055). */
  private mcpServers(): HostToWebview {
    const servers = (this.harness?.mcp.states() ?? []).map((s) => ({
      name: s.name,
      source: s.source,
      phase: s.phase,
      toolCount: s.toolCount,
      ...(s.why ? { why: s.why } : {}),
    }));
    return { type: 'mcp/servers', servers };
  }

  settingsChanged(): void {
    this.broadcast({ type: 'settings/changed', settings: this.hooks.settings() });
  }

  /** "+": nothing selected, the input focused; the conversation is created by its first message. */
  newDraft(): void {
    this.selected = undefined;
    for (const p of this.views.panels()) {
      p.sessionId = undefined;
      p.post({ type: 'draft/start' });
    }
  }

  /** Set a session's own sandbox / approval (appended to its log) and show it on its node. */
  async setPolicy(sessionId: string, policy: { sandbox?: SandboxMode; approval?: ApprovalPolicy }): Promise<void> {
    const h = await this.ensure();
    // Resident or not, the policy event reaches the tree on the change stream (decision 0054).
    await h.setPolicy(sessionId, policy);
  }

  /**
   * A human sets (null: removes) a session's subtree budget (decision 0034); checked by the core
   * (a bad amount is refused with what is wrong). Raising it resumes nothing by itself.
   */
  async setBudget(sessionId: string, budget: { maxTokens?: number; maxCostUsd?: number } | null): Promise<void> {
    const h = await this.ensure();
    // The `budget/set` event moves the node and its ancestors' totals on the change stream.
    await h.setBudget(sessionId, budget);
  }

  /** Prices changed (settings): every node's cost is recomputed and re-sent. */
  async pricesChanged(): Promise<void> {
    const h = await this.ensure();
    this.sync.tree.setPrices(h.cost.prices);
    for (const id of this.sync.tree.ids()) this.sync.push(id);
  }

  /** Every conversation's subtree together (tokens, and dollars when every model has a price), for the status bar. */
  totalSpend(): SpendView {
    return this.sync.tree.totalSpend();
  }

  /** The panel's selected session, if any (the picker's "this session"). */
  get selectedSession(): string | undefined {
    return this.selected;
  }

  focusInput(): void {
    for (const p of this.views.panels()) p.post({ type: 'input/focus' });
  }

  selectEverywhere(sessionId: string): void {
    this.sync.track(sessionId);
    for (const p of this.views.panels()) this.select(p, sessionId);
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    this.feed.dispose();
    this.runFeed.dispose();
    this.sync.dispose();
    this.desk.denyAll();
  }

  // ── internals ──────────────────────────────────────────────────────────────

  private async ensure(): Promise<Harness> {
    // After dispose the host closes the harness: never open one it would not close (its store lock held, no clean marker).
    if (this.disposed) throw new PanelClosedError('the action');
    if (this.harness) return this.harness;
    const h = await this.getHarness();
    if (this.disposed) throw new PanelClosedError('the action');
    if (this.harness) return this.harness;
    this.harness = h;
    // Instruction and agent files re-read (at a request, or the host's watcher): every view hears it.
    h.project.onChange(() => this.broadcast(this.projectFiles(h)));
    // The status bar's total comes from the stored summaries (the durable fold): once they are
    // folded, after a reload too, it shows the same figure as before.
    this.folded = this.sync
      .follow(h)
      .then(() => this.hooks.statusChanged?.())
      .catch((err: unknown) => this.hooks.log('warn', `status bar: ${describeError(err)}`));
    return h;
  }

  private async sessionOf(id: string) {
    const h = await this.ensure();
    return await h.readSession(id);
  }

  private select(port: ViewPort, sessionId: string): void {
    this.sync.track(sessionId);
    if (port.view === 'transcript') {
      // A transcript tab stays on its session: a fork made there opens in a tab of its own.
      this.hooks.openTranscript(sessionId);
      this.selectEverywhere(sessionId);
      return;
    }
    this.selected = sessionId;
    port.sessionId = sessionId;
    port.post({ type: 'session/selected', sessionId });
    void this.feed.reset(port, sessionId).catch((err) => this.hooks.log('warn', String(err)));
  }

  /** "Rewind…" from a message's context menu: the view it came from opens its rewind there. */
  openRewind(sessionId: string, seq: number, from: 'panel' | 'transcript'): void {
    this.views.toView(from, sessionId, { type: 'rewind/open', sessionId, seq });
  }

  private broadcast(msg: HostToWebview): void {
    this.views.broadcast(msg);
  }
}
