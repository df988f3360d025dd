import { describeError } from '../core/errors';
import type { Harness } from '../core/harness';
import type { ApprovalPort, ApprovalReply, ApprovalRequest } from '../core/policy/approval';
import type { SessionEvent } from '../core/session/events';
import { nameFromLog } from '../core/session/names';
import { describeInvalid, isWebviewToHost, type ApprovalPolicy, type ApprovalPrompt, type HostCommand, type SandboxMode, type HostToWebview, type NodeStatus, type PanelSettings, type SpendView, type TreeNode, type WebviewToHost } from '../protocol';
import { ApprovalDesk } from './approvals';
import { GoalActions } from './goal-actions';
import { nodeName } from './presenter/names';
import { type ControllerHooks, type ViewPort, ViewPorts } from './view-port';
import { retryText } from './presenter/retry';
import { TreeModel } from './presenter/tree-model';
import { SessionFeed } from './session-feed';

export type { ControllerHooks, ViewPort } from './view-port';


/** The success answer to a request that carried `id`. */
const done = (port: ViewPort, id: string, sessionId?: string): void => port.post({ type: 'request/done', id, ok: true, ...(sessionId ? { sessionId } : {}) });

type Handlers = { [K in WebviewToHost['type']]: (port: ViewPort, msg: Extract<WebviewToHost, { type: K }>) => Promise<void> | void };

/**
 * The host side of the panel and transcript tabs: validates every message, answers with a
 * snapshot on ready and deltas afterwards, and routes user intents into the harness.
 * It knows no VS Code API (hooks do), so it is tested without a VS Code.
 */
export class PanelController implements ApprovalPort {
  private readonly views = new ViewPorts();
  private readonly tree: TreeModel;
  private readonly feed: SessionFeed;
  private readonly desk: ApprovalDesk;
  private harness: Harness | undefined;
  private selected: string | undefined;
  private readonly offs: (() => void)[] = [];
  /** Settles when the first fold of every log is done (it never rejects). */
  private folded: Promise<void> = Promise.resolve();
  /** Goal actions (the goal bar, the commands): set, pause, resume, clear, limit. */
  readonly goals = new GoalActions(() => this.ensure(), (id) => this.reload(id));

  constructor(
    private readonly getHarness: () => Promise<Harness>,
    private readonly hooks: ControllerHooks,
  ) {
    this.tree = new TreeModel({
      isRunning: (id) => this.harness?.resident(id)?.activity === 'running',
      hasLiveChildren: (id) => !!this.harness && this.harness.subagents.hasLiveChildren(id),
      awaitingApproval: (id) => this.desk.waitingIn(id),
      isQueued: (id) => !!this.harness?.subagents.fanout.isQueued(id),
      workflowRunning: (runId) => !!this.harness?.workflows.engine.isRunning(runId),
      goalArmed: (id) => {
        const a = this.harness?.resident(id);
        return !!a && this.harness!.goals.liveState(a).armed;
      },
    });
    this.desk = new ApprovalDesk({
      opened: (prompt) => {
        this.tree.setActivity(prompt.sessionId, 'waiting for approval');
        this.pushMarked(prompt);
        this.broadcast({ type: 'approval/requested', prompt });
        this.hooks.approvalsChanged?.(this.desk.prompts(), prompt);
      },
      closed: (prompt, reply) => {
        this.tree.setActivity(prompt.sessionId, undefined);
        this.broadcast({ type: 'approval/resolved', requestId: prompt.requestId, decision: reply.decision });
        this.pushMarked(prompt);
        this.hooks.approvalsChanged?.(this.desk.prompts());
      },
    });
    this.feed = new SessionFeed(this.views, { session: (id) => this.sessionOf(id), resident: (id) => this.harness?.resident(id), log: (level, text) => this.hooks.log(level, text) });
  }

  /** Sessions per status (the tree's one fold), for the status bar. */
  statusCounts(): Partial<Record<NodeStatus, number>> {
    const out: Partial<Record<NodeStatus, number>> = {};
    for (const id of this.tree.ids()) {
      const st = this.tree.status(id);
      if (st) out[st] = (out[st] ?? 0) + 1;
    }
    return out;
  }

  connect(port: ViewPort): () => void {
    return this.views.add(port);
  }

  /** Entry point for every message from a webview. Bad input gets an error reply, never a crash. */
  async receive(port: ViewPort, msg: unknown): Promise<void> {
    if (!isWebviewToHost(msg)) {
      this.hooks.log('warn', `rejected webview message: ${describeInvalid(msg)}`);
      port.post({ type: 'message/rejected', code: 'BAD_MESSAGE', detail: describeInvalid(msg) });
      return;
    }
    try {
      await (this.handlers[msg.type] as (p: ViewPort, m: WebviewToHost) => Promise<void> | void)(port, msg);
    } catch (err) {
      const text = describeError(err);
      this.hooks.log('error', `${msg.type} failed: ${text}`);
      if ('id' in msg && typeof msg.id === 'string') port.post({ type: 'request/done', id: msg.id, ok: false, error: text });
    }
  }

