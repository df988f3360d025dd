// Part of the wire contract (src/protocol.ts re-exports it): the tree's shapes and the views its
// nodes carry. Imports only other files of src/protocol/ (decision 0031, amended 0062).

// ── shared shapes ─────────────────────────────────────────────────────────────

export type Origin = 'user' | 'subagent' | 'fork';
/**
 * A session's status (the core's SessionStatus word for word): 'queued' is a turn waiting for a
 * free slot (the limit on subagents running at once, no request made yet); 'approval' a
 * running turn waiting for a human.
 */
export type NodeStatus = 'running' | 'queued' | 'approval' | 'waiting' | 'settled' | 'failed' | 'interrupted' | 'idle';
/** `budget`: the next request did not fit the remaining budget of the session or an ancestor (a stop, shown as `interrupted`). */
export type StopReason = 'completed' | 'interrupted' | 'error' | 'max-tokens' | 'cancelled' | 'budget';
export type SandboxMode = 'read-only' | 'workspace-write' | 'full-access';
export type ApprovalPolicy = 'ask' | 'never';
/** Where requests go: the configured endpoint (a key or a local URL), `npm start`'s bundled demo model, or nowhere (no key). */
export type ModelSource = 'endpoint' | 'demo' | 'none';
/** VS Code commands a view may ask the host to run (a button in a notice). */
export type HostCommand = 'setApiKey' | 'openModelSettings';

/** One node of the delegation tree. */
export interface TreeNode {
  id: string;
  /** Absent for a root conversation. */
  parentId?: string;
  origin: Origin;
  title?: string;
  /** The subagent's label (from its descriptor). */
  label?: string;
  provider?: string;
  mode?: 'one-shot' | 'continuable';
  /** A remote child's program and its version as the program said it (`codex`, `codex-cli 0.171.0`). */
  remote?: {
    program: string;
    version?: string;
    /** A mirror (decision 0041): one of the program's own sub-sessions, announced by this remote child; read-only. */
    announcedBy?: string;
  };
  depth: number;
  status: NodeStatus;
  /** What it is doing now: 'thinking', 'streaming', 'tool read_file', 'waiting for approval', 'waiting for children'. */
  activity?: string;
  /** Epoch ms when the current activity began (the UI shows elapsed time). */
  activeSince?: number;
  lastStopReason?: StopReason;
  tokens: { prompt: number; completion: number; cacheHit: number };
  /** Part of `tokens` is estimated (a running request, or one cut off before the provider reported usage). */
  tokensEstimated?: boolean;
  /** Its own cost in USD at the deployment's prices; absent when a model with no price served it (tokens only). */
  costUsd?: number;
  /** What cache hits saved against paying them as misses (USD); with `costUsd`. */
  savedUsd?: number;
  /** The node and its delegated descendants together (shown when collapsed); absent without children. */
  subtree?: SpendView;
  /** The budget on its subtree and what the subtree spent against it. */
  budget?: BudgetView;
  /** Actions refused for want of approval (decision 0015); absent when none. */
  refused?: number;
  /** The session's own policy switches (last event wins); absent fields follow the panel defaults. */
  policy?: { sandbox?: SandboxMode; approval?: ApprovalPolicy };
  reports: number;
  /** A workflow run's node (id `wf.<runId>`, under its parent; its agents are its children in the tree). */
  kind?: 'session' | 'workflow';
  workflow?: WorkflowNodeView;
  /** The conversation's goal, if it has one (decision 0029); `armed`: it runs rounds by itself in this window. */
  goal?: GoalView;
  /** It works in a git worktree (decision 0060): its own (`owner` absent) or an ancestor's. */
  worktree?: WorktreeView;
  /** It runs on a placement (decision 0074): another host or a container. */
  placement?: PlacementView;
  /** One way of a "Try N ways" group (decision 0061): the chat shows the group's comparison. */
  bestOf?: { group: string; way: number; of: number };
  /** Approvals waiting in this session or one below it ("a child needs you"); absent when none. */
  pendingApprovals?: number;
  createdAt: string;
}

/** Tokens (prompt + completion) and, when every model has a price, dollars. */
export interface SpendView {
  tokens: number;
  cacheHit: number;
  costUsd?: number;
  savedUsd?: number;
}

/** A budget and what its subtree spent (the bar: spent / limit, a warning from 80 %). */
export interface BudgetView {
  maxTokens?: number;
  maxCostUsd?: number;
  spentTokens: number;
  /** Absent: a model with no price spent under it. */
  spentUsd?: number;
}

