import type { Budget } from './budget';

// The session log's vocabulary (DESIGN §2). Event `type` names are a contract with
// the store, the CLI, the webview and tests; shapes may grow, names may not change.

export type Origin = 'user' | 'subagent' | 'fork';

export interface SessionHeader {
  id: string;
  createdAt: string;
  title?: string;
  origin: Origin;
  parentSession?: string;
  /** Durable, monotonic lower bound of the delegation depth (root = 0). */
  delegationDepth?: number;
  /** Number of events copied from a fork parent (the seed), before `session/end-seed`. */
  seedLength?: number;
  cwd?: string;
  agentPreset?: string;
  /** A root conversation started with an agent defined in a file (decision 0056): its composition as read then. */
  agent?: RootAgent;
  /** One way of a "Try N ways" group (decision 0061): the group is the set of sessions whose header names it. */
  bestOf?: BestOfWay;
}

/** A way's place in its group, written once in its header (decision 0061). */
export interface BestOfWay {
  group: string;
  /** 1-based, in the order the ways were asked for. */
  way: number;
  /** How many ways the group was started with. */
  of: number;
  /** The conversation and the `seq` of the message the group was started from. */
  source: string;
  seq: number;
  /** The prompt each way runs. */
  prompt: string;
  /** This way's own model (absent: the conversation's). */
  model?: string;
  /** The agent file this way runs as (absent: the conversation's agent). */
  agent?: string;
}

/** The composition a root conversation took from an agent file; a user fork keeps it, a child does not. */
export interface RootAgent {
  name: string;
  persona?: string;
  toolFilter?: string[];
  model?: string;
}

/**
 * Where a `user/message` or inbox message came from, discriminated on `kind`; each kind carries
 * exactly its fields (`message-source.ts` reads one from untrusted data by the same table).
 */
export type MessageSource =
  /** A human typed it; `compacted`: the summary a compaction put in place of what it replaced. */
  | { kind: 'user'; compacted?: true }
  /** `send_message` or a human's message to a child: `fromSession` is the sender, `'user'` for a human. */
  | { kind: 'followup'; fromSession: string }
  /** A continuable child's `report` (`fromSession`: the child), `quiet` or `wakeup`. */
  | { kind: 'subagent-report'; fromSession: string; mode: 'quiet' | 'wakeup' }
  /** A continuable child's Activation ended: how, and how many actions it was refused. */
  | { kind: 'subagent-settled'; fromSession: string; stopReason: StopReason; refused?: number }
  /** A background one-shot child's result, an ordinary job result (seed 000 §二, decision 0052): how it ended, and its refusals. */
  | { kind: 'subagent-result'; fromSession: string; stopReason: StopReason; refused?: number }
  /** A goal round: the goal's revision and the round's number when it was planned. */
  | { kind: 'goal'; revision: number; round: number }
  /** The runtime's delegation notice at the head of a child (`runtime`), or the task its parent (`fromSession`) gave it. */
  | { kind: 'delegation'; runtime: true }
  | { kind: 'delegation'; fromSession: string }
  /** A `Stop` / `SubagentStop` hook said the turn must go on (exit 2 or `decision: "block"`): its reason, as the next instruction. */
  | { kind: 'hook'; event: string };

export type MessageSourceKind = MessageSource['kind'];

/** `budget`: the next request could not fit the remaining budget of the session or an ancestor (decision 0034). */
export type StopReason = 'completed' | 'interrupted' | 'error' | 'max-tokens' | 'cancelled' | 'budget';
export type SandboxMode = 'read-only' | 'workspace-write' | 'full-access';
export type ApprovalPolicy = 'ask' | 'never';
export type PolicySource = 'user' | 'delegation';

export interface ToolCall {
  id: string;
  name: string;
  /** Raw JSON text as the model produced it; tools parse and validate it. */
  arguments: string;
}

export interface Usage {
  promptTokens: number;
  completionTokens: number;
  /** Prompt tokens served from the provider's prefix cache. */
  cacheHitTokens?: number;
  cacheMissTokens?: number;
  /** What the provider itself said the request cost (USD), where it says (remote programs); it wins over the price table. */
  costUsd?: number;
}

interface Base<T extends string> {
  seq: number;
  type: T;
  /** ISO-8601 time the event was appended. */
  at: string;
}

export interface UserMessageEvent extends Base<'user/message'> {
  text: string;
  source: MessageSource;
  /** Set by compaction: this message replaces the surface of `replaces` (inclusive seqs). */
  surfaceOp?: 'replace';
  replaces?: { fromSeq: number; toSeq: number };
  compactionId?: string;
  /** The inbox message this was claimed from, if any. */
  messageId?: string;
}