  private readonly handlers: Handlers = {
    'webview/ready': async (port, m) => {
      const h = await this.ensure();
      if (m.view === 'transcript') port.sessionId = m.sessionId;
      else port.sessionId = this.selected;
      port.post({ type: 'state/snapshot', nodes: this.tree.nodes().map((n) => this.marks(n)), ...(port.sessionId ? { selected: port.sessionId } : {}), settings: this.hooks.settings(), approvals: this.desk.prompts() });
      if (port.sessionId && h.store.has(port.sessionId)) await this.feed.reset(port, port.sessionId);
    },
    'session/select': async (port, m) => {
      const h = await this.ensure();
      if (!h.store.has(m.sessionId)) throw new Error(`No session ${m.sessionId}.`);
      if (port.view === 'panel') this.selected = m.sessionId;
      port.sessionId = m.sessionId;
      await this.feed.reset(port, m.sessionId);
    },
    'session/new': (port, m) => {
      // Lazily: an empty conversation is never stored; `chat/send` without a session creates it.
      if (port.view === 'panel') this.newDraft();
      done(port, m.id);
    },
    'policy/pick': (_port, m) => this.hooks.pickPolicy?.(m.sessionId),
    'chat/send': async (port, m) => {
      const h = await this.ensure();
      let id = m.sessionId;
      if (!id) {
        id = (await h.createSession({ title: m.text.slice(0, 80) })).id;
        this.select(port, id);
      }
      const target = id;
      const cold = !h.resident(target) && (await h.isSubagent(target));
      await (cold ? this.hooks.progress(`Resuming ${await this.nameOf(target)}…`, () => h.send(target, m.text)) : h.send(target, m.text));
      done(port, m.id, target);
    },
    'agent/interrupt': async (port, m) => {
      await this.interrupt(m.sessionId);
      done(port, m.id, m.sessionId);
    },
    'workflow/cancel': async (port, m) => {
      await this.cancelWorkflow(m.runId);
      done(port, m.id);
    },
    'session/fork': async (port, m) => {
      const fork = await this.forkAndShow(m.sessionId, m.seq, port.view);
      done(port, m.id, fork);
    },
    'transcript/open': (_port, m) => this.hooks.openTranscript(m.sessionId),
    'transcript/more': async (port, m) => {
      const p = await this.feed.older(m.sessionId, m.beforeSeq);
      port.post({ type: 'transcript/page', id: m.id, sessionId: m.sessionId, entries: p.entries, hasMore: p.hasMore });
    },
    'chat/retry': async (port, m) => {
      const text = retryText(await this.events(m.sessionId), m.seq);
      await this.send(m.sessionId, text);
      done(port, m.id, m.sessionId);
    },
    'command/run': async (_port, m) => {
      if (!this.hooks.runCommand) throw new Error(`Command ${m.command} is not available here.`);
      await this.hooks.runCommand(m.command);
    },
    'approval/answer': (_port, m) => {
      // false: already answered (another view, a notification, or the turn was cancelled)
      this.answer(m.requestId, { decision: m.decision, ...(m.remember ? { remember: true } : {}), ...(m.reason ? { reason: m.reason } : {}) });
    },
    'approval/revoke': async (port, m) => {
      await (await this.ensure()).revokeGrant(m.sessionId, m.grantId);
      // A session that is not resident appended through a writer of its own (no event reaches us).
      await this.feed.grants(m.sessionId);
      done(port, m.id, m.sessionId);
    },
    'queue/withdraw': async (port, m) => {
      const h = await this.ensure();
      await h.withdraw(m.sessionId, m.messageId);
      // A session not resident was written through a writer of its own: no event reaches us.
      await this.feed.queue(m.sessionId);
      done(port, m.id, m.sessionId);
    },
    'queue/run': async (port, m) => {
      await (await this.ensure()).runQueue(m.sessionId);
      await this.feed.queue(m.sessionId);
      done(port, m.id, m.sessionId);
    },
    'budget/set': async (port, m) => {
      await this.setBudget(m.sessionId, m.budget);
      done(port, m.id, m.sessionId);
    },
    'budget/pick': (_port, m) => this.hooks.pickBudget?.(m.sessionId),
    'goal/set': async (port, m) => {
      await this.goals.set(m.sessionId, m.objective, m.maxRounds);
      done(port, m.id, m.sessionId);
    },
    'goal/pause': async (port, m) => {
      await this.goals.pause(m.sessionId);
      done(port, m.id, m.sessionId);
    },
    'goal/resume': async (port, m) => {
      await this.goals.resume(m.sessionId);
      done(port, m.id, m.sessionId);
    },
    'goal/clear': async (port, m) => {
      await this.goals.clear(m.sessionId);
      done(port, m.id, m.sessionId);
    },
    'goal/limit': async (port, m) => {
      await this.goals.limit(m.sessionId, m.maxRounds);
      done(port, m.id, m.sessionId);
    },
  };

