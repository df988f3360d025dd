// The host ⇄ webview wire contract (DESIGN §9). A leaf module: it imports nothing (the
// layer check holds it so), so the webview takes its types, the command ids and a few pure
// predicates from it without ever seeing core or the VS Code API (decision 0031).
// One `type` key, `noun/verb` names; requests carry an `id` and are answered once, by
// `request/done` (`RequestResults`). The host checks every incoming message against
// src/extension/validate-message.ts before a handler sees it.
// Updates are deltas (a node changed, entries appended), never whole-state dumps,
// except the one snapshot answering `webview/ready`.

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

/** A file a worktree child's apply could not merge: nothing was changed. */
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

export interface ToolCallView {
  id: string;
  name: string;
  arguments: string;
}

export type MessageSourceKind = 'user' | 'followup' | 'subagent-report' | 'subagent-settled' | 'subagent-result' | 'goal' | 'delegation' | 'hook';

/** One renderable item of a transcript (runtime-only events are not sent). */
export type TranscriptEntry =
  | { kind: 'user'; seq: number; at: string; text: string; source: MessageSourceKind; fromSession?: string; compacted?: boolean }
  | {
      kind: 'assistant';
      seq: number;
      at: string;
      text: string;
      reasoning?: string;
      toolCalls?: ToolCallView[];
      usage?: { promptTokens: number; completionTokens: number; cacheHitTokens?: number };
    }
  | { kind: 'tool'; seq: number; at: string; callId: string; name: string; content: string; isError: boolean }
  | { kind: 'turn'; seq: number; at: string; phase: 'start' | 'end'; stopReason?: StopReason; error?: string; errorCode?: string }
  | { kind: 'marker'; seq: number; at: string; text: string }
  /** One hook run (decision 0057), as one compact line: "hook PreToolUse blocked run_command: reason". */
  | { kind: 'hook'; seq: number; at: string; text: string; outcome: 'ok' | 'blocked' | 'error' | 'timeout' };

/** A pending approval, tagged with the asking session and its lineage. */
export interface ApprovalPrompt {
  requestId: string;
  sessionId: string;
  /** The asking session first, then its ancestors. */
  lineage: string[];
  tool: string;
  summary: string;
  reason: string;
  /** What "allow for this conversation" would cover (paths relative to the workspace); absent when it is not offered. */
  grant?: GrantScopeView;
  /** Why "allow for this conversation" is not offered, when the card should say so. */
  noGrant?: string;
  /** What will happen: a unified diff against the current file, or a new file's content. */
  preview?: { kind: 'diff' | 'content'; text: string };
  /** False: a denial's reason would reach nobody (an ACP agent hears only `reject_once`), so none is asked for. */
  reasonHeard?: false;
}

/** The scope of a grant: a command prefix (`npm test`) or one exact real path. */
export interface GrantScopeView {
  kind: 'command-prefix' | 'path';
  value: string;
}

/** One MCP server as the panel lists it (decision 0055): where it came from, its state, why, its tools. */
export interface McpServerView {
  name: string;
  /** `workspace` (.mcp.json), `vscode` (.vscode/mcp.json), `user` (the setting), `cli`, `acp`. */
  source: string;
  phase: 'needs-allow' | 'starting' | 'ready' | 'restarting' | 'failed' | 'stopped';
  why?: string;
  toolCount: number;
}

/** An active "allow for this conversation" grant of a session. */
export interface GrantView {
  grantId: string;
  tool: string;
  scope: GrantScopeView;
  at: string;
}

/**
 * The project files in effect (decision 0056): instruction files (AGENTS.md / CLAUDE.md, the
 * user's), the agents defined in files, and the files that are not agents with why. Paths are
 * workspace-relative (the user's files: "~/…").
 */
export interface ProjectFilesView {
  instructions: { path: string; level: 'user' | 'workspace'; bytes: number; included: number }[];
  skipped: { path: string; why: string }[];
  /** Bytes the size cap left out of the prompt (0: none). */
  cutBytes: number;
  maxBytes: number;
  agents: { name: string; description: string; path: string; tools?: string[]; model?: string; sandbox?: SandboxMode }[];
  errors: { path: string; line: number; message: string }[];
}