export interface AssistantMessageEvent extends Base<'assistant/message'> {
  text: string;
  reasoning?: string;
  toolCalls?: ToolCall[];
  usage?: Usage;
  model: string;
}

export interface ToolResultEvent extends Base<'tool/result'> {
  callId: string;
  name: string;
  content: string;
  isError: boolean;
  /** Set when the action was refused for want of approval: what was asked and why it was refused (machine-readable). */
  refusal?: Refusal;
}

/** An action a tool did not take because approval was refused (decision 0015). */
export interface Refusal {
  /** The approval outcome, e.g. 'policy-never', 'denied', 'no-port'. */
  outcome: string;
  /** The one line a human was (or would have been) asked about, e.g. "$ npm test". */
  summary: string;
}

export interface TurnStartEvent extends Base<'turn/start'> {
  turnId: string;
}

export interface TurnEndEvent extends Base<'turn/end'> {
  turnId: string;
  stopReason: StopReason;
  error?: string;
  /** With `error`: the model failure's code (`auth`, `connection`, …) so a view can offer the fix. */
  errorCode?: string;
  /**
   * The turn's last request failed before any byte came back (offline, a DNS failure, a
   * refused connection): the provider never saw it, so its prompt estimate is not spent.
   */
  unreached?: true;
}

export interface RequestHeaderEvent extends Base<'request/header'> {
  model: string;
  provider: string;
  bytes: number;
  headBytes: number;
  headHash: string;
  prefixHash: string;
}

export interface InboxAcceptedEvent extends Base<'inbox/accepted'> {
  messageId: string;
  text: string;
  source: MessageSource;
}

export interface InboxClaimedEvent extends Base<'inbox/claimed'> {
  messageId: string;
}

/** The user cancelled a queued message before it was claimed: it never runs (decision 0011). */
export interface InboxWithdrawnEvent extends Base<'inbox/withdrawn'> {
  messageId: string;
}

export interface SandboxModeEvent extends Base<'sandbox/mode'> {
  mode: SandboxMode;
  source: PolicySource;
}

export interface ApprovalPolicyEvent extends Base<'approval/policy'> {
  policy: ApprovalPolicy;
  source: PolicySource;
}

/** What an "allow for this conversation" covers: one command prefix, or one exact (real) path. */
export interface GrantScope {
  kind: 'command-prefix' | 'path';
  value: string;
}

/**
 * The user allowed a tool for this conversation within a scope, or (`revoked: true`)
 * took that back. Last event per `grantId` wins; it only skips the ask, never the sandbox.
 */
export interface ApprovalGrantEvent extends Base<'approval/grant'> {
  grantId: string;
  tool: string;
  scope: GrantScope;
  /** The sandbox mode the user granted under; the grant does not hold in a narrower one. */
  sandbox?: SandboxMode;
  revoked?: boolean;
}

export interface SubagentDescriptorEvent extends Base<'subagent/descriptor'> {
  version: 2;
  mode: 'one-shot' | 'continuable';
  provider: string;
  label?: string;
  modelProvider?: string;
  model?: string;
  persona?: string;
  /** The persona is the whole system prompt. */
  personaComplete?: boolean;
  toolFilter?: string[];
  /** The agent file it was started from (its name; persona, tools and model above are the file's, as read then). */
  agent?: string;
  /** The child is agent number `index` of workflow run `runId` in its parent's log (the tree puts it under the run). */
  workflow?: { runId: string; index: number };
  /** The child was started in its own git worktree (decision 0060); its `worktree` event says where. */
  isolation?: 'worktree';
  /** Where the child runs when it is placed on another host or in a container (issue 26, decision 0074). */
  placement?: NodePlacement;
}

/**
 * Where a placed node runs (decision 0074), as its descriptor records it: the placement's name,
 * its kind, `user@host:port` or the image, and the round trip of the check made at its start.
 * (The same shape as the placement layer's `PlacementInfo`, declared here: the log knows no transport.)
 */
export interface NodePlacement {
  name: string;
  kind: 'local' | 'ssh' | 'container';
  where: string;
  rttMs?: number;
}

/** Where a worktree child's worktree is, and what has become of it (decision 0060). */
export type WorktreeState = 'open' | 'applied' | 'discarded' | 'kept' | 'inherited';

/**
 * A child's git worktree (decision 0060), last event after the seed wins. `open`: created at the
 * child's start, its only root is `root`; `applied` / `discarded` / `kept`: what the human did
 * with it; `inherited`: a descendant of a worktree child, confined to the same worktree (the
 * `owner`'s). The fold of these events is what a cold resume roots the child in.
 */