/** What a workflow run's node shows: its phases, its latest log lines, its agents. */
export interface WorkflowNodeView {
  runId: string;
  name: string;
  description: string;
  /** The latest phase; `phases` are all of them, in order. */
  phase?: string;
  phases: string[];
  /** The last few log lines. */
  logs: string[];
  agents: number;
  running: number;
  /** Agents ended, by outcome (the run's end counts those it cancelled); absent for runs folded before issue 21.6. */
  ended?: Partial<Record<AgentOutcome, number>>;
  status: RunStatus;
  code?: string;
}

export type RunStatus = 'running' | 'completed' | 'failed' | 'cancelled' | 'interrupted';
/** How one agent of a workflow run ended (the core's AgentOutcome word for word). */
export type AgentOutcome = 'done' | 'failed' | 'over-budget' | 'cancelled';

/** A workflow run's node id: `wf.<runId>` (a node of the tree, no session of its own). */
export const RUN_NODE_PREFIX = 'wf.';
export const isRunNodeId = (id: string): boolean => id.startsWith(RUN_NODE_PREFIX);

/**
 * A workflow run's tab (issue 21.6), folded from its parent's log: every phase with its state,
 * the log, each agent with how it ended, the result or the error. The agents' live status and
 * cost, and the run's Σ, come from their tree nodes.
 */
export interface WorkflowRunView {
  runId: string;
  /** The session that ran it. */
  parentId: string;
  name: string;
  description: string;
  status: RunStatus;
  code?: string;
  /** Why it failed, in the engine's words. */
  error?: string;
  startedAt: string;
  endedAt?: string;
  limits: { maxTotalAgents: number; concurrency: number; wallClockMs: number };
  /** In order; the last is `running` while the run goes on, and takes the run's end otherwise. */
  phases: { title: string; state: 'done' | RunStatus }[];
  /** The newest log lines (bounded); `logsDropped` says how many are not here. */
  logs: string[];
  logsDropped: number;
  agents: RunAgentView[];
  /** The script's return value (JSON, pretty-printed), when it completed; cut at a bound. */
  result?: { text: string; truncated: boolean };
}

export interface RunAgentView {
  index: number;
  childId: string;
  label?: string;
  /** The phase it started in. */
  phase?: string;
  outcome: 'running' | AgentOutcome;
}

export type GoalPhase = 'active' | 'paused' | 'blocked' | 'complete';

/** Where a placed node runs (decision 0074): the placement, its kind, `user@host:port` or the image, the round trip of its check. */
export interface PlacementView {
  name: string;
  kind: 'local' | 'ssh' | 'container';
  where: string;
  rttMs?: number;
}

/** What became of a worktree child's worktree (decision 0060); `inherited`: it works in an ancestor's. */
export type WorktreeState = 'open' | 'applied' | 'discarded' | 'kept' | 'inherited';

/** What the tree row and the worktree bar show of a node's worktree. */
export interface WorktreeView {
  state: WorktreeState;
  branch: string;
  /** The ancestor whose worktree it works in. */
  owner?: string;
}

/** A worktree nothing live owns (a crash, a start cut short): named by its branch, never by a session id. */
export interface WorktreeOrphanView {
  /** For the clean request only. */
  id: string;
  name: string;
  /** Why it is an orphan, in words. */
  why: string;
}

/** A file a way changed, with its added and removed lines (decision 0061). */
export interface WayFileView {
  path: string;
  status: 'added' | 'modified' | 'deleted' | 'type-changed';
  added: number;
  removed: number;
}

/** One way as the comparison shows it. */
export interface WayView {
  id: string;
  way: number;
  model?: string;
  agent?: string;
  status: NodeStatus | 'unknown';
  settled: boolean;
  outcome?: string;
  error?: string;
  worktree: WorktreeState | 'missing';
  branch?: string;
  files: WayFileView[];
  /** Its worktree could not be read (WORKTREE_UNREADABLE: what failed, what to do): `files` is unknown, not empty. */
  unreadable?: string;
}

/** A "Try N ways" group side by side (decision 0061); `chosen`: the way applied first. */
export interface WaysView {
  group: string;
  source: string;
  prompt: string;
  ways: WayView[];
  chosen?: string;
  settled: boolean;
}

/** A file a worktree child's apply could not merge: nothing was changed. */
export interface WorktreeConflictView {
  path: string;
  message: string;
}

/** What the tree row and the goal bar show of a goal. */
export interface GoalView {
  phase: GoalPhase;
  roundsStarted: number;
  maxGoalRounds: number;
  armed: boolean;
  /** Trimmed to 300 characters. */
  objective: string;
  /** Only when blocked: `round-limit`, `prompt-rejected`, `model`, `round-error`. */
  blocked?: { code: string; message: string };
}
