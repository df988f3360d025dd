import type { Budget } from './budget';
import type { ApprovalPolicy, GoalSnapshot, NodePlacement, SandboxMode, SessionEvent, SessionHeader, StopReason, WorkflowEvent, WorktreeState } from './events';
import { foldWorkflow, type WorkflowRunSummary } from './workflow-fold';

/**
 * What every reader needs of a session without its log (DESIGN §4, issue 9.8): one fold,
 * kept incrementally by the store with each append and persisted in the catalog, so the
 * panel, `list_agents`, `arbor sessions` and the status bar never read every log to show a
 * tree. Plain JSON: it is stored as is.
 */
export interface SessionSummary {
  /** Events folded so far (the session's next seq). */
  length: number;
  /** Events before this seq are a fork's seed (the parent's history): not this session's. */
  seedLength: number;
  /** A turn started and not ended (by a live process, or by one that died: interrupted). */
  openTurn: boolean;
  /** A compaction started and not ended (one the user asked for runs outside any turn): recovery closes it after a crash. */
  openCompaction?: true;
  lastStopReason?: StopReason;
  /** Reported usage, plus estimates where a request reported none (see `estimated`). */
  tokens: { prompt: number; completion: number; cacheHit: number };
  /** Some of `tokens` are estimates (a request cut before its usage: interrupted, failed). */
  estimated: boolean;
  /** The request under way: its prompt estimated from its bytes (absent between requests). */
  inflightPrompt?: number;
  /** The model of the request under way (its estimate is that model's, for cost). */
  inflightModel?: string;
  /**
   * `tokens` split by the model that served them (the cost fold, decision 0033): readers price
   * them with the deployment's table. Tokens whose provider reported its own cost are not here.
   * Absent in summaries stored before issue 15: their cost is unknown (tokens only).
   */
  models?: ModelTokens[];
  /** USD the provider itself reported for requests (remote programs); added to the priced cost. */
  reportedCostUsd?: number;
  /** The budget on this session's subtree (its own last `budget/set`; a fork's seed never hands one on). */
  budget?: Budget;
  /** Actions refused for want of approval (tool/result with a refusal mark). */
  refused: number;
  reports: number;
  /** Messages accepted and neither claimed nor withdrawn. */
  inbox: number;
  policy: { sandbox?: SandboxMode; approval?: ApprovalPolicy };
  /** From the session's own `subagent/descriptor`. */
  label?: string;
  provider?: string;
  mode?: 'one-shot' | 'continuable';
  /** A remote child's program and its version (its last `subagent/remote`); absent for Arbor's own agents. */
  remote?: RemoteIdentity;
  /** A delegated child (by origin or descriptor): a finished one reads `settled`, not `idle`. */
  delegated: boolean;
  /** Its workflow runs (newest last), when it ran any. */
  workflows?: WorkflowRunSummary[];
  /** This child is agent `index` of run `runId` in its parent's log (from its descriptor). */
  workflowRun?: { runId: string; index: number };
  /** The goal's last snapshot (absent: none, or cleared); its activation is the live process's, never here. */
  goal?: GoalSummary;
  /** Where it runs when placed on another host or in a container (its descriptor's, decision 0074). */
  placement?: NodePlacement;
  /** Its git worktree (decision 0060): its last `worktree` event; `owner` set when it works in an ancestor's. */
  worktree?: { state: WorktreeState; branch: string; path: string; owner?: string };
}

/** What the tree and `list_agents` show of a remote child: `codex` / `codex-cli 0.171.0`. */
export interface RemoteIdentity {
  program: string;
  /** The program's `--version` line, as it said it. */
  version?: string;
  /** A mirror of one of the program's own sub-sessions, announced by this remote child (decision 0041): read-only. */
  announcedBy?: string;
}

/** Tokens one model served (reported usage plus estimates, as in `tokens`). */
export interface ModelTokens {
  model: string;
  prompt: number;
  completion: number;
  cacheHit: number;
}

/** The model's row of the summary's per-model tokens (created at first use). */
function modelRow(s: SessionSummary, model: string): ModelTokens {
  const rows = (s.models ??= []);
  let row = rows.find((r) => r.model === model);
  if (!row) rows.push((row = { model, prompt: 0, completion: 0, cacheHit: 0 }));
  return row;
}