export interface PanelSettings {
  sandbox: SandboxMode;
  approval: ApprovalPolicy;
  /** Workspace Trust: restricted mode makes Arbor read-only with no commands. */
  restricted: boolean;
  hasApiKey: boolean;
  /** What answers: `demo` shows how to switch to a real endpoint, `none` how to set a key. */
  modelSource: ModelSource;
  model: string;
  /** Example prompts an empty panel offers as buttons (the demo lists its scenes; `arbor.chat.examplePrompts`). */
  examplePrompts?: ExamplePrompt[];
  /** Whether commands run in an OS sandbox here (absent until probed): the mode indicator warns when none can start. */
  osSandbox?: OsSandboxView;
}

/** An empty panel's button: `text` sent as a new conversation, or (with `goalRounds`) set as a new conversation's goal. */
export interface ExamplePrompt {
  text: string;
  /** A goal button: the new conversation's goal, armed, with this round limit. */
  goalRounds?: number;
}

export interface OsSandboxView {
  active: boolean;
  /** One sentence: what confines commands, or why nothing does and what to install. */
  detail: string;
  /** Whether sandboxed commands may use the network (`arbor.policy.network`). */
  network: boolean;
}

/** A message accepted by a session's inbox that has not run yet (decision 0011). */
export interface QueuedMessageView {
  messageId: string;
  text: string;
  source: MessageSourceKind;
  /** When it was accepted. */
  at: string;
}

/** Streamed text of the reply in progress, not yet in the log (decision 0010). */
export interface PartialReply {
  text: string;
  reasoning: string;
}

/** What a rewind brings back: the files, the conversation (a fork at that point), or both (decision 0059). */
export type RewindWhat = 'files' | 'conversation' | 'both';
export type RewindChoiceView = 'restore' | 'keep';

/** One file of a rewind's preview: what happens to it, its diff (current → restored), and a conflict that needs the human's choice. */
export interface RewindFileView {
  /** Relative to its workspace folder. */
  path: string;
  action: 'restore' | 'remove' | 'create';
  diff: string;
  conflict?: { reason: 'changed-by-other' | 'edited-since' | 'unavailable'; text: string };
}

/** A rewind's preview: nothing is written until it is applied with its `token`. */
export interface RewindPreview {
  token: string;
  /** An undo of an earlier rewind. */
  undo: boolean;
  files: RewindFileView[];
}

// ── webview → host ────────────────────────────────────────────────────────────

