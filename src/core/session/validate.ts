import { isBudget } from './budget';
import { SessionValidationError } from './errors';
import type { EventType, SessionHeader } from './events';

// Field rules per event type, as data: one entry per type, no switch. Each rule
// checks presence and shape only; ordering rules (turns, calls) live in the session.

type Check = (v: unknown) => boolean;
interface FieldRule {
  field: string;
  optional?: boolean;
  check: Check;
  expect: string;
}

const str: Check = (v) => typeof v === 'string';
const nonEmpty: Check = (v) => typeof v === 'string' && v.length > 0;
const bool: Check = (v) => typeof v === 'boolean';
const natural: Check = (v) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const oneOf =
  (...values: string[]): Check =>
  (v) =>
    typeof v === 'string' && values.includes(v);
const record = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const absolute: Check = (v) => typeof v === 'string' && v.length > 0 && (v.startsWith('/') || /^[A-Za-z]:[\\/]/.test(v));
const strings: Check = (v) => Array.isArray(v) && v.every((x) => typeof x === 'string');

const SOURCE_KINDS = ['user', 'followup', 'subagent-report', 'subagent-settled', 'subagent-result', 'goal', 'delegation', 'hook'];
const source: Check = (v) => record(v) && oneOf(...SOURCE_KINDS)((v as { kind: unknown }).kind);
const toolCalls: Check = (v) =>
  Array.isArray(v) &&
  v.every((c) => record(c) && nonEmpty(c.id) && nonEmpty(c.name) && str(c.arguments)) &&
  (v.length < 2 || new Set(v.map((c: { id: string }) => c.id)).size === v.length);
const usage: Check = (v) =>
  record(v) &&
  natural(v.promptTokens) &&
  natural(v.completionTokens) &&
  (v.cacheHitTokens === undefined || natural(v.cacheHitTokens)) &&
  (v.cacheMissTokens === undefined || natural(v.cacheMissTokens)) &&
  (v.costUsd === undefined || (typeof v.costUsd === 'number' && Number.isFinite(v.costUsd) && v.costUsd >= 0));
const range: Check = (v) => record(v) && natural(v.fromSeq) && natural(v.toSeq) && (v.fromSeq as number) <= (v.toSeq as number);

const grantScope: Check = (v) => record(v) && oneOf('command-prefix', 'path')(v.kind) && nonEmpty(v.value);

/** Bounds of a goal snapshot (decision 0029): `maxGoalRounds` is a whole number 1..maxRounds. */
export const GOAL_LIMITS = { maxRounds: 1000, objectiveChars: 4000, noteChars: 2000, messageChars: 1000 } as const;
const GOAL_PHASES = ['active', 'paused', 'blocked', 'complete'];
const GOAL_OPERATIONS = ['set', 'pause', 'resume', 'limit', 'round', 'interrupt', 'progress', 'complete', 'block'];
const GOAL_BLOCK_CODES = ['round-limit', 'prompt-rejected', 'model', 'round-error'];
const text =
  (max: number): Check =>
  (v) =>
    typeof v === 'string' && v.length > 0 && v.length <= max;
const positive: Check = (v) => natural(v) && (v as number) >= 1;
/** A whole goal snapshot: phase enum, counts in range, `blocked` exactly when the phase is blocked, no unknown keys. */
export const goalSnapshot: Check = (v) => {
  if (!record(v)) return false;
  const known = new Set(['objective', 'phase', 'maxGoalRounds', 'roundsStarted', 'revision', 'operation', 'blocked', 'note']);
  if (Object.keys(v).some((k) => !known.has(k))) return false;
  if (!text(GOAL_LIMITS.objectiveChars)(v.objective) || !oneOf(...GOAL_PHASES)(v.phase) || !oneOf(...GOAL_OPERATIONS)(v.operation)) return false;
  if (!positive(v.maxGoalRounds) || (v.maxGoalRounds as number) > GOAL_LIMITS.maxRounds) return false;
  if (!natural(v.roundsStarted) || (v.roundsStarted as number) > (v.maxGoalRounds as number)) return false;
  if (!positive(v.revision)) return false;
  if (v.note !== undefined && !(typeof v.note === 'string' && v.note.length <= GOAL_LIMITS.noteChars)) return false;
  const b = v.blocked;
  if ((v.phase === 'blocked') !== (b !== undefined)) return false;
  return b === undefined || (record(b) && oneOf(...GOAL_BLOCK_CODES)(b.code) && typeof b.message === 'string' && b.message.length <= GOAL_LIMITS.messageChars);
};

