import type { PriceBook } from '../../core/cost/prices';
import { addSpend, type Spend, zeroSpend } from '../../core/cost/spend';
import { AT_REST, type SessionLive, viewOf } from '../../core/live/state';
import type { SessionEvent, SessionHeader } from '../../core/session/events';
import { emptySummary, estimateTokens, foldSummary, type SessionSummary, summarize } from '../../core/session/summary';
import type { NodeStatus, SpendView, TreeNode } from '../../protocol';
import { CostRollup, spendView } from './cost-rollup';
import { isRunNode, runIdOf, runNodeId, WorkflowRuns } from './workflow-runs';

// The wire's status is the core's, word for word: `extension/wire-unions.ts` checks it at compile time.

/** Where the tree asks what the process knows now: the harness's one assembler (`Harness.liveOf`, decision 0054). */
export interface LiveSource {
  liveOf(id: string): SessionLive;
}

/** Before the harness is open nothing runs. */
const NOTHING_LIVE: LiveSource = { liveOf: () => AT_REST };

/**
 * The delegation tree as the UI shows it: headers plus each session's summary — the one
 * fold of `core/session/summary.ts`, seeded from the store (no log read) and moved per
 * event — and its status from the one status fold (`core/session/status.ts`).
 */
export class TreeModel {
  private readonly folds = new Map<string, SessionSummary>();
  private readonly headers = new Map<string, Readonly<SessionHeader>>();
  private readonly activity = new Map<string, { text: string; since: number }>();
  /** Characters streamed for the request under way (its completion estimate until usage arrives). */
  private readonly streamedChars = new Map<string, number>();
  /** Workflow runs: virtual nodes under their parents, over their agents. */
  readonly runs = new WorkflowRuns((id) => this.folds.get(id));
  /** Own cost, subtree totals and budget bars (decision 0033). */
  readonly costs = new CostRollup(
    (id) => this.headers.get(id),
    (id) => this.folds.get(id),
  );

  constructor(private readonly source: () => LiveSource | undefined) {}

  private liveOf(id: string): SessionLive {
    return (this.source() ?? NOTHING_LIVE).liveOf(id);
  }

  has(id: string): boolean {
    return this.headers.has(id);
  }

  addHeader(h: Readonly<SessionHeader>): void {
    this.headers.set(h.id, h);
    if (!this.folds.has(h.id)) this.folds.set(h.id, emptySummary(h));
    this.costs.added(h);
  }

  /** New prices: every node's cost is recomputed (the controller re-sends the nodes). */
  setPrices(prices: PriceBook): void {
    this.costs.setPrices(prices);
  }

  /** Every conversation's subtree together, for the status bar. */
  totalSpend(): SpendView {
    let total = zeroSpend();
    for (const [id, h] of this.headers) {
      if (h.parentSession && this.folds.get(id)?.delegated) continue; // counted in its parent's subtree
      const t = this.costs.subtree(id);
      if (t) total = addSpend(total, t);
    }
    return spendView(total);
  }

  /**
   * The ancestors whose subtree total an event of `id` moved (nearest first), and the run node
   * of any workflow agent among `id` and them (its Σ); empty when it spent nothing.
   */
  spendMoved(id: string, e: SessionEvent): string[] {
    if (!movesSpend(e)) return [];
    const up = this.costs.changed(id);
    const runs = [id, ...up].map((x) => this.runs.parentOf(x)).filter((r): r is string => r !== undefined);
    return [...up, ...runs];
  }

  /** A run's agents' spend together (each with what it delegated): the run node's Σ; absent before any agent. */
  private runSpend(runId: string): SpendView | undefined {
    let total: Spend | undefined;
    for (const agent of this.runs.agentsOf(runId)) {
      const t = this.costs.subtree(agent);
      if (t) total = total ? addSpend(total, t) : t;
    }
    return total && spendView(total);
  }

  remove(id: string): void {
    this.costs.removed(id);
    this.headers.delete(id);
    this.folds.delete(id);
    this.activity.delete(id);
    this.streamedChars.delete(id);
    this.runs.forget(id);
  }

  /**
   * Replace a session's summary (the store's copy, or one folded from its whole log). The tree
   * folds into it from then on: the caller hands over an object made for the tree (never the
   * store's own, `summaryRef`). Returns the other node ids whose view changed (its workflow
   * runs, itself re-hung).
   */
  load(id: string, summary: SessionSummary): string[] {
    if (!this.headers.has(id)) return [];
    this.folds.set(id, summary);
    this.costs.changed(id);
    return this.runs.loaded(id, summary);
  }

  /** Replace a session's summary with one over its whole log. */
  foldAll(id: string, events: readonly SessionEvent[]): string[] {
    const h = this.headers.get(id);
    return h ? this.load(id, summarize(h, events)) : [];
  }