export type WebviewToHost =
  /** Mounted and listening; the host answers with a snapshot. A transcript tab names its session. */
  | { type: 'webview/ready'; view: 'panel' | 'transcript'; sessionId?: string }
  /** The user selected a tree node: the chat shows that session. */
  | { type: 'session/select'; sessionId: string }
  /** Start a new conversation: nothing is stored until its first message (which also titles it). */
  | { type: 'session/new'; id: string }
  /** Open the sandbox / approval picker, for this session when given (the mode indicator beside the input). */
  | { type: 'policy/pick'; sessionId?: string }
  /** Send text to a session (a child goes through the runtime's follow-up); no sessionId = a new conversation. */
  | { type: 'chat/send'; id: string; sessionId?: string; text: string }
  /** Stop the session's running turn (its inbox is kept). */
  | { type: 'agent/interrupt'; id: string; sessionId: string }
  /** A human's "Cancel workflow" on a run's node: the script stops, its running agents are cancelled. */
  | { type: 'workflow/cancel'; id: string; runId: string }
  /** Fork a session from the end of the turn holding `seq`. */
  | { type: 'session/fork'; id: string; sessionId: string; seq: number }
  /** Preview a rewind of the files `sessionId` (with `subtree`, and its descendants) changed after `seq`; with `undo`, of undoing the rewind recorded at `seq`. Writes nothing. */
  | { type: 'rewind/preview'; id: string; sessionId: string; seq: number; subtree: boolean; undo?: boolean }
  /** Apply a previewed rewind (`token`; `choices` per file of the preview, a conflict needs one), fork the conversation at `seq`, or both. */
  | { type: 'rewind/apply'; id: string; sessionId: string; seq: number; what: RewindWhat; token?: string; choices: (RewindChoiceView | null)[] }
  /** Open (or reveal) a session's transcript in an editor tab. */
  | { type: 'transcript/open'; sessionId: string }
  /** Earlier entries of a long transcript (paging backwards). */
  | { type: 'transcript/more'; id: string; sessionId: string; beforeSeq: number }
  /** `remember` (with allow): allow for this conversation; `reason` (with deny): reaches the model. */
  | { type: 'approval/answer'; requestId: string; decision: 'allow' | 'deny'; remember?: boolean; reason?: string }
  /** Run the failed turn ending at `seq` again: its user message is sent once more. */
  | { type: 'chat/retry'; id: string; sessionId: string; seq: number }
  /** A notice's button: run one of Arbor's commands (set the key, open the model settings). */
  | { type: 'command/run'; command: HostCommand }
  /** Cancel a queued message before it runs (durable: it never runs, even after a restart). */
  | { type: 'queue/withdraw'; id: string; sessionId: string; messageId: string }
  /** "Send now": a session waiting after an interrupt works through its queue (FIFO, from the head). */
  | { type: 'queue/run'; id: string; sessionId: string }
  /** Revoke an "allow for this conversation" grant of a session. */
  | { type: 'approval/revoke'; id: string; sessionId: string; grantId: string }
  /** A human's budget on a session's subtree (`null` removes it); checked again by the host. */
  | { type: 'budget/set'; id: string; sessionId: string; budget: { maxTokens?: number; maxCostUsd?: number } | null }
  /** "Set Budget" on a node: the host asks for the amount (an input box). */
  | { type: 'budget/pick'; sessionId: string }
  /** Goals (a human action: set and resume arm the goal in this window). */
  | { type: 'goal/set'; id: string; sessionId: string; objective: string; maxRounds?: number }
  /** A goal on a new conversation titled by its objective (an example prompt's goal button). */
  | { type: 'goal/start'; id: string; objective: string; maxRounds: number }
  | { type: 'goal/pause'; id: string; sessionId: string }
  | { type: 'goal/resume'; id: string; sessionId: string }
  | { type: 'goal/clear'; id: string; sessionId: string }
  | { type: 'goal/limit'; id: string; sessionId: string; maxRounds: number }
  /** Start a new conversation with an agent defined in a file (its persona, tools, model; its sandbox only narrows). */
  | { type: 'agent/start'; id: string; agent: string }
  /** A worktree child's changes in VS Code's diff editor (decision 0060). */
  | { type: 'worktree/review'; id: string; sessionId: string }
  /** Merge a worktree child's changes into the workspace's files; a conflict changes nothing. */
  | { type: 'worktree/apply'; id: string; sessionId: string }
  | { type: 'worktree/discard'; id: string; sessionId: string }
  | { type: 'worktree/keep'; id: string; sessionId: string }
  /** Remove every orphaned worktree the panel's notice lists. */
  | { type: 'worktree/clean'; id: string }
  /** "Try N ways…" on a message (decision 0061): the host asks how many ways and, optionally, a model or agent per way. */
  | { type: 'bestof/start'; id: string; sessionId: string; seq: number }
  | { type: 'bestof/view'; id: string; group: string }
  /** "Apply this one": part 2's apply of that way into the conversation's files; a conflict changes nothing. */
  | { type: 'bestof/choose'; id: string; group: string; sessionId: string }
  /** Discard every other way's worktree (after one was applied). */
  | { type: 'bestof/discard-others'; id: string; group: string; sessionId: string };

// ── host → webview ────────────────────────────────────────────────────────────

