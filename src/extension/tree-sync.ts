import { describeError } from '../core/errors';
import type { Change, Harness } from '../core/harness';
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
  /** An MCP server's state moved (the panel re-reads the list). */
  mcpChanged?(): void;
}

type ChangeHandlers = { [K in Change['type']]: (h: Harness, c: Extract<Change, { type: K }>) => void };

/**
 * The delegation tree kept in step with the harness: a mapping from the harness's one change
 * stream (decision 0054) to `tree/node` messages. Events fold into the tree model; a live
 * change re-sends the node it names (its status is the harness's one answer, `liveOf`); every
 * node goes to every view marked with the approvals waiting in or under it.
 */
export class TreeSync {
  readonly tree: TreeModel;
  private readonly offs: (() => void)[] = [];
  /**
   * Until `foldAll` has loaded a session's stored summary: the events heard for it meanwhile. A
   * staged event reaches the tree before its durable append reaches the store's summary, so the
   * load would drop it; they are folded again on top (a fold skips what the summary holds).
   */
  private early: { events: Map<string, SessionEvent[]>; loaded: Set<string> } | undefined;

  constructor(private readonly deps: TreeSyncDeps) {
    this.tree = new TreeModel(deps.harness);
  }

  /** What each kind of change does to the tree (the compiler checks every kind has one). */
  private readonly handlers: ChangeHandlers = {
    event: (h, c) => this.onEvent(h, c.sessionId, c.event),
    delta: (_h, c) => {
      this.deps.feed.delta(c.sessionId, c.kind, c.text);
      this.tree.streamed(c.sessionId, c.text.length);
      const doing = c.kind === 'text' ? 'streaming' : 'reasoning';
      if (this.tree.node(c.sessionId)?.activity !== doing) {
        this.tree.setActivity(c.sessionId, doing);
        this.push(c.sessionId);
      }
    },
    progress: () => undefined,
    // An MCP server's state moved: the panel's server list is re-read (decision 0055).
    mcp: () => this.deps.mcpChanged?.(),
    live: (h, c) => {
      // A session made without an event yet (a new conversation, a child being built) is a node from its first change.
      this.known(h, c.sessionId);
      this.push(c.sessionId);
      // A workflow run's node reads its parent's live state.
      for (const run of this.tree.runs.of(c.sessionId)) this.push(run);
      // An interrupted turn turns queued messages into waiting ones only once the loop stops.
      if (c.what === 'idle') void this.deps.feed.queue(c.sessionId);
    },
  };

  /**
   * Start following an open harness: every stored session becomes a node now, and the
   * returned promise settles (never rejects) when every log's first fold is done.
   */
  follow(h: Harness): Promise<void> {
    this.tree.setPrices(h.cost.prices);
    for (const header of h.store.listRefs()) this.tree.addHeader(header);
    this.early = { events: new Map(), loaded: new Set() };
    this.offs.push(h.observe((c) => (this.handlers[c.type] as (h: Harness, c: Change) => void)(h, c)));
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
    // After the first snapshot: that goes out with the headers alone, in the microtasks of its request.
    await new Promise((resolve) => setImmediate(resolve));
    for (const header of h.store.listRefs()) {
      try {
        // A copy of the tree's own: a stored summary parsed for it, or one folded from the log.
        const also = this.tree.load(header.id, h.store.summaryOf(header.id) ?? (await h.store.summary(header.id)));
        for (const e of this.early?.events.get(header.id) ?? []) this.tree.apply(header.id, e);
        this.push(header.id);
        for (const id of also) this.push(id);
      } catch (err) {
        this.deps.log('warn', `could not read ${header.id}: ${describeError(err)}`);
      } finally {
        this.early?.events.delete(header.id);
        this.early?.loaded.add(header.id);
      }
    }
    this.early = undefined;
  }

  /** Put a session the tree has not seen yet into it (its header: the store's, or its resident agent's). */
  private known(h: Harness, sessionId: string): void {
    if (this.tree.has(sessionId)) return;
    const header = h.store.header(sessionId) ?? h.resident(sessionId)?.session.header;
    if (header) this.tree.addHeader(header);
  }

  private onEvent(h: Harness, sessionId: string, e: SessionEvent): void {
    if (this.early && !this.early.loaded.has(sessionId)) {
      const heard = this.early.events.get(sessionId);
      if (heard) heard.push(e);
      else this.early.events.set(sessionId, [e]);
    }
    this.known(h, sessionId);
    this.tree.apply(sessionId, e);
    this.deps.feed.event(sessionId, e);
    this.deps.runFeed.event(sessionId, e);
    this.push(sessionId);
    for (const id of this.tree.applyWorkflow(sessionId, e)) this.push(id);
    if (e.type === 'turn/end') for (const id of this.tree.runs.of(sessionId)) this.push(id);
    // Spending moves every ancestor's subtree total and budget bar.
    for (const id of this.tree.spendMoved(sessionId, e)) if (id !== sessionId) this.push(id);
  }

  private marks(node: TreeNode): TreeNode {
    return this.deps.desk.mark(node, this.parentOf);
  }

  private readonly parentOf = (id: string): string | undefined => this.tree.node(id)?.parentId;
}