const blobOrNull: Check = (v) => v === null || (typeof v === 'string' && /^[0-9a-f]{40}$/.test(v));
const checkpointChange: Check = (v) =>
  record(v) &&
  nonEmpty(v.path) &&
  nonEmpty(v.root) &&
  blobOrNull(v.before) &&
  blobOrNull(v.after) &&
  nonEmpty(v.callId) &&
  nonEmpty(v.tool) &&
  (v.recovered === undefined || v.recovered === true) &&
  (v.beforeExecutable === undefined || v.beforeExecutable === true);

const r = (field: string, check: Check, expect: string, optional = false): FieldRule => ({ field, check, expect, optional });
const POLICY_SOURCE = r('source', oneOf('user', 'delegation'), "'user' or 'delegation'");
// Each workflow/* type pins its data's required keys and their shapes.
const has =
  (spec: Record<string, Check>, optional: Record<string, Check> = {}): Check =>
  (v) =>
    record(v) && Object.entries(spec).every(([k, c]) => c(v[k])) && Object.entries(optional).every(([k, c]) => v[k] === undefined || c(v[k]));
const STOPS = ['completed', 'interrupted', 'error', 'max-tokens', 'cancelled', 'budget'];
const limits: Check = (v) => record(v) && natural(v.maxTotalAgents) && natural(v.concurrency) && natural(v.wallClockMs);
const WORKFLOW_DATA = {
  'workflow/start': has({ name: str, description: str, scriptSha256: nonEmpty, scriptBytes: natural, limits }, { callId: nonEmpty, budget: isBudget }),
  'workflow/phase': has({ index: natural, title: str }),
  'workflow/log': has({ message: str }, { truncated: bool }),
  'workflow/agent': has({ index: natural, childId: nonEmpty, status: oneOf('started', 'done') }, { label: str, stopReason: oneOf(...STOPS) }),
  'workflow/end': has(
    { status: oneOf('completed', 'failed', 'cancelled', 'interrupted'), agents: natural, tokens: natural, resultBytes: natural, logsDropped: natural },
    { code: nonEmpty, error: str },
  ),
};
const workflow = (t: keyof typeof WORKFLOW_DATA): FieldRule[] => [
  r('runId', nonEmpty, 'a non-empty string'),
  r('data', WORKFLOW_DATA[t], `the ${t} data (see WorkflowData)`),
];

