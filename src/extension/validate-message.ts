// The host checks every message a webview sends before a handler sees it (DESIGN §9): one
// validator per message type of src/protocol.ts, so a variant without one is a compile error.
import type { SelectionBound, WebviewToHost } from '../protocol';

type Validators<U extends { type: string }> = {
  [K in U['type']]: (x: Record<string, unknown>) => boolean;
};

const str = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && v.length <= 1_000_000;
const id = (v: unknown): v is string => typeof v === 'string' && /^[A-Za-z0-9._-]{1,128}$/.test(v);
const seq = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
/** The panel selection a message was composed under (decision 0120): absent, or a number the host gave. */
const sel = (x: Record<string, unknown>): boolean => x.selection === undefined || seq(x.selection);

// One validator per message type: adding a variant without one is a compile error.
const webviewToHostValidators: Validators<WebviewToHost> = {
  'webview/ready': (x) => (x.view === 'panel' || x.view === 'transcript') && (x.sessionId === undefined || id(x.sessionId)),
  // A notice, not a request (no row in ACTS_ON_SELECTION): its number is checked here; a restore needs one.
  'session/select': (x) => id(x.sessionId) && sel(x) && (x.restored === undefined || (x.restored === true && x.selection !== undefined)),
  'session/new': (x) => str(x.id),
  'policy/pick': (x) => x.sessionId === undefined || id(x.sessionId),
  'chat/send': (x) => str(x.id) && str(x.text) && (x.sessionId === undefined || id(x.sessionId)),
  'agent/interrupt': (x) => str(x.id) && id(x.sessionId),
  'workflow/cancel': (x) => str(x.id) && id(x.runId),
  'session/fork': (x) => str(x.id) && id(x.sessionId) && seq(x.seq),
  'rewind/preview': (x) =>
    str(x.id) && id(x.sessionId) && seq(x.seq) && typeof x.subtree === 'boolean' && (x.undo === undefined || typeof x.undo === 'boolean'),
  'rewind/apply': (x) =>
    str(x.id) &&
    id(x.sessionId) &&
    seq(x.seq) &&
    (x.what === 'files' || x.what === 'conversation' || x.what === 'both') &&
    (x.token === undefined || id(x.token)) &&
    Array.isArray(x.choices) &&
    x.choices.length <= 10_000 &&
    x.choices.every((c) => c === null || c === 'restore' || c === 'keep'),
  'transcript/open': (x) => id(x.sessionId),
  'transcript/more': (x) => str(x.id) && id(x.sessionId) && seq(x.beforeSeq),
  'approval/answer': (x) =>
    str(x.requestId) &&
    (x.decision === 'allow' || x.decision === 'deny') &&
    (x.remember === undefined || typeof x.remember === 'boolean') &&
    (x.reason === undefined || (typeof x.reason === 'string' && x.reason.length <= 2000)),
  'approval/revoke': (x) => str(x.id) && id(x.sessionId) && str(x.grantId),
  'chat/retry': (x) => str(x.id) && id(x.sessionId) && seq(x.seq),
  'command/run': (x) => x.command === 'setApiKey' || x.command === 'openModelSettings',
  'queue/withdraw': (x) => str(x.id) && id(x.sessionId) && id(x.messageId),
  'queue/run': (x) => str(x.id) && id(x.sessionId),
  // Round limits are range-checked by the goal service (its error names the range).
  // The amounts are checked by the host with the core's rules (its error says what is wrong).
  'budget/set': (x) => str(x.id) && id(x.sessionId) && (x.budget === null || (typeof x.budget === 'object' && x.budget !== null && !Array.isArray(x.budget))),
  'budget/pick': (x) => id(x.sessionId),
  'goal/set': (x) =>
    str(x.id) &&
    id(x.sessionId) &&
    typeof x.objective === 'string' &&
    x.objective.length <= 100_000 &&
    (x.maxRounds === undefined || typeof x.maxRounds === 'number'),
  // A new conversation is made only for a goal that can be set: the limit is checked here.
  'goal/start': (x) =>
    str(x.id) &&
    typeof x.objective === 'string' &&
    x.objective.trim() !== '' &&
    x.objective.length <= 100_000 &&
    Number.isInteger(x.maxRounds) &&
    (x.maxRounds as number) >= 1 &&
    (x.maxRounds as number) <= 1000,
  'goal/pause': (x) => str(x.id) && id(x.sessionId),
  'goal/resume': (x) => str(x.id) && id(x.sessionId),
  'goal/clear': (x) => str(x.id) && id(x.sessionId),
  'goal/limit': (x) => str(x.id) && id(x.sessionId) && typeof x.maxRounds === 'number',
  'worktree/review': (x) => str(x.id) && id(x.sessionId),
  'worktree/apply': (x) => str(x.id) && id(x.sessionId),
  'worktree/discard': (x) => str(x.id) && id(x.sessionId),
  'worktree/keep': (x) => str(x.id) && id(x.sessionId),
  'worktree/clean': (x) => str(x.id),
  'bestof/start': (x) => str(x.id) && id(x.sessionId) && typeof x.seq === 'number' && Number.isSafeInteger(x.seq) && x.seq >= 0,
  'bestof/view': (x) => str(x.id) && typeof x.group === 'string' && /^g[0-9a-f]{8}$/.test(x.group),
  'bestof/choose': (x) => str(x.id) && typeof x.group === 'string' && /^g[0-9a-f]{8}$/.test(x.group) && id(x.sessionId),
  'bestof/discard-others': (x) => str(x.id) && typeof x.group === 'string' && /^g[0-9a-f]{8}$/.test(x.group) && id(x.sessionId),
  'agent/start': (x) => str(x.id) && typeof x.agent === 'string' && /^[a-z0-9][a-z0-9_-]{0,63}$/.test(x.agent),
  'placement/start': (x) =>
    str(x.id) &&
    id(x.sessionId) &&
    typeof x.placement === 'string' &&
    /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/.test(x.placement) &&
    str(x.prompt) &&
    x.prompt.trim() !== '',
};