export type HostToWebview =
  /** Full state, sent once per `webview/ready`; later updates are deltas. */
  | {
      type: 'state/snapshot';
      nodes: TreeNode[];
      selected?: string;
      settings: PanelSettings;
      approvals: ApprovalPrompt[];
    }
  | { type: 'tree/node'; node: TreeNode }
  | { type: 'tree/removed'; id: string }
  /** The transcript of a session from `firstSeq` (the newest page), replacing what was shown. */
  | { type: 'transcript/reset'; sessionId: string; entries: TranscriptEntry[]; hasMore: boolean; partial?: PartialReply }
  | { type: 'transcript/append'; sessionId: string; entries: TranscriptEntry[] }
  /** Streamed text not yet in the log (throttled); cleared by the next assistant entry. */
  | { type: 'stream/delta'; sessionId: string; kind: 'text' | 'reasoning'; delta: string }
  | { type: 'settings/changed'; settings: PanelSettings }
  | { type: 'approval/requested'; prompt: ApprovalPrompt }
  | { type: 'approval/resolved'; requestId: string; decision: 'allow' | 'deny' }
  /** The active grants of a session (sent with its transcript and whenever they change). */
  | { type: 'grants/list'; sessionId: string; grants: GrantView[] }
  /** The MCP servers and their state, whole (a handful of rows): on ready and whenever one moves. */
  | { type: 'mcp/servers'; servers: McpServerView[] }
  /** Put the keyboard focus in the chat input (the "focus chat input" keybinding). */
  | { type: 'input/focus' }
  /** A new conversation is being started ("+"): nothing selected, the input takes the focus; it is created at its first message. */
  | { type: 'draft/start' }
  /** "Rewind…" from a message's context menu: the view showing the session opens its rewind at `seq` (decision 0059). */
  | { type: 'rewind/open'; sessionId: string; seq: number }
  /** The host selected a session (a fork was created, a tab opened). */
  | { type: 'session/selected'; sessionId: string }
  /** The answer to a request (a message carrying `id`): see `RequestResults`. */
  | RequestDone
  /**
   * The session's queued messages, whole (a short list). `queued`: behind a running turn, they
   * run on their own; `waiting`: the last turn was interrupted (or the session is not loaded),
   * they wait for "Send now" or the next message, and run before it.
   */
  | { type: 'queue/changed'; sessionId: string; state: 'queued' | 'waiting'; messages: QueuedMessageView[] }
  /** A workflow run tab's content; `null` with what happened and what to do when it cannot be shown (its conversation was deleted). */
  | { type: 'workflow/view'; nodeId: string; view: WorkflowRunView }
  | { type: 'workflow/view'; nodeId: string; view: null; problem: string }
  /** Worktrees nothing live owns (decision 0060): sent to the panel after the snapshot and after a clean; empty: none. */
  | { type: 'worktree/orphans'; orphans: WorktreeOrphanView[] }
  /** The project files in effect: sent after the snapshot and whenever one changes. */
  | { type: 'project/files'; files: ProjectFilesView }
  /** The host's answer to a message that failed validation. */
  | { type: 'message/rejected'; code: 'BAD_MESSAGE'; detail: string };

// ── requests and their answers ────────────────────────────────────────────────

/**
 * The requests (the webview's messages that carry an `id`) and what the success answer to each
 * carries besides `{ type: 'request/done', id, ok: true }`. Every request is answered once, by
 * `request/done`: the webview's `request()` resolves with this, the host's request handlers
 * return it. A failure answers `ok: false` with the error's text and its code, when it had one.
 */
export interface RequestResults {
  /** The new conversation's session (created by its first message). */
  'chat/send': { sessionId: string };
  'session/new': NoResult;
  'agent/interrupt': { sessionId: string };
  'workflow/cancel': NoResult;
  /** The fork. */
  'session/fork': { sessionId: string };
  'rewind/preview': { preview: RewindPreview };
  /** Files written back and left; `undoSeq`: the rewind's record, for "Undo rewind"; `forkId`: the conversation's fork. */
  'rewind/apply': { restored: number; kept: number; undoSeq?: number; forkId?: string };
  /** Older entries (the page before `beforeSeq`). */
  'transcript/more': { sessionId: string; entries: TranscriptEntry[]; hasMore: boolean };
  'chat/retry': { sessionId: string };
  'queue/withdraw': { sessionId: string };
  'queue/run': { sessionId: string };
  'approval/revoke': { sessionId: string };
  'goal/set': { sessionId: string };
  /** The new conversation. */
  'goal/start': { sessionId: string };
  'budget/set': { sessionId: string };
  'goal/pause': { sessionId: string };
  'goal/resume': { sessionId: string };
  'goal/clear': { sessionId: string };
  'goal/limit': { sessionId: string };
  /** The new conversation. */
  'agent/start': { sessionId: string };
  /** How many files the diff editor shows. */
  'worktree/review': { files: number };
  /** `applied: false`: the conflicts, and nothing was changed. */
  'worktree/apply': { applied: boolean; files: string[]; conflicts: WorktreeConflictView[] };
  'worktree/discard': NoResult;
  /** The branch its work stays on. */
  'worktree/keep': { branch: string };
  /** How many orphaned worktrees were removed. */
  'worktree/clean': { cleaned: number };
  /** The ways started (none: the human cancelled the questions). */
  'bestof/start': { group?: string; ways: string[] };
  'bestof/view': WaysView;
  'bestof/choose': { applied: boolean; files: string[]; conflicts: WorktreeConflictView[] };
  'bestof/discard-others': { discarded: number };
}
export type NoResult = Record<never, never>;
export type RequestType = keyof RequestResults;
export type RequestMessage<K extends RequestType = RequestType> = Extract<WebviewToHost, { type: K }>;
/** A request as the webview writes it: `request()` adds the id. */
export type RequestBody<K extends RequestType> = K extends RequestType ? Omit<RequestMessage<K>, 'id'> : never;

