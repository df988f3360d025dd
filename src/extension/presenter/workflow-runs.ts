import type { SessionEvent, WorkflowData } from '../../core/session/events';
import type { NodeStatus, TreeNode, WorkflowNodeView } from '../../protocol';

const PREFIX = 'wf.';
const MAX_LOGS = 20;

interface RunState {
  parentId: string;
  at: string;
  view: WorkflowNodeView;
  live: Set<number>;
}

/** The tree id of a run's node. */
export const runNodeId = (runId: string): string => `${PREFIX}${runId}`;
export const isRunNode = (id: string): boolean => id.startsWith(PREFIX);

const END_STATUS: Record<WorkflowNodeView['status'], NodeStatus> = { running: 'running', completed: 'settled', failed: 'failed', cancelled: 'interrupted', interrupted: 'interrupted' };

/**
 * Workflow runs as virtual tree nodes (`wf.<runId>`), folded from their parent's
 * `workflow/*` events. A run's agents hang under its node (the parent's `workflow/agent`
 * events name them), so 1,000 children stay out of the parent's own level; their headers
 * keep the real parent. A child the panel met only through a store summary (no log read)
 * stays under its session parent.
 */
export class WorkflowRuns {
  private readonly runs = new Map<string, RunState>();
  private readonly childRun = new Map<string, string>();

  /** Fold one event of `sessionId`; returns the node ids whose view changed (the run's, and a re-parented child's). */
  apply(sessionId: string, e: SessionEvent): string[] {
    if (!e.type.startsWith('workflow/')) return [];
    const w = e as Extract<SessionEvent, { runId: string }>;
    const data = w.data as never;
    if (w.type === 'workflow/start') {
      const d = data as WorkflowData['workflow/start'];
      this.runs.set(w.runId, { parentId: sessionId, at: w.at, live: new Set(), view: { runId: w.runId, name: d.name, description: d.description, phases: [], logs: [], agents: 0, running: 0, status: 'running' } });
      return [runNodeId(w.runId)];
    }
    const run = this.runs.get(w.runId);
    if (!run) return [];
    const v = run.view;
    const changed = [runNodeId(w.runId)];
    if (w.type === 'workflow/phase') {
      v.phase = (data as WorkflowData['workflow/phase']).title;
      v.phases.push(v.phase);
    } else if (w.type === 'workflow/log') {
      v.logs.push((data as WorkflowData['workflow/log']).message);
      if (v.logs.length > MAX_LOGS) v.logs.shift();
    } else if (w.type === 'workflow/agent') {
      const d = data as WorkflowData['workflow/agent'];
      if (d.status === 'started') {
        v.agents++;
        run.live.add(d.index);
        if (!this.childRun.has(d.childId)) changed.push(d.childId);
        this.childRun.set(d.childId, w.runId);
      } else run.live.delete(d.index);
      v.running = run.live.size;
    } else if (w.type === 'workflow/end') {
      const d = data as WorkflowData['workflow/end'];
      v.status = d.status;
      v.running = 0;
      run.live.clear();
      if (d.code) v.code = d.code;
    }
    return changed;
  }

  /** The run node a child hangs under, if the panel knows it. */
  parentOf(childId: string): string | undefined {
    const run = this.childRun.get(childId);
    return run ? runNodeId(run) : undefined;
  }

  /** The runs of one parent session (their node ids), for refreshes when the parent's status changes. */
  of(parentId: string): string[] {
    return [...this.runs.entries()].filter(([, r]) => r.parentId === parentId).map(([id]) => runNodeId(id));
  }

  forget(parentId: string): void {
    for (const [id, r] of this.runs) if (r.parentId === parentId) this.runs.delete(id);
  }

  ids(): string[] {
    return [...this.runs.keys()].map(runNodeId);
  }

  /** The run's node; `parentRunning` tells an open run from one a crash left open (shown interrupted). */
  node(id: string, parent: TreeNode | undefined, parentRunning: boolean): TreeNode | undefined {
    const run = this.runs.get(id.slice(PREFIX.length));
    if (!run) return undefined;
    const view: WorkflowNodeView = { ...run.view, phases: [...run.view.phases], logs: [...run.view.logs] };
    if (view.status === 'running' && !parentRunning) view.status = 'interrupted';
    return {
      id,
      parentId: run.parentId,
      origin: 'subagent',
      title: view.name,
      label: view.name,
      depth: (parent?.depth ?? 0) + 1,
      status: END_STATUS[view.status],
      ...(view.status === 'running' ? { activity: view.phase ? `phase: ${view.phase}` : 'running', activeSince: Date.parse(run.at) } : {}),
      tokens: { prompt: 0, completion: 0, cacheHit: 0 },
      reports: 0,
      createdAt: run.at,
      kind: 'workflow',
      workflow: view,
    };
  }
}