export const EVENT_RULES: Record<EventType, FieldRule[]> = {
  'user/message': [
    r('text', str, 'a string'),
    r('source', source, `an object whose kind is one of ${SOURCE_KINDS.join(', ')}`),
    r('surfaceOp', oneOf('replace'), "'replace'", true),
    r('replaces', range, '{fromSeq, toSeq} with fromSeq <= toSeq', true),
    r('compactionId', nonEmpty, 'a non-empty string', true),
    r('messageId', nonEmpty, 'a non-empty string', true),
  ],
  'assistant/message': [
    r('text', str, 'a string'),
    r('model', str, 'a string'),
    r('reasoning', str, 'a string', true),
    r('toolCalls', toolCalls, 'an array of {id, name, arguments} with unique ids', true),
    r('usage', usage, '{promptTokens, completionTokens, cacheHitTokens?, cacheMissTokens?} of non-negative integers, costUsd? a non-negative number', true),
    r('estimated', (v) => v === true, 'true', true),
  ],
  'tool/result': [
    r('callId', nonEmpty, 'a non-empty string'),
    r('name', nonEmpty, 'a non-empty string'),
    r('content', str, 'a string'),
    r('isError', bool, 'a boolean'),
    r('refusal', (v) => record(v) && nonEmpty(v.outcome) && str(v.summary), '{outcome, summary} strings', true),
  ],
  'turn/start': [r('turnId', nonEmpty, 'a non-empty string')],
  'turn/end': [
    r('turnId', nonEmpty, 'a non-empty string'),
    r('stopReason', oneOf(...STOPS), STOPS.join(' | ')),
    r('error', str, 'a string', true),
    r('errorCode', nonEmpty, 'a non-empty string', true),
    r('unreached', (v) => v === true, 'true', true),
  ],
  'request/header': [
    r('model', str, 'a string'),
    r('provider', str, 'a string'),
    r('bytes', natural, 'a non-negative integer'),
    r('headBytes', natural, 'a non-negative integer'),
    r('headHash', nonEmpty, 'a non-empty string'),
    r('prefixHash', nonEmpty, 'a non-empty string'),
  ],
  'inbox/accepted': [
    r('messageId', nonEmpty, 'a non-empty string'),
    r('text', str, 'a string'),
    r('source', source, `an object whose kind is one of ${SOURCE_KINDS.join(', ')}`),
  ],
  'inbox/claimed': [r('messageId', nonEmpty, 'a non-empty string')],
  'inbox/withdrawn': [r('messageId', nonEmpty, 'a non-empty string')],
  'inbox/paused': [],
  'sandbox/mode': [r('mode', oneOf('read-only', 'workspace-write', 'full-access'), 'read-only | workspace-write | full-access'), POLICY_SOURCE],
  'approval/policy': [r('policy', oneOf('ask', 'never'), "'ask' or 'never'"), POLICY_SOURCE],
  'approval/grant': [
    r('grantId', nonEmpty, 'a non-empty string'),
    r('tool', nonEmpty, 'a non-empty string'),
    r('scope', grantScope, "{kind: 'command-prefix' | 'path', value: a non-empty string}"),
    r('sandbox', oneOf('read-only', 'workspace-write', 'full-access'), 'read-only | workspace-write | full-access', true),
    r('revoked', bool, 'a boolean', true),
  ],
  'subagent/descriptor': [
    r('version', (v) => v === 2, 'the number 2'),
    r('mode', oneOf('one-shot', 'continuable'), "'one-shot' or 'continuable'"),
    r('provider', nonEmpty, 'a non-empty string'),
    r('label', str, 'a string', true),
    r('modelProvider', str, 'a string', true),
    r('model', str, 'a string', true),
    r('persona', str, 'a string', true),
    r('personaComplete', bool, 'a boolean', true),
    r('toolFilter', strings, 'an array of tool names', true),
    r('agent', nonEmpty, 'an agent name', true),
    r('workflow', (v) => record(v) && nonEmpty(v.runId) && natural(v.index), '{runId, index}', true),
    r('isolation', oneOf('worktree'), "'worktree'", true),
    r(
      'placement',
      (v) =>
        record(v) &&
        nonEmpty(v.name) &&
        oneOf('local', 'ssh', 'container')(v.kind) &&
        typeof v.where === 'string' &&
        (v.rttMs === undefined || (typeof v.rttMs === 'number' && Number.isFinite(v.rttMs) && v.rttMs >= 0)),
      '{name, kind: local | ssh | container, where, rttMs?}',
      true,
    ),
  ],
  worktree: [
    r('state', oneOf('open', 'applied', 'discarded', 'kept', 'inherited'), 'open | applied | discarded | kept | inherited'),
    r('repo', absolute, 'an absolute path'),
    r('path', absolute, 'an absolute path'),
    r('root', absolute, 'an absolute path'),
    r('branch', (v) => nonEmpty(v) && /^arbor\/[A-Za-z0-9._-]+$/.test(v as string), 'a branch arbor/<name>'),
    r('base', (v) => typeof v === 'string' && /^[0-9a-f]{40,64}$/.test(v), 'a commit id'),
    r('owner', (v) => isSessionId(v), 'a session id', true),
    r('head', (v) => typeof v === 'string' && /^[0-9a-f]{40,64}$/.test(v), 'a commit id', true),
    r('files', natural, 'a non-negative integer', true),
  ],
  'subagent/remote': [
    r('program', nonEmpty, 'a non-empty string'),
    r('version', str, 'a string', true),
    r('externalId', nonEmpty, 'a non-empty string'),
    r('pgid', (v) => natural(v) && (v as number) > 1, 'a process group id (an integer > 1)', true),
    r('startTime', natural, 'a start time in clock ticks (a non-negative integer)', true),
    r('bootId', nonEmpty, 'a non-empty string', true),
    r('store', nonEmpty, 'a non-empty string', true),
    r('announcedBy', isSessionId, 'a session id', true),
  ],
  'session/end-seed': [
    r('seedLength', natural, 'a non-negative integer'),
    r('droppedInbox', (v) => Array.isArray(v) && v.every((x) => typeof x === 'string' && x.length > 0), 'an array of message ids', true),
  ],
  'compaction/start': [
    r('compactionId', nonEmpty, 'a non-empty string'),
    r('reason', oneOf('manual', 'threshold'), "'manual' or 'threshold'"),
    r('model', str, 'a string', true),
    r('bytes', natural, 'a non-negative safe integer', true),
  ],
  'compaction/summary': [r('compactionId', nonEmpty, 'a non-empty string'), r('text', str, 'a string')],
  'compaction/end': [
    r('compactionId', nonEmpty, 'a non-empty string'),
    r('outcome', oneOf('committed', 'aborted'), "'committed' or 'aborted'"),
    r('model', str, 'a string', true),
    r('usage', usage, '{promptTokens, completionTokens, cacheHitTokens?, cacheMissTokens?} of non-negative integers, costUsd? a non-negative number', true),
    r('estimated', (v) => v === true, 'true', true),
  ],
  'goal/change': [
    r(
      'goal',
      (v) => v === null || goalSnapshot(v),
      `null (cleared) or a goal snapshot {objective (1..${GOAL_LIMITS.objectiveChars} chars), phase, maxGoalRounds (1..${GOAL_LIMITS.maxRounds}), roundsStarted (<= maxGoalRounds), revision, operation, blocked? (only when blocked), note?}`,
    ),
  ],
  'budget/set': [
    r('budget', (v) => v === null || isBudget(v), 'null (removed) or {maxTokens?: 1..1e12 tokens, maxCostUsd?: 0..1e6 USD} with at least one limit'),
    r('source', oneOf('user', 'delegation', 'fork'), "'user', 'delegation' or 'fork'"),
  ],
  'workflow/start': workflow('workflow/start'),
  'workflow/phase': workflow('workflow/phase'),
  'workflow/log': workflow('workflow/log'),
  'workflow/agent': workflow('workflow/agent'),
  'workflow/end': workflow('workflow/end'),
  'hook/run': [
    r('event', nonEmpty, 'a non-empty string'),
    r('command', str, 'a string'),
    r('source', oneOf('user', 'workspace', 'claude'), "'user', 'workspace' or 'claude'"),
    r('outcome', oneOf('ok', 'blocked', 'error', 'timeout'), 'ok | blocked | error | timeout'),
    r('tool', nonEmpty, 'a non-empty string', true),
    r('exitCode', (v) => typeof v === 'number' && Number.isSafeInteger(v), 'an integer', true),
    r('durationMs', natural, 'a non-negative integer'),
    r('reason', str, 'a string', true),
    r('decision', oneOf('allow', 'deny', 'ask'), 'allow | deny | ask', true),
    r('truncated', (v) => v === true, 'true', true),
  ],
  checkpoint: [
    r('turnId', nonEmpty, 'a non-empty string', true),
    r(
      'changes',
      (v) => Array.isArray(v) && v.every(checkpointChange),
      'a list of {path, root, before, after, callId, tool, recovered?: true, beforeExecutable?: true}',
    ),
    r(
      'skipped',
      (v) => Array.isArray(v) && v.every((x) => record(x) && nonEmpty(x.path) && oneOf('ignored', 'too-large')(x.reason)),
      'a list of {path, reason}',
      true,
    ),
    r(
      'rewind',
      (v) =>
        record(v) && bool(v.subtree) && strings(v.sessions) && (v.toSeq === undefined || natural(v.toSeq)) && (v.undoes === undefined || natural(v.undoes)),
      '{subtree, sessions, toSeq?, undoes?}',
      true,
    ),
  ],
};