/**
 * The requests that act on "the selected session" when a panel composes them, and so carry the
 * selection's number (decision 0120): the host refuses one composed under a selection that has
 * since moved to another session. The type makes this table agree with the messages' fields.
 */
export const ACTS_ON_SELECTION: SelectionBound = {
  'chat/send': 'typed',
  'agent/interrupt': 'action',
  'queue/withdraw': 'action',
  'queue/run': 'action',
  'goal/pause': 'action',
  'goal/resume': 'action',
  'goal/clear': 'action',
  'goal/limit': 'action',
  'session/new': false,
  'workflow/cancel': false,
  // Fork and Rewind… from a message of the shown conversation (its dialog shows only while the chat does).
  'session/fork': 'action',
  'rewind/preview': 'action',
  'rewind/apply': 'action',
  'transcript/more': false,
  'chat/retry': 'action',
  'approval/revoke': false,
  'goal/set': false,
  'goal/start': false,
  'budget/set': false,
  'agent/start': false,
  // The worktree bar's actions on the shown child (a Ways comparison's name a way: no selection).
  'worktree/review': 'action',
  'worktree/apply': 'action',
  'worktree/discard': 'action',
  'worktree/keep': 'action',
  'worktree/clean': false,
  'bestof/start': false,
  'bestof/view': false,
  'bestof/choose': false,
  'bestof/discard-others': false,
  'placement/start': false,
};

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

/** Whether messages of this type carry the selection they were composed under (a row of `ACTS_ON_SELECTION` that is not false). */
function selectionBound(type: string): boolean {
  return Object.hasOwn(ACTS_ON_SELECTION, type) && ACTS_ON_SELECTION[type as keyof typeof ACTS_ON_SELECTION] !== false;
}

/** True when `x` is a well-formed message the webview may send. */
export function isWebviewToHost(x: unknown): x is WebviewToHost {
  if (!isRecord(x) || typeof x.type !== 'string') return false;
  if (!Object.hasOwn(webviewToHostValidators, x.type)) return false;
  // The selection's number is checked here once for every selection-bound request, not by each validator.
  if (selectionBound(x.type) && !sel(x)) return false;
  return webviewToHostValidators[x.type as WebviewToHost['type']](x);
}

/** Why a message was refused, for the error reply and the log. */
export function describeInvalid(x: unknown): string {
  if (!isRecord(x)) return 'not an object';
  if (typeof x.type !== 'string') return 'no string "type"';
  // Echoed into the log and the reply: a hostile view's type is cut, never copied whole (it may be megabytes).
  if (!Object.hasOwn(webviewToHostValidators, x.type)) return `unknown type "${x.type.length > 64 ? `${x.type.slice(0, 64)}…` : x.type}"`;
  return `fields of "${x.type}" are missing or malformed`;
}