export interface WorktreeEvent extends Base<'worktree'> {
  state: WorktreeState;
  /** The repository's top folder (the parent's checkout). */
  repo: string;
  /** The worktree's folder. */
  path: string;
  /** The child's root inside it (the parent's root at the same place in the repository). */
  root: string;
  branch: string;
  /** The commit it was created from: the parent's state then, uncommitted changes included. */
  base: string;
  /** The session whose worktree it is (set on `inherited`). */
  owner?: string;
  /** The commit on the branch the state change was made from (`applied`, `kept`). */
  head?: string;
  /** Files the change touched (`applied`). */
  files?: number;
}

/**
 * A remote child's other program (issue 13, decision 0035): which program ran its turn, the
 * program's own session id (to find its transcript, or resume it later) and the process
 * group it ran in (so a reaper can end it after a host crash). Not model history.
 */
export interface SubagentRemoteEvent extends Base<'subagent/remote'> {
  program: string;
  version?: string;
  externalId: string;
  /** The process group (= the leader's pid) the program runs in, while it runs. */
  pgid?: number;
  /**
   * The leader's start time (clock ticks after boot, /proc/<pid>/stat field 22) and the boot's
   * id: with them the reaper tells this group from a later one that reused the number. Absent
   * in logs written before they were recorded.
   */
  startTime?: number;
  bootId?: string;
  /** The program's own store (another Arbor's), when it has one. */
  store?: string;
  /**
   * Set on a mirror (decision 0041): a sub-session the program of this remote child announced
   * (ACP `subagent_update`), shown in the tree. Arbor runs nothing in it: read-only.
   */
  announcedBy?: string;
}

export interface EndSeedEvent extends Base<'session/end-seed'> {
  seedLength: number;
  /**
   * Inbox messages the parent had accepted but not claimed when the seed was cut: they are
   * the parent's queue, never the fork's (seed 000 §三), so the fork's inbox starts empty.
   * Absent in forks written before this rule (their inbox kept the parent's queue).
   */
  droppedInbox?: string[];
}

export interface CompactionStartEvent extends Base<'compaction/start'> {
  compactionId: string;
  reason: 'manual' | 'threshold';
}

export interface CompactionSummaryEvent extends Base<'compaction/summary'> {
  compactionId: string;
  text: string;
}

export interface CompactionEndEvent extends Base<'compaction/end'> {
  compactionId: string;
  outcome: 'committed' | 'aborted';
}

/** A goal's phase (seed 002): the clear tombstone is `goal: null`, not a phase. */
export type GoalPhase = 'active' | 'paused' | 'blocked' | 'complete';
/** Which operation wrote a goal snapshot (the human's, the driver's or the model's). */
export type GoalOperation = 'set' | 'pause' | 'resume' | 'limit' | 'round' | 'interrupt' | 'progress' | 'complete' | 'block';
/** Why a goal is blocked: rounds used up, a human prompt beat a queued round, the model said so, rounds kept failing. */
export type GoalBlockCode = 'round-limit' | 'prompt-rejected' | 'model' | 'round-error';

/**
 * Every durable fact of a goal, whole (decision 0029): the last `goal/change` is the goal.
 * Whether it is armed (may run rounds by itself) is never here: that is the live process's.
 */
export interface GoalSnapshot {
  objective: string;
  phase: GoalPhase;
  maxGoalRounds: number;
  roundsStarted: number;
  /** Grows by one with every snapshot of this session (across clears): a queued round names the revision it was planned under. */
  revision: number;
  operation: GoalOperation;
  /** Only when `phase` is `blocked`. */
  blocked?: { code: GoalBlockCode; message: string };
  /** The model's latest progress report. */
  note?: string;
}

export interface GoalChangeEvent extends Base<'goal/change'> {
  /** null: the goal was cleared (the tombstone; it takes the next revision). */
  goal: GoalSnapshot | null;
}

/** Who set a budget: the human, a parent delegating, or a fork told explicitly to carry one. */
export type BudgetSource = 'user' | 'delegation' | 'fork';

/**
 * A budget on this session's delegation subtree (decision 0034); last event wins, `null`
 * removes it. A fork's seed never hands one on: only an explicit `source: 'fork'` event does.
 */
export interface BudgetSetEvent extends Base<'budget/set'> {
  budget: Budget | null;
  source: BudgetSource;
}

export type WorkflowEventType = 'workflow/start' | 'workflow/phase' | 'workflow/log' | 'workflow/agent' | 'workflow/end';

/** How a workflow run ended: its script returned, failed (a code says why), was cancelled by a human, or was cut by an interrupt / close / crash. */
export type WorkflowStatus = 'completed' | 'failed' | 'cancelled' | 'interrupted';

