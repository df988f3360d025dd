// A workflow run in words (issue 21.6): the tree row's line and the run tab's summary, from
// the counts the host folded out of the run's events ("4 agents · done", "3 done, 1 cancelled").
import type { AgentOutcome, RunAgentView, RunStatus, SpendView, WorkflowNodeView, WorkflowRunView } from '../../../src/protocol';
import { grouped, usd } from './format';

/** Outcomes in the order they are said, with their words. */
const OUTCOME_WORDS: Record<AgentOutcome, string> = {
  done: 'done',
  failed: 'failed',
  'over-budget': 'over budget',
  cancelled: 'cancelled',
};
const ORDER = Object.keys(OUTCOME_WORDS) as AgentOutcome[];

/** A finished run's status as one word: `completed` reads "done". */
export const RUN_STATUS_WORDS: Record<RunStatus, string> = {
  running: 'running',
  completed: 'done',
  failed: 'failed',
  cancelled: 'cancelled',
  interrupted: 'interrupted',
};

const agents = (n: number): string => `${n} agent${n === 1 ? '' : 's'}`;

/** "3 done, 1 cancelled" (outcomes with no agent left out); empty when none ended. */
export function outcomeCounts(ended: Partial<Record<AgentOutcome, number>>): string {
  return ORDER.filter((o) => (ended[o] ?? 0) > 0)
    .map((o) => `${ended[o]} ${OUTCOME_WORDS[o]}`)
    .join(', ');
}

/**
 * The run in one line. Running: its phase and how many agents run and ended ("review · 2
 * running, 1 done"). Ended with every agent done (or none): how many agents and how the run
 * ended ("4 agents · done", "2 agents · failed (AGENT_CAP)"). Ended otherwise: the outcomes
 * ("3 done, 1 cancelled"; the status badge says how the run itself ended).
 */
export function runSummary(run: Pick<WorkflowNodeView, 'agents' | 'running' | 'ended' | 'status' | 'phase' | 'code'>): string {
  const counts = run.ended ? outcomeCounts(run.ended) : '';
  if (run.status === 'running') {
    const now = run.agents === 0 ? 'no agents yet' : `${run.running} running${counts ? `, ${counts}` : ''}`;
    return `${run.phase ?? 'starting'} · ${now}`;
  }
  const code = run.code && run.status === 'failed' ? ` (${run.code})` : '';
  const allDone = !run.ended || ORDER.every((o) => o === 'done' || !run.ended?.[o]);
  return allDone ? `${agents(run.agents)} · ${RUN_STATUS_WORDS[run.status]}${code}` : `${counts}${code}`;
}

/** An agent's outcome as a word, for the run tab's list. */
export function agentOutcomeWord(outcome: RunAgentView['outcome']): string {
  return outcome === 'running' ? 'running' : OUTCOME_WORDS[outcome];
}

/** The counts a run tab shows before the tree has sent the run's node (from the tab's own view). */
export function viewCounts(v: WorkflowRunView): Pick<WorkflowNodeView, 'agents' | 'running' | 'ended' | 'status' | 'phase' | 'code'> {
  const ended: Partial<Record<AgentOutcome, number>> = {};
  for (const a of v.agents) if (a.outcome !== 'running') ended[a.outcome] = (ended[a.outcome] ?? 0) + 1;
  return {
    agents: v.agents.length,
    running: v.agents.filter((a) => a.outcome === 'running').length,
    ended,
    status: v.status,
    ...(v.phases.length ? { phase: v.phases[v.phases.length - 1].title } : {}),
    ...(v.code ? { code: v.code } : {}),
  };
}

/** "Σ $0.0123 · 12,345 tokens" (dollars when every model had a price), or undefined before any agent spent. */
export function sigmaText(spend: SpendView | undefined): string | undefined {
  if (!spend || spend.tokens <= 0) return undefined;
  const tokens = `${grouped(spend.tokens)} tokens`;
  return spend.costUsd !== undefined ? `Σ ${usd(spend.costUsd)} · ${tokens}` : `Σ ${tokens}`;
}