/** The success answer to a request of type `K`. */
export type RequestSucceeded<K extends RequestType = RequestType> = K extends RequestType
  ? { type: 'request/done'; id: string; ok: true } & RequestResults[K]
  : never;
export interface RequestFailed {
  type: 'request/done';
  id: string;
  ok: false;
  /** What went wrong, in words. */
  error: string;
  /** The error's code (`HarnessError`, `StoreError`, `GoalError`, …), when it had one: the panel turns it into what to do. */
  code?: string;
}
export type RequestDone<K extends RequestType = RequestType> = RequestSucceeded<K> | RequestFailed;

/** Holds at compile time: the requests are exactly the messages with an `id`. */
export const REQUESTS_ARE_THE_MESSAGES_WITH_AN_ID: Same<Extract<WebviewToHost, { id: string }>['type'], RequestType> = true;
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

// ── commands and context menus ────────────────────────────────────────────────

/** Every command Arbor contributes: package.json lists the same ids (a test holds the two equal). */
export const COMMAND_IDS = [
  'arbor.newConversation',
  'arbor.fork',
  'arbor.rewind',
  'arbor.tryWays',
  'arbor.sendMessage',
  'arbor.interrupt',
  'arbor.cancelWorkflow',
  'arbor.openTranscript',
  'arbor.openEventLog',
  'arbor.setApiKey',
  'arbor.setSandbox',
  'arbor.exportSession',
  'arbor.deleteSession',
  'arbor.compact',
  'arbor.copyId',
  'arbor.focusInput',
  'arbor.setGoal',
  'arbor.pauseGoal',
  'arbor.resumeGoal',
  'arbor.clearGoal',
  'arbor.setBudget',
  'arbor.startAgent',
] as const;
export type CommandId = (typeof COMMAND_IDS)[number];

/**
 * The `data-vscode-context` of a tree node: VS Code reads it on right-click, the `when`
 * clauses of package.json's `webview/context` menus test its keys, and the command chosen
 * receives it as its argument.
 */
export interface TreeNodeMenuContext {
  webviewSection: 'treeNode';
  arborSessionId: string;
  /** A turn is in progress: it can be interrupted. */
  arborRunning: boolean;
  /** It can take another message (everything but a one-shot child). */
  arborContinuable: boolean;
  arborCompactable: boolean;
  arborGoalOwner: boolean;
  /** Its goal's phase, when it has one (picks Pause / Resume / Clear). */
  arborGoalPhase?: GoalPhase;
  preventDefaultContextMenuItems: true;
}

/** A workflow run's node: it is no session, its menu offers Cancel Workflow. */
export interface WorkflowNodeMenuContext {
  webviewSection: 'workflowNode';
  arborRunId: string;
  arborRunning: boolean;
  preventDefaultContextMenuItems: true;
}

/** A chat message: `arborView` lets "Fork Conversation" open the fork where the fork button would. */
export interface ChatMessageMenuContext {
  webviewSection: 'chatMessage';
  arborSessionId: string;
  arborSeq: number;
  arborView: 'panel' | 'transcript';
  preventDefaultContextMenuItems: true;
}

export type MenuContext = TreeNodeMenuContext | WorkflowNodeMenuContext | ChatMessageMenuContext;

/** What a command receives: the context of the menu it was chosen in, nothing from the palette. */
export type CommandArgs = Partial<
  Pick<TreeNodeMenuContext, 'arborSessionId'> & Pick<ChatMessageMenuContext, 'arborSeq' | 'arborView'> & Pick<WorkflowNodeMenuContext, 'arborRunId'>
>;

/** A conversation you own (a root or a fork, not a subagent): only these hold goals. */
export function ownsGoals(node: Pick<TreeNode, 'origin' | 'mode'>): boolean {
  return node.origin !== 'subagent' && node.mode === undefined;
}

/** What Compact is offered for: a conversation you own that has had a turn. */
export function isCompactable(node: Pick<TreeNode, 'origin' | 'mode' | 'lastStopReason'>): boolean {
  return ownsGoals(node) && node.lastStopReason !== undefined;
}