export function isEventType(t: unknown): t is EventType {
  return typeof t === 'string' && Object.hasOwn(EVENT_RULES, t);
}

/** Shape check of one event: envelope (`seq`, `type`, `at`) and the fields its type requires. */
export function checkEventShape(e: unknown, expectedSeq: number): void {
  if (!record(e)) throw new SessionValidationError('BAD_EVENT', 'An event must be an object', undefined, expectedSeq);
  const ev = e as Record<string, unknown>;
  if (!natural(ev.seq)) throw new SessionValidationError('BAD_FIELD', 'seq must be a non-negative integer', 'seq', expectedSeq);
  if (ev.seq !== expectedSeq)
    throw new SessionValidationError('SEQ_GAP', `seq ${String(ev.seq)} does not follow the log (expected ${expectedSeq})`, 'seq', expectedSeq);
  if (!isEventType(ev.type)) throw new SessionValidationError('UNKNOWN_TYPE', `Unknown event type ${JSON.stringify(ev.type)}`, 'type', expectedSeq);
  if (!isTime(ev.at)) throw new SessionValidationError('BAD_FIELD', 'at must be an ISO-8601 time', 'at', expectedSeq);
  for (const rule of EVENT_RULES[ev.type]) {
    const v = ev[rule.field];
    if (v === undefined) {
      if (rule.optional) continue;
      throw new SessionValidationError('MISSING_FIELD', `${ev.type} needs ${rule.field}`, rule.field, expectedSeq);
    }
    if (!rule.check(v)) throw new SessionValidationError('BAD_FIELD', `${ev.type}.${rule.field} must be ${rule.expect}`, rule.field, expectedSeq);
  }
}

