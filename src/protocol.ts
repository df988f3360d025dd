// The host ⇄ webview wire contract (DESIGN §9). A leaf module: it imports nothing, so
// the webview type-checks against it without ever seeing core or the VS Code API.
// One `type` key, `noun/verb` names; requests carry an `id` and replies echo it.
// Updates are deltas (a node changed, entries appended), never whole-state dumps,
// except the one snapshot answering `webview/ready`.

// ── shared shapes ─────────────────────────────────────────────────────────────

export type Origin = 'user' | 'subagent' | 'fork';
export type NodeStatus = 'running' | 'waiting' | 'settled' | 'failed' | 'interrupted' | 'idle';
export type StopReason = 'completed' | 'interrupted' | 'error' | 'max-tokens' | 'cancelled';
export type SandboxMode = 'read-only' | 'workspace-write' | 'full-access';
export type ApprovalPolicy = 'ask' | 'never';

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
  /** Actions refused for want of approval (decision 0015); absent when none. */
  refused?: number;
  /** The session's own policy switches (last event wins); absent fields follow the panel defaults. */
  policy?: { sandbox?: SandboxMode; approval?: ApprovalPolicy };
  reports: number;
  /** Slot for a goal phase ('active', 'paused', 'blocked', 'complete'); empty until goals exist. */
  goalPhase?: string;
  createdAt: string;
}

export interface ToolCallView {
  id: string;
  name: string;
  arguments: string;
}

export type MessageSourceKind = 'user' | 'followup' | 'subagent-report' | 'subagent-settled' | 'goal' | 'delegation';

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
  | { kind: 'turn'; seq: number; at: string; phase: 'start' | 'end'; stopReason?: StopReason; error?: string }
  | { kind: 'marker'; seq: number; at: string; text: string };

/** A pending approval, tagged with the asking session and its lineage. */
export interface ApprovalPrompt {
  requestId: string;
  sessionId: string;
  /** The asking session first, then its ancestors. */
  lineage: string[];
  tool: string;
  summary: string;
  reason: string;
}

export interface PanelSettings {
  sandbox: SandboxMode;
  approval: ApprovalPolicy;
  /** Workspace Trust: restricted mode makes Arbor read-only with no commands. */
  restricted: boolean;
  hasApiKey: boolean;
  model: string;
  /** Example prompts an empty panel offers as buttons (the demo lists its scenes; `arbor.chat.examplePrompts`). */
  examplePrompts?: string[];
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
  /** Fork a session from the end of the turn holding `seq`. */
  | { type: 'session/fork'; id: string; sessionId: string; seq: number }
  /** Open (or reveal) a session's transcript in an editor tab. */
  | { type: 'transcript/open'; sessionId: string }
  /** Earlier entries of a long transcript (paging backwards). */
  | { type: 'transcript/more'; id: string; sessionId: string; beforeSeq: number }
  | { type: 'approval/answer'; requestId: string; decision: 'allow' | 'deny' };

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
  | { type: 'transcript/reset'; sessionId: string; entries: TranscriptEntry[]; hasMore: boolean }
  /** Older entries, answering `transcript/more`. */
  | { type: 'transcript/page'; id: string; sessionId: string; entries: TranscriptEntry[]; hasMore: boolean }
  | { type: 'transcript/append'; sessionId: string; entries: TranscriptEntry[] }
  /** Streamed text not yet in the log (throttled); cleared by the next assistant entry. */
  | { type: 'stream/delta'; sessionId: string; kind: 'text' | 'reasoning'; delta: string }
  | { type: 'settings/changed'; settings: PanelSettings }
  | { type: 'approval/requested'; prompt: ApprovalPrompt }
  | { type: 'approval/resolved'; requestId: string; decision: 'allow' | 'deny' }
  /** Put the keyboard focus in the chat input (the "focus chat input" keybinding). */
  | { type: 'input/focus' }
  /** A new conversation is being started ("+"): nothing selected, the input takes the focus; it is created at its first message. */
  | { type: 'draft/start' }
  /** The host selected a session (a fork was created, a tab opened). */
  | { type: 'session/selected'; sessionId: string }
  /** Answer to a request carrying `id`. */
  | { type: 'request/done'; id: string; ok: true; sessionId?: string }
  | { type: 'request/done'; id: string; ok: false; error: string }
  /** The host's answer to a message that failed validation. */
  | { type: 'message/rejected'; code: 'BAD_MESSAGE'; detail: string };

// ── validation (the host checks every incoming message) ───────────────────────

type Validators<U extends { type: string }> = {
  [K in U['type']]: (x: Record<string, unknown>) => boolean;
};

const str = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && v.length <= 1_000_000;
const id = (v: unknown): v is string => typeof v === 'string' && /^[A-Za-z0-9._-]{1,128}$/.test(v);
const seq = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

// One validator per message type: adding a variant without one is a compile error.
const webviewToHostValidators: Validators<WebviewToHost> = {
  'webview/ready': (x) => (x.view === 'panel' || x.view === 'transcript') && (x.sessionId === undefined || id(x.sessionId)),
  'session/select': (x) => id(x.sessionId),
  'session/new': (x) => str(x.id),
  'policy/pick': (x) => x.sessionId === undefined || id(x.sessionId),
  'chat/send': (x) => str(x.id) && str(x.text) && (x.sessionId === undefined || id(x.sessionId)),
  'agent/interrupt': (x) => str(x.id) && id(x.sessionId),
  'session/fork': (x) => str(x.id) && id(x.sessionId) && seq(x.seq),
  'transcript/open': (x) => id(x.sessionId),
  'transcript/more': (x) => str(x.id) && id(x.sessionId) && seq(x.beforeSeq),
  'approval/answer': (x) => str(x.requestId) && (x.decision === 'allow' || x.decision === 'deny'),
};

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

/** True when `x` is a well-formed message the webview may send. */
export function isWebviewToHost(x: unknown): x is WebviewToHost {
  if (!isRecord(x) || typeof x.type !== 'string') return false;
  if (!Object.prototype.hasOwnProperty.call(webviewToHostValidators, x.type)) return false;
  return webviewToHostValidators[x.type as WebviewToHost['type']](x);
}

/** Why a message was refused, for the error reply and the log. */
export function describeInvalid(x: unknown): string {
  if (!isRecord(x)) return 'not an object';
  if (typeof x.type !== 'string') return 'no string "type"';
  if (!Object.prototype.hasOwnProperty.call(webviewToHostValidators, x.type)) return `unknown type "${x.type}"`;
  return `fields of "${x.type}" are missing or malformed`;
}