  /** Fold one new event; returns true when the node's view changed. */
  apply(id: string, e: SessionEvent): boolean {
    const f = this.folds.get(id);
    if (!f) return false;
    const changed = foldSummary(f, e);
    if (movesSpend(e)) this.costs.changed(id);
    switch (e.type) {
      case 'request/header':
      case 'turn/start':
        this.streamedChars.delete(id);
        this.setActivity(id, 'thinking');
        break;
      case 'assistant/message':
        this.streamedChars.delete(id);
        this.setActivity(id, e.toolCalls?.length ? `tool ${e.toolCalls.map((c) => c.name).join(', ')}` : undefined);
        break;
      case 'turn/end':
        this.streamedChars.delete(id);
        this.setActivity(id, undefined);
        break;
    }
    return changed;
  }

  /** Characters streamed for the request under way (counted into its estimate until usage arrives). */
  streamed(id: string, chars: number): void {
    const f = this.folds.get(id);
    if (f?.inflightPrompt !== undefined) this.streamedChars.set(id, (this.streamedChars.get(id) ?? 0) + chars);
  }

  setActivity(id: string, text: string | undefined): void {
    if (text === undefined) this.activity.delete(id);
    else if (this.activity.get(id)?.text !== text) this.activity.set(id, { text, since: Date.now() });
  }

  /** The one status question (core's `viewOf`) over this tree's fold and what the process knows now. */
  status(id: string): NodeStatus | undefined {
    const f = this.folds.get(id);
    return f ? viewOf(id, f, this.liveOf(id)).status : undefined;
  }

  node(id: string): TreeNode | undefined {
    if (isRunNode(id)) {
      const parent = this.runs.parentSessionOf(id);
      if (!parent) return undefined;
      const runId = runIdOf(id);
      return this.runs.node(id, this.node(parent), this.runOpen(runId), this.runSpend(runId));
    }
    const h = this.headers.get(id);
    const f = this.folds.get(id);
    if (!h || !f) return undefined;
    const live = this.liveOf(id);
    const status = viewOf(id, f, live).status;
    const since = () => this.activity.get(id)?.since ?? Date.now();
    const act =
      status === 'queued'
        ? { text: 'waiting for a free slot', since: since() }
        : status === 'running' || status === 'approval'
          ? this.activity.get(id)
          : live.waitingForChildren
            ? { text: 'waiting for children', since: since() }
            : undefined;
    return {
      id,
      // A workflow's agent hangs under its run's node; its header keeps the real parent.
      ...(h.parentSession ? { parentId: this.runs.parentOf(id) ?? h.parentSession } : {}),
      origin: h.origin,
      ...(h.title ? { title: h.title } : {}),
      ...(f.label ? { label: f.label } : {}),
      ...(f.provider ? { provider: f.provider } : {}),
      ...(f.mode ? { mode: f.mode } : {}),
      ...(f.remote ? { remote: { ...f.remote } } : {}),
      depth: h.delegationDepth ?? 0,
      status,
      ...(act ? { activity: act.text, activeSince: act.since } : {}),
      ...(f.lastStopReason ? { lastStopReason: f.lastStopReason } : {}),
      tokens:
        f.inflightPrompt !== undefined
          ? {
              prompt: f.tokens.prompt + f.inflightPrompt,
              completion: f.tokens.completion + estimateTokens(this.streamedChars.get(id) ?? 0),
              cacheHit: f.tokens.cacheHit,
            }
          : { ...f.tokens },
      ...(f.estimated || f.inflightPrompt !== undefined ? { tokensEstimated: true } : {}),
      ...this.costs.view(id),
      ...(f.refused ? { refused: f.refused } : {}),
      ...(f.policy.sandbox || f.policy.approval ? { policy: { ...f.policy } } : {}),
      reports: f.reports,
      ...(f.goal ? { goal: { ...f.goal, armed: live.goalArmed } } : {}),
      ...(f.placement ? { placement: { ...f.placement } } : {}),
      ...(f.worktree ? { worktree: { state: f.worktree.state, branch: f.worktree.branch, ...(f.worktree.owner ? { owner: f.worktree.owner } : {}) } } : {}),
      ...(h.bestOf ? { bestOf: { group: h.bestOf.group, way: h.bestOf.way, of: h.bestOf.of } } : {}),
      createdAt: h.createdAt,
    };
  }

  /** Whether a run can still be going: its parent runs, or the engine has it (else an open run was cut by a crash or reload). */
  runOpen(runId: string): boolean {
    const parent = this.runs.parentSessionOf(runNodeId(runId));
    if (parent === undefined) return false;
    const live = this.liveOf(parent);
    return live.running || live.workflows.includes(runId);
  }

  ids(): IterableIterator<string> {
    return this.headers.keys();
  }

  /** Fold a `workflow/*` event of `sessionId`: the node ids to re-send (the run's, a re-parented agent's). */
  applyWorkflow(sessionId: string, e: SessionEvent): string[] {
    return this.runs.apply(sessionId, e);
  }

  nodes(): TreeNode[] {
    const out: TreeNode[] = [];
    for (const id of [...this.headers.keys(), ...this.runs.ids()]) {
      const n = this.node(id);
      if (n) out.push(n);
    }
    return out;
  }
}

/** Events that move what a node (and its ancestors) spent or may spend: a request's answer, a turn's end, a compaction's end (its summary request), a budget. */
function movesSpend(e: SessionEvent): boolean {
  return e.type === 'assistant/message' || e.type === 'turn/end' || e.type === 'compaction/end' || e.type === 'budget/set';
}
