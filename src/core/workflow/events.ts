import type { SessionEvent, WorkflowData, WorkflowStatus } from '../session/events';

/** What a parent's log says of one workflow run (the tree's run node and recovery read this). */
export interface RunView {
  runId: string;
  name: string;
  description: string;
  /** The seq of its `workflow/start`. */
  seq: number;
  phases: string[];
  logs: string[];
  agents: number;
  running: number;
  status: WorkflowStatus | 'running';
  code?: string;
  error?: string;
}

/** Every run in a log, in start order (a fold over `workflow/*`; events of unknown runs are ignored). */
export function foldRuns(events: readonly SessionEvent[], maxLogs = 200): RunView[] {
  const runs = new Map<string, RunView>();
  const kids = new Map<string, Set<number>>();
  for (const e of events) {
    if (!e.type.startsWith('workflow/')) continue;
    const w = e as Extract<SessionEvent, { runId: string }>;
    if (w.type === 'workflow/start') {
      const d = w.data as unknown as WorkflowData['workflow/start'];
      runs.set(w.runId, {
        runId: w.runId,
        name: d.name,
        description: d.description,
        seq: w.seq,
        phases: [],
        logs: [],
        agents: 0,
        running: 0,
        status: 'running',
      });
      kids.set(w.runId, new Set());
      continue;
    }
    const run = runs.get(w.runId);
    if (!run) continue;
    applyRunEvent(run, w.type, w.data as never, kids.get(w.runId)!, maxLogs);
  }
  return [...runs.values()];
}

function applyRunEvent(run: RunView, type: string, data: Record<string, unknown>, live: Set<number>, maxLogs: number): void {
  if (type === 'workflow/phase') run.phases.push(String(data.title));
  else if (type === 'workflow/log') {
    run.logs.push(String(data.message));
    if (run.logs.length > maxLogs) run.logs.shift();
  } else if (type === 'workflow/agent') {
    const d = data as unknown as WorkflowData['workflow/agent'];
    if (d.status === 'started') {
      run.agents++;
      live.add(d.index);
    } else live.delete(d.index);
    run.running = live.size;
  } else if (type === 'workflow/end') {
    const d = data as unknown as WorkflowData['workflow/end'];
    run.status = d.status;
    run.running = 0;
    if (d.code) run.code = d.code;
    if (d.error) run.error = d.error;
  }
}

/** Runs with a start and no end. */
export function openRuns(events: readonly SessionEvent[]): RunView[] {
  return foldRuns(events, 0).filter((r) => r.status === 'running');
}