/** Tokens a request spent, added to the session's totals; priced by the model that served them unless the provider said what it cost. */
function spend(s: SessionSummary, model: string, add: { prompt: number; completion: number; cacheHit: number }, costUsd: number | undefined): void {
  s.tokens.prompt += add.prompt;
  s.tokens.completion += add.completion;
  s.tokens.cacheHit += add.cacheHit;
  if (costUsd !== undefined) s.reportedCostUsd = (s.reportedCostUsd ?? 0) + costUsd;
  else {
    const row = modelRow(s, model);
    row.prompt += add.prompt;
    row.completion += add.completion;
    row.cacheHit += add.cacheHit;
  }
}

/** What the tree shows of a goal: phase, rounds, the block reason, the objective (trimmed). */
export type GoalSummary = Pick<GoalSnapshot, 'phase' | 'roundsStarted' | 'maxGoalRounds' | 'blocked'> & { objective: string };

/** The longest objective a summary keeps (the whole one is in the log). */
export const GOAL_OBJECTIVE_SUMMARY_CHARS = 300;

/** Providers count roughly 4 characters per token; used only where no usage was reported. */
const CHARS_PER_TOKEN = 4;
export const estimateTokens = (chars: number): number => Math.ceil(chars / CHARS_PER_TOKEN);

export function emptySummary(h: SessionHeader): SessionSummary {
  return {
    length: 0,
    seedLength: h.seedLength ?? 0,
    openTurn: false,
    tokens: { prompt: 0, completion: 0, cacheHit: 0 },
    estimated: false,
    models: [],
    refused: 0,
    reports: 0,
    inbox: 0,
    policy: {},
    delegated: h.origin === 'subagent',
  };
}

type Folder<T extends SessionEvent['type']> = (s: SessionSummary, e: Extract<SessionEvent, { type: T }>) => boolean;
type Folders = { [T in SessionEvent['type']]?: Folder<T> };

