import { describeError } from '../core/errors';
import type { Harness } from '../core/harness';
import type { SessionEvent } from '../core/session/events';
import type { ApprovalPrompt, NodeStatus, TreeNode } from '../protocol';
import type { ApprovalDesk } from './approvals';
import { TreeModel } from './presenter/tree-model';
import type { RunFeed } from './run-feed';
import type { SessionFeed } from './session-feed';
import type { ViewPorts } from './view-port';

export interface TreeSyncDeps {
  /** The harness once it is open (the tree has nothing live to ask before). */
  harness(): Harness | undefined;
  views: ViewPorts;
  feed: SessionFeed;
  /** Workflow run tabs: refreshed by their parent's events. */
  runFeed: RunFeed;
  desk: ApprovalDesk;
  log(level: 'warn', text: string): void;
}

/**
 * The delegation tree kept in step with the harness: its events, stream deltas, idle agents
 * and fan-out queue fold into the tree model, and every node that changed goes to every view
 * (marked with the approvals waiting in or under it).
 */
export class TreeSync {
  readonly tree: TreeModel;
  private readonly offs: (() => void)[] = [];

  constructor(private readonly deps: TreeSyncDeps) {
    const live = deps.harness;
    this.tree = new TreeModel({
      isRunning: (id) => !!live()?.subagents.isRunning(id),
      hasLiveChildren: (id) => !!live()?.subagents.hasLiveChildren(id),
      awaitingApproval: (id) => deps.desk.waitingIn(id) || !!live()?.subagents.awaitsApproval(id),
      isQueued: (id) => !!live()?.subagents.fanout.isQueued(id),
      workflowRunning: (runId) => !!live()?.workflows.engine.isRunning(runId),
      goalArmed: (id) => {
        const h = live();
        const a = h?.resident(id);
        return !!a && h!.goals.liveState(a).armed;
      },
    });
  }

  /**
   * Start following an open harness: every stored session becomes a node now, and the
   * returned promise settles (never rejects) when every log's first fold is done.
   */
  follow(h: Harness): Promise<void> {
    this.tree.setPrices(h.cost.prices);
    for (const header of h.store.list()) this.tree.addHeader(header);
    this.offs.push(h.onEvent((id, e) => this.onEvent(h, id, e)));
    // A subagent joined or left the queue for a slot: no event of its own says so.
    this.offs.push(h.subagents.fanout.onChange((id) => this.push(id)));
    // A mirror's agent says it waits for a human, or its mirror closed: no event says so either.
    this.offs.push(
      h.subagents.mirrors.onChange((id) => {
        this.push(id);
        const parent = this.tree.node(id)?.parentId;
        if (parent) this.push(parent);
      }),
    );
    this.offs.push(
      h.onDelta((id, kind, delta) => {
        this.deps.feed.delta(id, kind, delta);
        this.tree.streamed(id, delta.length);
        const doing = kind === 'text' ? 'streaming' : 'reasoning';
        if (this.tree.node(id)?.activity !== doing) {
          this.tree.setActivity(id, doing);
          this.push(id);
        }
      }),
    );
    this.offs.push(
      h.onIdle((id) => {
        this.push(id);
        // An interrupted turn turns queued messages into waiting ones only once the loop stops.
        void this.deps.feed.queue(id);
        const parent = this.tree.node(id)?.parentId;
        if (parent) this.push(parent);
      }),
    );
    return this.foldAll(h);
  }

  /** Every node as the views see it (approval marks included). */
  nodes(): TreeNode[] {
    return this.tree.nodes().map((n) => this.marks(n));
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

  /** Send a node, as it is now, to every view. */
  push(id: string): void {
    const node = this.tree.node(id);
    if (node) this.deps.views.broadcast({ type: 'tree/node', node: this.marks(node) });
  }

  /** Re-send every node that marks a request (the asker and its ancestors). */
  pushMarked(prompt: ApprovalPrompt): void {
    for (const id of this.deps.desk.marked(prompt, this.parentOf)) this.push(id);
  }

  /** Re-read a session's summary from the store and push its node (a write no event reported). */
  async reload(h: Harness, sessionId: string): Promise<void> {
    for (const id of this.tree.load(sessionId, await h.store.summary(sessionId))) if (id !== sessionId) this.push(id);
    this.push(sessionId);
  }

  /**
   * A session made without an event of its own yet (a fork, a new conversation): put its
   * node in the tree now, before it is selected, not at its first event.
   */
  track(id: string): void {
    const h = this.deps.harness();
    if (!h || this.tree.has(id)) return;
    const agent = h.resident(id);
    const header = agent?.session.header ?? h.store.header(id);
    if (!header) return;
    this.tree.addHeader(header);
    const summary = h.store.summaryOf(id);
    if (summary) {
      for (const x of this.tree.load(id, summary)) if (x !== id) this.push(x);
    } else if (agent) this.tree.foldAll(id, agent.session.events);
    this.push(id);
  }

  /** Sessions deleted: their nodes leave every view. */
  removed(ids: readonly string[]): void {
    for (const id of ids) {
      this.tree.remove(id);
      this.deps.views.broadcast({ type: 'tree/removed', id });
    }
  }

  dispose(): void {
    for (const off of this.offs.splice(0)) off();
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
        this.push(header.id);
        for (const id of also) this.push(id);
      } catch (err) {
        this.deps.log('warn', `could not read ${header.id}: ${describeError(err)}`);
      }
    }
  }

  private onEvent(h: Harness, sessionId: string, e: SessionEvent): void {
    if (!this.tree.has(sessionId)) {
      const header = h.store.header(sessionId) ?? h.resident(sessionId)?.session.header;
      if (header) this.tree.addHeader(header);
    }
    this.tree.apply(sessionId, e);
    this.deps.feed.event(sessionId, e);
    this.deps.runFeed.event(sessionId, e);
    this.push(sessionId);
    for (const id of this.tree.applyWorkflow(sessionId, e)) this.push(id);
    if (e.type === 'turn/end') for (const id of this.tree.runs.of(sessionId)) this.push(id);
    const parent = this.tree.node(sessionId)?.parentId;
    if (parent && (e.type === 'turn/start' || e.type === 'turn/end')) this.push(parent);
    // Spending moves every ancestor's subtree total and budget bar.
    for (const id of this.tree.spendMoved(sessionId, e)) if (id !== parent || e.type === 'assistant/message' || e.type === 'budget/set') this.push(id);
    // A settlement notice (or a background result) means the child was released: its status changed without an event of its own.
    if (e.type === 'user/message' && (e.source.kind === 'subagent-settled' || e.source.kind === 'subagent-result') && typeof e.source.fromSession === 'string')
      this.push(e.source.fromSession);
  }

  private marks(node: TreeNode): TreeNode {
    return this.deps.desk.mark(node, this.parentOf);
  }

  private readonly parentOf = (id: string): string | undefined => this.tree.node(id)?.parentId;
}