  /** The human's approval port: every view shows the request; the first answer wins. */
  ask(request: ApprovalRequest, signal?: AbortSignal): Promise<ApprovalReply> {
    return this.desk.ask(request, signal);
  }

  /** Answer a pending approval (a view, or the host's notification); false when already answered. */
  answer(requestId: string, reply: ApprovalReply): boolean {
    return this.desk.answer(requestId, reply);
  }

  // ── commands shared with the VS Code command palette ───────────────────────

  /**
   * Stop a subtree (the tree's Interrupt, the chat's Stop, the command): the session's turn
   * and the turns of all its running descendants; inboxes are kept and nothing resumes by itself.
   */
  /** A human's "Cancel workflow": the run ends `cancelled` (its script stopped, its running agents cancelled). */
  async cancelWorkflow(runId: string): Promise<void> {
    const h = await this.ensure();
    if (!(await h.workflows.engine.cancel(runId))) throw new Error(`Workflow ${runId} is not running.`);
  }

  async interrupt(sessionId: string): Promise<string[]> {
    const h = await this.ensure();
    const stopped = await h.interruptSubtree(sessionId);
    if (stopped.length === 0) throw new Error(`Nothing is running in ${this.knownName(sessionId) ?? sessionId} or under it.`);
    for (const id of stopped) this.pushNode(id);
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
    return r.outcome === 'committed' ? 'Compacted: the earlier conversation is now a summary (the raw log keeps everything).' : `Not compacted (${r.outcome}${r.error ? `: ${r.error}` : ''}).`;
  }

  async deleteSession(sessionId: string): Promise<string[]> {
    const ids = await (await this.ensure()).deleteSession(sessionId);
    for (const id of ids) {
      this.tree.remove(id);
      this.feed.forget(id);
      this.broadcast({ type: 'tree/removed', id });
    }
    return ids;
  }

  /** Every tree node, once every log has been folded (labels and statuses known). */
  async nodes(): Promise<TreeNode[]> {
    await this.ensure();
    await this.folded;
    return this.tree.nodes();
  }

  /** What to call a session now, if the tree knows it (label ?? title ?? short fallback). */
  knownName(sessionId: string): string | undefined {
    const n = this.tree.node(sessionId);
    return n ? nodeName(n) : undefined;
  }

  /** What to call a session, read from its own log when the tree has not folded it yet. */
  async nameOf(sessionId: string): Promise<string> {
    const s = await this.sessionOf(sessionId);
    return nameFromLog(s.header, s.events);
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
    await h.setPolicy(sessionId, policy);
    // A session that is not resident is written through a writer of its own (no event fired): reload.
    await this.reload(sessionId);
  }

  /** Re-read a session's summary from the store and push its node (a write no event reported). */
  private async reload(sessionId: string): Promise<void> {
    const h = await this.ensure();
    for (const id of this.tree.load(sessionId, await h.store.summary(sessionId))) if (id !== sessionId) this.pushNode(id);
    this.pushNode(sessionId);
  }

  /**
   * A human sets (null: removes) a session's subtree budget (decision 0034); checked by the core
   * (a bad amount is refused with what is wrong). Raising it resumes nothing by itself.
   */
  async setBudget(sessionId: string, budget: { maxTokens?: number; maxCostUsd?: number } | null): Promise<void> {
    const h = await this.ensure();
    await h.setBudget(sessionId, budget);
    await this.reload(sessionId);
    for (const p of this.tree.costs.changed(sessionId)) this.pushNode(p);
  }

  /** Prices changed (settings): every node's cost is recomputed and re-sent. */
  async pricesChanged(): Promise<void> {
    const h = await this.ensure();
    this.tree.setPrices(h.prices);
    for (const id of this.tree.ids()) this.pushNode(id);
  }

  /** Every conversation's subtree together (tokens, and dollars when every model has a price), for the status bar. */
  totalSpend(): SpendView {
    return this.tree.totalSpend();
  }

  /** The panel's selected session, if any (the picker's "this session"). */
  get selectedSession(): string | undefined {
    return this.selected;
  }

  focusInput(): void {
    for (const p of this.views.panels()) p.post({ type: 'input/focus' });
  }

  selectEverywhere(sessionId: string): void {
    this.track(sessionId);
    for (const p of this.views.panels()) this.select(p, sessionId);
  }