/** Per event type: how it moves the summary; true when what a reader shows changed. */
const FOLDERS: Folders = {
  'turn/start': (s) => {
    s.openTurn = true;
    return true;
  },
  'turn/end': (s, e) => {
    // A request that got no message at all still cost its prompt, unless it never reached
    // the provider (nothing came back: offline, DNS): that one cost nothing.
    if (s.inflightPrompt !== undefined && !e.unreached) {
      s.tokens.prompt += s.inflightPrompt;
      modelRow(s, s.inflightModel ?? '').prompt += s.inflightPrompt;
      s.estimated = true;
    }
    delete s.inflightPrompt;
    delete s.inflightModel;
    s.openTurn = false;
    s.lastStopReason = e.stopReason;
    return true;
  },
  'request/header': (s, e) => {
    // Another request while one is unanswered (it was sent again after a late answer): that one's prompt went out too.
    if (s.inflightPrompt !== undefined) {
      s.tokens.prompt += s.inflightPrompt;
      modelRow(s, s.inflightModel ?? '').prompt += s.inflightPrompt;
      s.estimated = true;
    }
    s.inflightPrompt = estimateTokens(e.bytes);
    s.inflightModel = e.model;
    return true;
  },
  'assistant/message': (s, e) => {
    let add: { prompt: number; completion: number; cacheHit: number };
    if (e.usage) {
      add = { prompt: e.usage.promptTokens, completion: e.usage.completionTokens, cacheHit: e.usage.cacheHitTokens ?? 0 };
      if (e.estimated) s.estimated = true;
    } else {
      // No usage: the stream was cut (interrupt, error) before the provider's final usage chunk.
      const chars = e.text.length + (e.reasoning?.length ?? 0) + (e.toolCalls ?? []).reduce((n, c) => n + c.name.length + c.arguments.length, 0);
      add = { prompt: s.inflightPrompt ?? 0, completion: estimateTokens(chars), cacheHit: 0 };
      s.estimated = true;
    }
    spend(s, e.model, add, e.usage?.costUsd);
    delete s.inflightPrompt;
    delete s.inflightModel;
    return true;
  },
  'compaction/start': (s) => {
    s.openCompaction = true;
    return false;
  },
  // A compaction's summary request spends like any request (its usage, or an estimate, rides on its end).
  'compaction/end': (s, e) => {
    delete s.openCompaction;
    if (!e.usage) return false;
    const u = e.usage;
    spend(s, e.model ?? '', { prompt: u.promptTokens, completion: u.completionTokens, cacheHit: u.cacheHitTokens ?? 0 }, u.costUsd);
    if (e.estimated) s.estimated = true;
    return true;
  },
  'tool/result': (s, e) => {
    if (e.refusal) s.refused++;
    if (e.name === 'report' && !e.isError) s.reports++;
    return e.name === 'report' || !!e.refusal;
  },
  'sandbox/mode': (s, e) => {
    s.policy.sandbox = e.mode;
    return true;
  },
  'approval/policy': (s, e) => {
    s.policy.approval = e.policy;
    return true;
  },
  'subagent/descriptor': (s, e) => {
    s.delegated = true;
    s.provider = e.provider;
    s.mode = e.mode;
    if (e.label) s.label = e.label;
    else delete s.label;
    if (e.workflow) s.workflowRun = { ...e.workflow };
    if (e.placement) s.placement = { ...e.placement };
    else delete s.placement;
    return true;
  },
  'subagent/remote': (s, e) => {
    s.remote = { program: e.program, ...(e.version ? { version: e.version } : {}), ...(e.announcedBy ? { announcedBy: e.announcedBy } : {}) };
    return true;
  },
  'workflow/start': (s, e) => foldWorkflow((s.workflows ??= []), e),
  'workflow/phase': (s, e) => foldWorkflow((s.workflows ??= []), e),
  'workflow/log': (s, e) => foldWorkflow((s.workflows ??= []), e),
  'workflow/agent': (s, e) => foldWorkflow((s.workflows ??= []), e),
  'workflow/end': (s, e) => foldWorkflow((s.workflows ??= []), e as WorkflowEvent),
  'inbox/accepted': (s) => {
    s.inbox++;
    return false;
  },
  'inbox/claimed': (s) => {
    s.inbox = Math.max(0, s.inbox - 1);
    return false;
  },
  'inbox/withdrawn': (s) => {
    s.inbox = Math.max(0, s.inbox - 1);
    return false;
  },
  'goal/change': (s, e) => {
    const g = e.goal;
    if (!g) delete s.goal;
    else
      s.goal = {
        phase: g.phase,
        roundsStarted: g.roundsStarted,
        maxGoalRounds: g.maxGoalRounds,
        objective: g.objective.slice(0, GOAL_OBJECTIVE_SUMMARY_CHARS),
        ...(g.blocked ? { blocked: { ...g.blocked } } : {}),
      };
    return true;
  },
  worktree: (s, e) => {
    s.worktree = { state: e.state, branch: e.branch, path: e.path, ...(e.owner ? { owner: e.owner } : {}) };
    return true;
  },
  'budget/set': (s, e) => {
    if (e.budget) s.budget = { ...e.budget };
    else delete s.budget;
    return true;
  },
  // A settlement notice, a background result or a report changes what the parent's row shows (its chat, its count).
  'user/message': (_s, e) => e.source.kind === 'subagent-settled' || e.source.kind === 'subagent-result' || e.source.kind === 'subagent-report',
};

/**
 * Fold one event (in seq order). Events of a fork's seed, and the seed's end marker, are the
 * parent's history and move nothing. Returns true when what a reader shows changed.
 */
export function foldSummary(s: SessionSummary, e: SessionEvent): boolean {
  if (e.seq < s.length) return false; // already folded (a replayed or resent batch)
  s.length = e.seq + 1;
  // A goal is the one thing a fork's seed hands on (disarmed: activation is never in the log).
  if (s.seedLength > 0 && e.seq <= s.seedLength) return e.type === 'goal/change' ? FOLDERS['goal/change']!(s, e) : false;
  const f = FOLDERS[e.type] as Folder<typeof e.type> | undefined;
  return f ? f(s, e) : false;
}

/** The summary of a whole log. */
export function summarize(h: SessionHeader, events: readonly SessionEvent[]): SessionSummary {
  const s = emptySummary(h);
  for (const e of events) foldSummary(s, e);
  return s;
}
