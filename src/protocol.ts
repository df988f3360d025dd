// The host ⇄ webview wire contract. A leaf module: it imports nothing, so the
// webview can type-check against it without ever seeing core or the VS Code API.

/** What the webview needs to draw one node of the delegation tree. */
export interface SessionSummary {
  id: string;
  title?: string;
  origin: 'user' | 'subagent' | 'fork';
  /** Absent for a root conversation. */
  parentSession?: string;
  delegationDepth?: number;
}

// ── webview → host ────────────────────────────────────────────────────────────

/** The webview has mounted and listens; the host answers with a snapshot. */
export interface WebviewReady {
  type: 'webview/ready';
}

export type WebviewToHost = WebviewReady;

// ── host → webview ────────────────────────────────────────────────────────────

/** Full state, sent once per `webview/ready`; later updates are deltas. */
export interface StateSnapshot {
  type: 'state/snapshot';
  sessions: SessionSummary[];
}

/** The host's answer to a message that failed validation. */
export interface MessageRejected {
  type: 'message/rejected';
  code: 'BAD_MESSAGE';
  detail: string;
}

export type HostToWebview = StateSnapshot | MessageRejected;

// ── validation ────────────────────────────────────────────────────────────────

type Validators<U extends { type: string }> = {
  [K in U['type']]: (x: Record<string, unknown>) => boolean;
};

// One validator per message type: adding a variant to the union without one
// here is a compile error.
const webviewToHostValidators: Validators<WebviewToHost> = {
  'webview/ready': () => true,
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