/** `data` of each `workflow/*` type (validated at append: a script that escapes its sandbox can post anything). */
export interface WorkflowData {
  'workflow/start': {
    callId?: string;
    name: string;
    description: string;
    scriptSha256: string;
    scriptBytes: number;
    limits: { maxTotalAgents: number; concurrency: number; wallClockMs: number };
    /** The run's own budget, when the call gave one. */
    budget?: Budget;
  };
  'workflow/phase': { index: number; title: string };
  'workflow/log': { message: string; truncated?: boolean };
  'workflow/agent': { index: number; childId: string; label?: string; status: 'started' | 'done'; stopReason?: StopReason };
  'workflow/end': { status: WorkflowStatus; code?: string; error?: string; agents: number; tokens: number; resultBytes: number; logsDropped: number };
}

export interface WorkflowEvent extends Base<WorkflowEventType> {
  runId: string;
  data?: Record<string, unknown>;
}

/** How one hook run ended: it ran and let things be, blocked (exit 2 or a JSON block/deny), failed (another exit code, no start) or ran out of time. */
export type HookOutcome = 'ok' | 'blocked' | 'error' | 'timeout';
/** Where a hook was configured: the user's own settings file, the workspace's `.arbor/settings.json`, or its `.claude/settings.json`. */
export type HookSource = 'user' | 'workspace' | 'claude';

/**
 * One hook command ran (issue 23, decision 0057): which event fired it, the command as
 * configured, how it ended and the reason it gave. Shown in the transcript; not model history
 * (what a hook says to the model travels in a tool result or a `hook` message).
 */
export interface HookRunEvent extends Base<'hook/run'> {
  /** The hook event, in Claude Code's names: `PreToolUse`, `Stop`, … */
  event: string;
  command: string;
  source: HookSource;
  outcome: HookOutcome;
  /** The tool (Arbor's name) a PreToolUse / PostToolUse hook ran for. */
  tool?: string;
  exitCode?: number;
  durationMs: number;
  /** The block reason (stderr with exit 2, or the JSON `reason`), the error, or what the hook printed. */
  reason?: string;
  /** The JSON `permissionDecision` of a PreToolUse hook. */
  decision?: 'allow' | 'deny' | 'ask';
  /** Its output went past the cap and was cut. */
  truncated?: true;
}

/** One file a step changed (decision 0059): absolute path, git blob ids in the root's shadow repository (null: absent), the call that changed it. */
export interface CheckpointChange {
  path: string;
  /** The real workspace root holding it: its shadow repository holds the blobs. */
  root: string;
  before: string | null;
  after: string | null;
  callId: string;
  /** The tool that changed it (`write_file`, `edit_file`, `run_command`), or `rewind`. */
  tool: string;
}

/** A file left out of checkpoints (said once per session): ignored by the root's `.gitignore`, or over the size cap. */
export interface CheckpointSkip {
  path: string;
  reason: 'ignored' | 'too-large';
}

/**
 * What one step of a turn changed in the workspace (issue 24, decision 0059), staged with the
 * step's results. A rewind records one too (tool `rewind`, with `rewind`), so it can be undone.
 * Not model history.
 */
export interface CheckpointEvent extends Base<'checkpoint'> {
  turnId?: string;
  changes: CheckpointChange[];
  skipped?: CheckpointSkip[];
  /** Set on a rewind's own record: the point it went back to (or the rewind it undid), and which sessions' changes. */
  rewind?: { toSeq?: number; undoes?: number; subtree: boolean; sessions: string[] };
}

export type SessionEvent =
  | UserMessageEvent
  | AssistantMessageEvent
  | ToolResultEvent
  | TurnStartEvent
  | TurnEndEvent
  | RequestHeaderEvent
  | InboxAcceptedEvent
  | InboxClaimedEvent
  | InboxWithdrawnEvent
  | SandboxModeEvent
  | ApprovalPolicyEvent
  | ApprovalGrantEvent
  | SubagentDescriptorEvent
  | SubagentRemoteEvent
  | EndSeedEvent
  | CompactionStartEvent
  | CompactionSummaryEvent
  | CompactionEndEvent
  | GoalChangeEvent
  | BudgetSetEvent
  | WorkflowEvent
  | HookRunEvent
  | CheckpointEvent
  | WorktreeEvent;

export type EventType = SessionEvent['type'];

/** What a caller hands to `append`: `seq` and `at` are filled in when absent. */
export type EventDraft = SessionEvent extends infer E ? (E extends SessionEvent ? Omit<E, 'seq' | 'at'> & { seq?: number; at?: string } : never) : never;

export type EventOf<T extends EventType> = Extract<SessionEvent, { type: T }>;