/** The last `at` that parsed: events appended in the same millisecond share it, and a string parses the same every time. */
let lastTime = '';

/** A non-empty string `Date.parse` reads as a time. */
function isTime(v: unknown): boolean {
  if (typeof v !== 'string' || v.length === 0) return false;
  if (v === lastTime) return true;
  if (Number.isNaN(Date.parse(v))) return false;
  lastTime = v;
  return true;
}

const ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** Ids become file names in the store, so they are restricted to a portable alphabet. */
export function isSessionId(v: unknown): v is string {
  return typeof v === 'string' && ID.test(v);
}

export function checkHeader(h: unknown): asserts h is SessionHeader {
  const bad = (field: string, what: string): never => {
    throw new SessionValidationError('BAD_HEADER', `Session header ${field} ${what}`, field);
  };
  if (!record(h)) throw new SessionValidationError('BAD_HEADER', 'A session header must be an object');
  if (!isSessionId(h.id)) bad('id', 'must be 1-128 characters of A-Z a-z 0-9 . _ - starting with a letter or digit');
  if (!nonEmpty(h.createdAt) || Number.isNaN(Date.parse(h.createdAt as string))) bad('createdAt', 'must be an ISO-8601 time');
  if (!oneOf('user', 'subagent', 'fork')(h.origin)) bad('origin', "must be 'user', 'subagent' or 'fork'");
  if (h.title !== undefined && !str(h.title)) bad('title', 'must be a string');
  if (h.parentSession !== undefined && !isSessionId(h.parentSession)) bad('parentSession', 'must be a session id');
  if (h.origin !== 'user' && h.parentSession === undefined) bad('parentSession', `is required when origin is '${String(h.origin)}'`);
  if (h.parentSession !== undefined && h.parentSession === h.id) bad('parentSession', 'cannot be the session itself');
  if (h.delegationDepth !== undefined && !natural(h.delegationDepth)) bad('delegationDepth', 'must be a non-negative safe integer');
  if (h.seedLength !== undefined && !natural(h.seedLength)) bad('seedLength', 'must be a non-negative safe integer');
  if (h.cwd !== undefined && !str(h.cwd)) bad('cwd', 'must be a string');
  if (h.agentPreset !== undefined && !str(h.agentPreset)) bad('agentPreset', 'must be a string');
  if (h.agent !== undefined && !rootAgent(h.agent)) bad('agent', 'must be {name, persona?, personaComplete?, toolFilter?, model?}');
  if (h.bestOf !== undefined && !bestOfWay(h.bestOf)) bad('bestOf', 'must be {group, way, of, source, seq, prompt, model?, agent?}');
}

function bestOfWay(v: unknown): boolean {
  if (!record(v) || !nonEmpty(v.group) || !isSessionId(v.source) || !str(v.prompt)) return false;
  if (!natural(v.way) || !natural(v.of) || !natural(v.seq) || (v.way as number) < 1 || (v.way as number) > (v.of as number)) return false;
  return (v.model === undefined || nonEmpty(v.model)) && (v.agent === undefined || nonEmpty(v.agent));
}

function rootAgent(v: unknown): boolean {
  if (!record(v) || !nonEmpty(v.name)) return false;
  if (v.persona !== undefined && !str(v.persona)) return false;
  if (v.personaComplete !== undefined && !bool(v.personaComplete)) return false;
  if (v.model !== undefined && !str(v.model)) return false;
  return v.toolFilter === undefined || strings(v.toolFilter);
}