  async dispose(): Promise<void> {
    this.feed.dispose();
    for (const off of this.offs) off();
    this.desk.denyAll();
  }

  // ── internals ──────────────────────────────────────────────────────────────

  private async ensure(): Promise<Harness> {
    if (this.harness) return this.harness;
    const h = await this.getHarness();
    if (this.harness) return this.harness;
    this.harness = h;
    this.tree.setPrices(h.prices);
    for (const header of h.store.list()) this.tree.addHeader(header);
    this.offs.push(h.onEvent((id, e) => this.onEvent(id, e)));
    // A subagent joined or left the queue for a slot: no event of its own says so.
    this.offs.push(h.subagents.fanout.onChange((id) => this.pushNode(id)));
    this.offs.push(
      h.onDelta((id, kind, delta) => {
        this.feed.delta(id, kind, delta);
        this.tree.streamed(id, delta.length);
        const doing = kind === 'text' ? 'streaming' : 'reasoning';
        if (this.tree.node(id)?.activity !== doing) {
          this.tree.setActivity(id, doing);
          this.pushNode(id);
        }
      }),
    );
    this.offs.push(
      h.onIdle((id) => {
        this.pushNode(id);
        // An interrupted turn turns queued messages into waiting ones only once the loop stops.
        void this.feed.queue(id);
        const parent = this.tree.node(id)?.parentId;
        if (parent) this.pushNode(parent);
      }),
    );
    this.folded = this.foldAll(h);
    return h;
  }

  /**
   * Fill tokens, stops and labels for every node after the first snapshot: the store's
   * summaries (kept with every append, no log read), or one fold of a log the store cannot
   * summarise without reading it (after a crash, an older store).
   */
  private async foldAll(h: Harness): Promise<void> {
    for (const header of h.store.list()) {
      try {
        const also = this.tree.load(header.id, await h.store.summary(header.id));
        this.pushNode(header.id);
        for (const id of also) this.pushNode(id);
      } catch (err) {
        this.hooks.log('warn', `could not read ${header.id}: ${describeError(err)}`);
      }
    }
  }

  private onEvent(sessionId: string, e: SessionEvent): void {
    const h = this.harness!;
    if (!this.tree.has(sessionId)) {
      const header = h.store.header(sessionId) ?? h.resident(sessionId)?.session.header;
      if (header) this.tree.addHeader(header);
    }
    this.tree.apply(sessionId, e);
    this.feed.event(sessionId, e);
    this.pushNode(sessionId);
    for (const id of this.tree.applyWorkflow(sessionId, e)) this.pushNode(id);
    if (e.type === 'turn/end') for (const id of this.tree.runs.of(sessionId)) this.pushNode(id);
    const parent = this.tree.node(sessionId)?.parentId;
    if (parent && (e.type === 'turn/start' || e.type === 'turn/end')) this.pushNode(parent);
    // Spending moves every ancestor's subtree total and budget bar.
    for (const id of this.tree.spendMoved(sessionId, e)) if (id !== parent || e.type === 'assistant/message' || e.type === 'budget/set') this.pushNode(id);
    // A settlement notice means the child was released: its status changed without an event of its own.
    if (e.type === 'user/message' && e.source.kind === 'subagent-settled' && typeof e.source.fromSession === 'string') this.pushNode(e.source.fromSession);
  }

  private pushNode(id: string): void {
    const node = this.tree.node(id);
    if (node) this.broadcast({ type: 'tree/node', node: this.marks(node) });
  }

  private marks(node: TreeNode): TreeNode {
    return this.desk.mark(node, this.parentOf);
  }

  private readonly parentOf = (id: string): string | undefined => this.tree.node(id)?.parentId;

  /** Re-send every node that marks a request (the asker and its ancestors). */
  private pushMarked(prompt: ApprovalPrompt): void {
    for (const id of this.desk.marked(prompt, this.parentOf)) this.pushNode(id);
  }

  private async sessionOf(id: string) {
    const h = await this.ensure();
    return await h.readSession(id);
  }

  /**
   * A session made without an event of its own yet (a fork, a new conversation): put its
   * node in the tree now, before it is selected, not at its first event.
   */
  private track(id: string): void {
    const h = this.harness;
    if (!h || this.tree.has(id)) return;
    const agent = h.resident(id);
    const header = agent?.session.header ?? h.store.header(id);
    if (!header) return;
    this.tree.addHeader(header);
    const summary = h.store.summaryOf(id);
    if (summary) for (const x of this.tree.load(id, summary)) if (x !== id) this.pushNode(x);
    else if (agent) this.tree.foldAll(id, agent.session.events);
    this.pushNode(id);
  }

  private select(port: ViewPort, sessionId: string): void {
    this.track(sessionId);
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

  private broadcast(msg: HostToWebview): void {
    this.views.broadcast(msg);
  }
}
