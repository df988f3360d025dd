import type { SessionEvent, WorkflowData, WorkflowEvent } from '../../core/session/events';
import type { SessionSummary } from '../../core/session/summary';
import { isRunNodeId, type NodeStatus, RUN_NODE_PREFIX, type SpendView, type TreeNode, type WorkflowNodeView } from '../../protocol';

/** The tree id of a run's node. */
export const runNodeId = (runId: string): string => `${RUN_NODE_PREFIX}${runId}`;
export const isRunNode = isRunNodeId;
export const runIdOf = (nodeId: string): string => nodeId.slice(RUN_NODE_PREFIX.length);

const END_STATUS: Record<WorkflowNodeView['status'], NodeStatus> = {
  running: 'running',
  completed: 'settled',
  failed: 'failed',
  cancelled: 'interrupted',
  interrupted: 'interrupted',
};

/**
 * Workflow runs as virtual tree nodes (`wf.<runId>`). What a run shows is its parent's
 * summary (`core/session/workflow-fold.ts`, part of the one fold: it survives a reload); this
 * class only knows where nodes hang. A run's agents hang under its node (from the parent's
 * `workflow/agent` events live, from each child's descriptor after a reload), so 1,000
 * children stay out of the parent's own level; their headers keep the real parent.
 */
export class WorkflowRuns {
  /** runId → the session that ran it. */
  private readonly parents = new Map<string, string>();
  /** child session id → the run it is an agent of. */
  private readonly childRun = new Map<string, string>();

  constructor(private readonly summaryOf: (id: string) => SessionSummary | undefined) {}

  /** A session's summary was (re)loaded: its runs, and the run it is an agent of. Returns node ids to re-send. */
  loaded(id: string, s: SessionSummary): string[] {
    const changed: string[] = [];
    for (const run of s.workflows ?? []) {
      this.parents.set(run.runId, id);
      changed.push(runNodeId(run.runId));
    }
    if (s.workflowRun && this.childRun.get(id) !== s.workflowRun.runId) {
      this.childRun.set(id, s.workflowRun.runId);
      changed.push(id);
    }
    return changed;
  }

  /** One event of `sessionId`, already folded into its summary: the node ids whose view changed. */
  apply(sessionId: string, e: SessionEvent): string[] {
    if (e.type === 'subagent/descriptor') return e.workflow ? this.loaded(sessionId, { workflowRun: e.workflow } as SessionSummary) : [];
    if (!e.type.startsWith('workflow/')) return [];
    const w = e as WorkflowEvent;
    if (w.type === 'workflow/start') this.parents.set(w.runId, sessionId);
    if (!this.parents.has(w.runId)) return [];
    const changed = [runNodeId(w.runId)];
    if (w.type === 'workflow/agent') {
      const d = w.data as unknown as WorkflowData['workflow/agent'];
      if (d.status === 'started' && this.childRun.get(d.childId) !== w.runId) {
        this.childRun.set(d.childId, w.runId);
        changed.push(d.childId);
      }
      // `done` is written after the agent was disposed, which has no event of its own (no
      // settlement notice either): its node changes from running to its outcome here.
      if (d.status === 'done') changed.push(d.childId);
    }
    // An end disposes the agents still running first (cancel, interrupt, close): re-send them all.
    if (w.type === 'workflow/end') for (const [child, run] of this.childRun) if (run === w.runId) changed.push(child);
    return changed;
  }

  /** The run node a child hangs under, if the panel knows it. */
  parentOf(childId: string): string | undefined {
    const run = this.childRun.get(childId);
    return run && this.parents.has(run) ? runNodeId(run) : undefined;
  }

  /** The agents of a run known so far (their session ids). */
  agentsOf(runId: string): string[] {
    return [...this.childRun].filter(([, run]) => run === runId).map(([child]) => child);
  }

  /** The runs of one parent session (their node ids), for refreshes when the parent's status changes. */
  of(parentId: string): string[] {
    return [...this.parents.entries()].filter(([, p]) => p === parentId).map(([id]) => runNodeId(id));
  }

  forget(sessionId: string): void {
    for (const [id, p] of this.parents) if (p === sessionId) this.parents.delete(id);
    this.childRun.delete(sessionId);
  }

  ids(): string[] {
    return [...this.parents.keys()].map(runNodeId);
  }

  /** The session that ran this run node, if known. */
  parentSessionOf(id: string): string | undefined {
    return this.parents.get(runIdOf(id));
  }

  /**
   * The run's node; `parentRunning` tells an open run from one a crash left open (shown
   * interrupted); `subtree` is its agents' spend together (the run's Σ).
   */
  node(id: string, parent: TreeNode | undefined, parentRunning: boolean, subtree?: SpendView): TreeNode | undefined {
    const runId = runIdOf(id);
    const parentId = this.parents.get(runId);
    const run = parentId ? this.summaryOf(parentId)?.workflows?.find((r) => r.runId === runId) : undefined;
    if (!parentId || !run) return undefined;
    const view: WorkflowNodeView = {
      runId,
      name: run.name,
      description: run.description,
      ...(run.phase !== undefined ? { phase: run.phase } : {}),
      phases: [...run.phases],
      logs: [...run.logs],
      agents: run.agents,
      running: run.live.length,
      ...(run.ended ? { ended: { ...run.ended } } : {}),
      status: run.status,
      ...(run.code ? { code: run.code } : {}),
    };
    if (view.status === 'running' && !parentRunning) {
      // Cut by a crash or reload: its agents still counted running were cut with it.
      view.status = 'interrupted';
      if (view.running > 0) view.ended = { ...view.ended, cancelled: (view.ended?.cancelled ?? 0) + view.running };
      view.running = 0;
    }
    return {
      id,
      parentId,
      origin: 'subagent',
      title: view.name,
      label: view.name,
      depth: (parent?.depth ?? 0) + 1,
      status: END_STATUS[view.status],
      ...(view.status === 'running' ? { activity: view.phase ? `phase: ${view.phase}` : 'running', activeSince: Date.parse(run.at) } : {}),
      tokens: { prompt: 0, completion: 0, cacheHit: 0 },
      ...(subtree ? { subtree } : {}),
      reports: 0,
      createdAt: run.at,
      kind: 'workflow',
      workflow: view,
    };
  }
}
