import type { SessionEvent, WorkflowData, WorkflowEvent } from '../../core/session/events';
import { AGENT_OUTCOME, type AgentOutcome as CoreOutcome } from '../../core/session/workflow-fold';
import type { AgentOutcome, RunStatus, WorkflowRunView } from '../../protocol';

// The wire's outcome is the core's, word for word (the protocol is a leaf module: it cannot import it).
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const outcomesMatch: Same<AgentOutcome, CoreOutcome> = true;
void outcomesMatch;

/** Log lines a tab keeps (the newest); the summary keeps 20, the log keeps what the engine let through. */
export const TAB_LOG_LINES = 500;
/** Characters of the result a tab shows (the whole result is in the parent's tool result). */
export const TAB_RESULT_CHARS = 20_000;

type Folder<T extends keyof WorkflowData> = (v: WorkflowRunView, d: WorkflowData[T], e: WorkflowEvent) => void;

/** The phase a run's end leaves its last phase in. */
const LAST_PHASE: Record<Exclude<RunStatus, 'running'>, 'done' | RunStatus> = {
  completed: 'done',
  failed: 'failed',
  cancelled: 'cancelled',
  interrupted: 'interrupted',
};

const FOLDERS: { [T in Exclude<keyof WorkflowData, 'workflow/start'>]: Folder<T> } = {
  'workflow/phase': (v, d) => {
    const last = v.phases.at(-1);
    if (last?.state === 'running') last.state = 'done';
    v.phases.push({ title: d.title, state: 'running' });
  },
  'workflow/log': (v, d) => {
    v.logs.push(d.message);
    if (v.logs.length > TAB_LOG_LINES) {
      v.logsDropped += v.logs.length - TAB_LOG_LINES;
      v.logs.splice(0, v.logs.length - TAB_LOG_LINES);
    }
  },
  'workflow/agent': (v, d) => {
    if (d.status === 'started') {
      if (v.agents.some((a) => a.index === d.index)) return;
      const phase = v.phases.at(-1)?.title;
      v.agents.push({
        index: d.index,
        childId: d.childId,
        ...(d.label ? { label: d.label } : {}),
        ...(phase !== undefined ? { phase } : {}),
        outcome: 'running',
      });
      return;
    }
    const agent = v.agents.find((a) => a.index === d.index && a.outcome === 'running');
    if (agent) agent.outcome = AGENT_OUTCOME[d.stopReason ?? 'completed'] ?? 'failed';
  },
  'workflow/end': (v, d, e) => {
    v.status = d.status;
    v.endedAt = e.at;
    if (d.code) v.code = d.code;
    if (d.error) v.error = d.error;
    v.logsDropped += d.logsDropped;
    const last = v.phases.at(-1);
    if (last?.state === 'running') last.state = LAST_PHASE[d.status];
    // The run's end cancelled and disposed the agents still running (no `done` of their own).
    for (const a of v.agents) if (a.outcome === 'running') a.outcome = 'cancelled';
  },
};

/**
 * A workflow run's tab, folded from its parent's log: `workflow/*` events of `runId`, and the
 * parent's `tool/result` answering the call that started it (the result). `open` says whether
 * the run can still be going (its parent runs, or the engine has it): a run a crash or reload
 * left without an end reads `interrupted`, as its tree node does. Undefined: no such run.
 */
export function workflowRunView(parentId: string, events: readonly SessionEvent[], runId: string, open: boolean): WorkflowRunView | undefined {
  let view: WorkflowRunView | undefined;
  let callId: string | undefined;
  for (const e of events) {
    if (e.type === 'tool/result') {
      if (view && callId !== undefined && e.callId === callId) readResult(view, e.content, e.isError);
      continue;
    }
    if (!e.type.startsWith('workflow/')) continue;
    const w = e as WorkflowEvent;
    if (w.runId !== runId) continue;
    if (w.type === 'workflow/start') {
      const d = w.data as unknown as WorkflowData['workflow/start'];
      callId = d.callId;
      view = {
        runId,
        parentId,
        name: d.name,
        description: d.description,
        status: 'running',
        startedAt: w.at,
        limits: { ...d.limits },
        phases: [],
        logs: [],
        logsDropped: 0,
        agents: [],
      };
      continue;
    }
    if (view) (FOLDERS[w.type] as Folder<typeof w.type>)(view, w.data as never, w);
  }
  if (view && view.status === 'running' && !open) {
    view.status = 'interrupted';
    const last = view.phases.at(-1);
    if (last?.state === 'running') last.state = 'interrupted';
    for (const a of view.agents) if (a.outcome === 'running') a.outcome = 'cancelled';
  }
  return view;
}

/**
 * The workflow tool's answer: `{runId, status, agents, result}` when it completed (the result
 * pretty-printed); a failure's text is the error the end already carries, so it is not repeated.
 */
function readResult(view: WorkflowRunView, content: string, isError: boolean): void {
  if (isError) return;
  let text = content;
  try {
    const parsed = JSON.parse(content) as { result?: unknown };
    if (parsed && typeof parsed === 'object' && 'result' in parsed) text = JSON.stringify(parsed.result, null, 2) ?? 'null';
  } catch {
    // not JSON: shown as it is
  }
  const truncated = text.length > TAB_RESULT_CHARS;
  view.result = { text: truncated ? text.slice(0, TAB_RESULT_CHARS) : text, truncated };
}
