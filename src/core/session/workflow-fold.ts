import type { SessionEvent, StopReason, WorkflowData, WorkflowEvent, WorkflowStatus } from './events';

/** How one agent of a run ended, as people say it (its `workflow/agent{done}` stop reason). */
export type AgentOutcome = 'done' | 'failed' | 'over-budget' | 'cancelled';

/**
 * Each stop reason's outcome. An agent still running when its run ends was cancelled by the
 * run (`Run.end` cancels and disposes it; no `done` event is written for it).
 */
export const AGENT_OUTCOME: Record<StopReason, AgentOutcome> = {
  completed: 'done',
  error: 'failed',
  'max-tokens': 'failed',
  budget: 'over-budget',
  interrupted: 'cancelled',
  cancelled: 'cancelled',
};

/** A session's workflow run as every reader shows it (part of its summary, so it survives a reload). */
export interface WorkflowRunSummary {
  runId: string;
  name: string;
  description: string;
  at: string;
  /** The latest phase; `phases` are all of them, in order (bounded). */
  phase?: string;
  phases: string[];
  /** The last few log lines. */
  logs: string[];
  /** Agents started so far. */
  agents: number;
  /** Indexes of the agents started and not done. */
  live: number[];
  /**
   * Agents ended, by outcome (those the run's end cancelled included). Absent in summaries
   * stored before issue 21.6: readers then say only how many agents there were.
   */
  ended?: Partial<Record<AgentOutcome, number>>;
  status: 'running' | WorkflowStatus;
  code?: string;
}

const MAX_RUNS = 50;
const MAX_PHASES = 100;
const MAX_LOGS = 20;

const keepLast = <T>(list: T[], max: number): void => {
  if (list.length > max) list.splice(0, list.length - max);
};

function count(run: WorkflowRunSummary, outcome: AgentOutcome, n: number): void {
  const ended = (run.ended ??= {});
  ended[outcome] = (ended[outcome] ?? 0) + n;
}

type RunFolder<T extends keyof WorkflowData> = (run: WorkflowRunSummary, d: WorkflowData[T]) => void;

const RUN_FOLDERS: { [T in Exclude<keyof WorkflowData, 'workflow/start'>]: RunFolder<T> } = {
  'workflow/phase': (run, d) => {
    run.phase = d.title;
    run.phases.push(d.title);
    keepLast(run.phases, MAX_PHASES);
  },
  'workflow/log': (run, d) => {
    run.logs.push(d.message);
    keepLast(run.logs, MAX_LOGS);
  },
  'workflow/agent': (run, d) => {
    if (d.status === 'started') {
      run.agents++;
      if (!run.live.includes(d.index)) run.live.push(d.index);
    } else if (run.live.includes(d.index)) {
      run.live = run.live.filter((i) => i !== d.index);
      count(run, AGENT_OUTCOME[d.stopReason ?? 'completed'] ?? 'failed', 1);
    }
  },
  'workflow/end': (run, d) => {
    run.status = d.status;
    if (run.live.length > 0) count(run, 'cancelled', run.live.length);
    run.live = [];
    if (d.code) run.code = d.code;
  },
};

/**
 * Fold one `workflow/*` event into a session's runs (the newest `MAX_RUNS` are kept). Data
 * was validated at append; an event for an unknown run changes nothing.
 */
export function foldWorkflow(runs: WorkflowRunSummary[], e: WorkflowEvent): boolean {
  if (e.type === 'workflow/start') {
    const d = e.data as unknown as WorkflowData['workflow/start'];
    runs.push({ runId: e.runId, name: d.name, description: d.description, at: e.at, phases: [], logs: [], agents: 0, live: [], ended: {}, status: 'running' });
    keepLast(runs, MAX_RUNS);
    return true;
  }
  const run = runs.find((r) => r.runId === e.runId);
  if (!run) return false;
  (RUN_FOLDERS[e.type] as RunFolder<typeof e.type>)(run, e.data as never);
  return true;
}

/**
 * The runs a log started and never ended, in start order (recovery closes them). Each run is
 * folded on its own, so the `MAX_RUNS` cap of a summary's list never hides an open run.
 */
export function openRuns(events: readonly SessionEvent[]): WorkflowRunSummary[] {
  const runs = new Map<string, WorkflowRunSummary[]>();
  for (const e of events) {
    if (!e.type.startsWith('workflow/')) continue;
    const w = e as WorkflowEvent;
    const own = w.type === 'workflow/start' ? [] : runs.get(w.runId);
    if (!own) continue;
    foldWorkflow(own, w);
    runs.set(w.runId, own);
  }
  return [...runs.values()].flat().filter((r) => r.status === 'running');
}
