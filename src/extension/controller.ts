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
  type SandboxMode,
  type SpendView,
  type TreeNode,
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
import { MessageDispatch } from './message-dispatch';
import { HarnessLifecycle } from './panel-lifecycle';
import { mcpServersView } from './presenter/mcp-servers';
import { nodeName } from './presenter/names';
import { projectView } from './presenter/project-view';
import { RunFeed } from './run-feed';
import { SessionFeed } from './session-feed';
import { requestForView } from './shown-paths';
import { TreeSync } from './tree-sync';
import { tryWays } from './try-ways';
import { type ControllerHooks, type ViewPort, ViewPorts } from './view-port';
import { ViewSelection } from './view-selection';

export type { ControllerHooks, ViewPort } from './view-port';

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
  /** The harness opened on first need, the first fold, and `dispose`'s guard (`panel-lifecycle.ts`). */
  private readonly life: HarnessLifecycle;
  /** Which session the views show (`view-selection.ts`). */
  private readonly selection: ViewSelection;
  /** Goal actions (the goal bar, the commands): set, pause, resume, clear, limit. */
  readonly goals = new GoalActions(() => this.life.ensure());
  /** One handler per message that expects no answer (`handlers/notices.ts`). */
  private readonly notices: NoticeHandlers;
  /** One handler per request (`handlers/session-requests.ts`, `handlers/goal-requests.ts`). */
  private readonly requests: RequestHandlers;
  /** Validates every message and runs it by the maps above (`message-dispatch.ts`). */
  private readonly dispatch: MessageDispatch;

  constructor(
    getHarness: () => Promise<Harness>,
    private readonly hooks: ControllerHooks,
  ) {
    this.life = new HarnessLifecycle(getHarness, (h) => {
      // Instruction and agent files re-read (at a request, or the host's watcher): every view hears it.
      h.project.onChange(() => this.views.broadcast(this.projectFiles(h)));
      // The status bar's total comes from the stored summaries (the durable fold): once they are
      // folded, after a reload too, it shows the same figure as before.
      return this.sync
        .follow(h)
        .then(() => this.hooks.statusChanged?.())
        .catch((err: unknown) => this.hooks.log('warn', `status bar: ${describeError(err)}`));
    });
    this.desk = new ApprovalDesk({
      opened: (prompt) => {
        this.sync.tree.setActivity(prompt.sessionId, 'waiting for approval');
        this.sync.pushMarked(prompt);
        this.views.broadcast({ type: 'approval/requested', prompt });
        this.hooks.approvalsChanged?.(this.desk.prompts(), prompt);
      },
      closed: (prompt, reply) => {
        this.sync.tree.setActivity(prompt.sessionId, undefined);
        this.views.broadcast({ type: 'approval/resolved', requestId: prompt.requestId, decision: reply.decision });
        this.sync.pushMarked(prompt);
        this.hooks.approvalsChanged?.(this.desk.prompts());
      },
    });
    const log = (level: 'info' | 'warn' | 'error', text: string): void => this.hooks.log(level, text);
    this.selection = new ViewSelection({
      views: this.views,
      track: (id) => this.sync.track(id),
      openTranscript: (id) => this.hooks.openTranscript(id),
      reset: (port, id) => this.feed.reset(port, id),
      log,
    });
    this.feed = new SessionFeed(this.views, {
      session: (id) => this.sessionOf(id),
      resident: (id) => this.life.harness?.resident(id),
      roots: () => this.life.harness?.roots ?? [],
      log,
    });
    this.runFeed = new RunFeed(this.views, {
      parentOf: (nodeId) => this.sync.tree.runs.parentSessionOf(nodeId),
      session: (id) => this.sessionOf(id),
      runOpen: (runId) => this.sync.tree.runOpen(runId),
      log,
    });
    this.sync = new TreeSync({
      harness: () => this.life.harness,
      views: this.views,
      feed: this.feed,
      runFeed: this.runFeed,
      desk: this.desk,
      log,
      mcpChanged: () => this.views.broadcast(this.mcpServers()),
    });
    const ctx: HandlerContext = {
      ensure: () => this.life.ensure(),
      hooks: this.hooks,
      feed: this.feed,
      runFeed: this.runFeed,
      goals: this.goals,
      adopt: (port) => this.selection.adopt(port),
      follow: (port, id, under, restored) => this.selection.follow(port, id, under, restored),
      select: (port, id) => this.selection.select(port, id),
      folded: () => this.life.folded,
      nodes: () => this.sync.nodes(),
      approvals: () => this.desk.prompts(),
      mcpServers: () => this.mcpServers(),
      projectFiles: (h) => this.projectFiles(h),
      worktreeOrphans: (h) => worktreeOrphans(h),
      broadcast: (msg) => this.views.broadcast(msg),
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
    this.dispatch = new MessageDispatch(
      this.notices,
      this.requests,
      log,
      () => this.life.disposed,
      (port, m, redo) => this.selection.check(port, m.sessionId, m.selection, redo),
    );
  }

  /** Sessions per status (the tree's one fold), for the status bar. */
  statusCounts(): Partial<Record<NodeStatus, number>> {
    return this.sync.statusCounts();
  }

  connect(port: ViewPort): () => void {
    return this.views.add(port);
  }

  /** Entry point for every message from a webview. Bad input gets an error reply, never a crash. */
  receive(port: ViewPort, msg: unknown): Promise<void> {
    return this.dispatch.receive(port, msg);
  }

  /** The human's approval port: every view shows the request; the first answer wins. */
  ask(request: ApprovalRequest, signal?: AbortSignal): Promise<ApprovalReply> {
    // No view will show it any more (`dispose` denied every pending one): denied, as they were.
    if (this.life.disposed) return Promise.resolve({ decision: 'deny' });
    return this.desk.ask(requestForView(request, this.life.harness?.roots ?? []), signal);
  }

  /** Answer a pending approval (a view, or the host's notification); false when already answered. */
  answer(requestId: string, reply: ApprovalReply): boolean {
    return this.desk.answer(requestId, reply);
  }

  // ── commands shared with the VS Code command palette ───────────────────────

  /** A human's "Cancel workflow": the run ends `cancelled` (its script stopped, its running agents cancelled). */
  async cancelWorkflow(runId: string): Promise<void> {
    const h = await this.life.ensure();
    if (!(await h.workflows.engine.cancel(runId))) throw new Error(`Workflow ${runId} is not running.`);
  }

  /**
   * Stop a subtree (the tree's Interrupt, the chat's Stop, the command): the session's turn
   * and the turns of all its running descendants; inboxes are kept and nothing resumes by itself.
   */
  async interrupt(sessionId: string): Promise<string[]> {
    const h = await this.life.ensure();
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
    const fork = (await (await this.life.ensure()).forkSession(sessionId, seq)).id;
    if (from === 'transcript') this.hooks.openTranscript(fork);
    this.selectEverywhere(fork);
    return fork;
  }

  /** "Try N ways…" (decision 0061): the host asks how, the ways start, the first is shown where it was asked for. */
  async tryWays(sessionId: string, seq: number, port?: ViewPort): Promise<{ group?: string; ways: string[] }> {
    const r = await tryWays(await this.life.ensure(), this.hooks, sessionId, seq);
    if (r.ways[0]) port ? this.selection.select(port, r.ways[0]) : this.selectEverywhere(r.ways[0]);
    return r;
  }

  /** A new conversation with an agent defined in a file (decision 0056), shown where it was asked for. */
  async startAgent(agent: string, port?: ViewPort): Promise<string> {
    const id = (await (await this.life.ensure()).createSession({ agent })).id;
    if (port) this.selection.select(port, id);
    else this.selectEverywhere(id);
    return id;
  }

  /** The configured placements' names (decision 0074; the command's picker). */
  async placements(): Promise<string[]> {
    return placementNames(await this.life.ensure());
  }

  /** A human's task for a node on a placement (decision 0074): its continuable child, shown where the node is. */
  async runOnPlacement(sessionId: string, placement: string, prompt: string): Promise<string> {
    const child = await startPlaced(await this.life.ensure(), sessionId, placement, prompt);
    this.selectEverywhere(child);
    return child;
  }

  /** The agents defined in files now (the command's picker). */
  async agents(): Promise<ProjectFilesView['agents']> {
    const h = await this.life.ensure();
    h.project.refresh();
    return this.projectFiles(h).files.agents;
  }

  /** A project file may have changed (the host's file watcher): re-read; views hear it if it did. */
  async projectChanged(): Promise<void> {
    (await this.life.ensure()).project.refresh();
  }

  private projectFiles(h: Harness): Extract<HostToWebview, { type: 'project/files' }> {
    return { type: 'project/files', files: projectView(h.project.snapshot(), h.roots[0]) };
  }

  async send(sessionId: string, text: string): Promise<void> {
    const h = await this.life.ensure();
    await h.send(sessionId, text);
  }

  async events(sessionId: string): Promise<readonly SessionEvent[]> {
    return (await this.sessionOf(sessionId)).events;
  }

  /** Compact a conversation now (waits for its running turn). */
  async compact(sessionId: string): Promise<string> {
    const h = await this.life.ensure();
    if (await h.isSubagent(sessionId)) throw new Error('Compact a subagent from its parent; Arbor compacts conversations you own.');
    const r = await (await h.openSession(sessionId)).compact();
    return r.outcome === 'committed'
      ? 'Compacted: the earlier conversation is now a summary (the raw log keeps everything).'
      : `Not compacted (${r.outcome}${r.error ? `: ${r.error}` : ''}).`;
  }

  async deleteSession(sessionId: string): Promise<string[]> {
    const ids = await (await this.life.ensure()).deleteSession(sessionId);
    for (const id of ids) this.feed.forget(id);
    this.sync.removed(ids);
    this.hooks.statusChanged?.();
    return ids;
  }

  /** Every tree node, once every log has been folded (labels and statuses known). */
  async nodes(): Promise<TreeNode[]> {
    await this.life.ensure();
    await this.life.folded;
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
      await this.life.ensure();
      await this.life.folded;
      return this.knownName(sessionId) ?? 'Workflow run';
    }
    const s = await this.sessionOf(sessionId);
    return nameFromLog(s.header, s.events);
  }

  /** The MCP servers' states as the panel lists them (decision 0055). */
  private mcpServers(): HostToWebview {
    return mcpServersView(this.life.harness?.mcp.states() ?? []);
  }

  settingsChanged(): void {
    this.views.broadcast({ type: 'settings/changed', settings: this.hooks.settings() });
  }

  /** "+": nothing selected, the input focused; the conversation is created by its first message. */
  newDraft(): void {
    this.selection.newDraft();
  }

  /** Set a session's own sandbox / approval (appended to its log) and show it on its node. */
  async setPolicy(sessionId: string, policy: { sandbox?: SandboxMode; approval?: ApprovalPolicy }): Promise<void> {
    const h = await this.life.ensure();
    // Resident or not, the policy event reaches the tree on the change stream (decision 0054).
    await h.setPolicy(sessionId, policy);
  }

  /**
   * A human sets (null: removes) a session's subtree budget (decision 0034); checked by the core
   * (a bad amount is refused with what is wrong). Raising it resumes nothing by itself.
   */
  async setBudget(sessionId: string, budget: { maxTokens?: number; maxCostUsd?: number } | null): Promise<void> {
    const h = await this.life.ensure();
    // The `budget/set` event moves the node and its ancestors' totals on the change stream.
    await h.setBudget(sessionId, budget);
  }

  /** Prices changed (settings): every node's cost is recomputed and re-sent. */
  async pricesChanged(): Promise<void> {
    const h = await this.life.ensure();
    this.sync.tree.setPrices(h.cost.prices);
    for (const id of this.sync.tree.ids()) this.sync.push(id);
  }

  /** Every conversation's subtree together (tokens, and dollars when every model has a price), for the status bar. */
  totalSpend(): SpendView {
    return this.sync.tree.totalSpend();
  }

  /** The panel's selected session, if any (the picker's "this session"). */
  get selectedSession(): string | undefined {
    return this.selection.selected;
  }

  focusInput(): void {
    for (const p of this.views.panels()) p.post({ type: 'input/focus' });
  }

  selectEverywhere(sessionId: string): void {
    this.selection.selectEverywhere(sessionId);
  }

  async dispose(): Promise<void> {
    this.life.dispose();
    this.feed.dispose();
    this.runFeed.dispose();
    this.sync.dispose();
    this.desk.denyAll();
  }

  // ── internals ──────────────────────────────────────────────────────────────

  private async sessionOf(id: string) {
    const h = await this.life.ensure();
    return await h.readSession(id);
  }

  /** "Rewind…" from a message's context menu: the view it came from opens its rewind there. */
  openRewind(sessionId: string, seq: number, from: 'panel' | 'transcript'): void {
    this.views.toView(from, sessionId, { type: 'rewind/open', sessionId, seq });
  }
}
