import type { MessageSource, MessageSourceKind, StopReason } from './events';

/** The session a message names as its author, for the kinds that have one (`'user'` for a human's follow-up). */
export function fromSessionOf(source: MessageSource): string | undefined {
  return 'fromSession' in source ? source.fromSession : undefined;
}

type Fields = Record<string, unknown>;
const name = (v: unknown): v is string => typeof v === 'string' && v.length > 0;
const natural = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const STOP_REASONS: Record<StopReason, true> = { completed: true, interrupted: true, error: true, 'max-tokens': true, cancelled: true, budget: true };
const stopReason = (v: unknown): v is StopReason => typeof v === 'string' && Object.hasOwn(STOP_REASONS, v);

/**
 * Each kind's fields read from untrusted data (another Arbor's `_meta.arbor` over ACP), one row
 * per kind: the compiler holds the table to the union, so a new kind or field is a row here.
 * A row answers undefined when a field its kind needs is missing or of the wrong shape.
 */
const READERS: { [K in MessageSourceKind]: (f: Fields) => Extract<MessageSource, { kind: K }> | undefined } = {
  user: (f) => ({ kind: 'user', ...(f.compacted === true ? { compacted: true as const } : {}) }),
  followup: (f) => (name(f.fromSession) ? { kind: 'followup', fromSession: f.fromSession } : undefined),
  'subagent-report': (f) =>
    name(f.fromSession) && (f.mode === 'quiet' || f.mode === 'wakeup') ? { kind: 'subagent-report', fromSession: f.fromSession, mode: f.mode } : undefined,
  'subagent-settled': (f) =>
    name(f.fromSession) && stopReason(f.stopReason)
      ? { kind: 'subagent-settled', fromSession: f.fromSession, stopReason: f.stopReason, ...(natural(f.refused) ? { refused: f.refused } : {}) }
      : undefined,
  'subagent-result': (f) =>
    name(f.fromSession) && stopReason(f.stopReason)
      ? { kind: 'subagent-result', fromSession: f.fromSession, stopReason: f.stopReason, ...(natural(f.refused) ? { refused: f.refused } : {}) }
      : undefined,
  goal: (f) => (natural(f.revision) && natural(f.round) ? { kind: 'goal', revision: f.revision, round: f.round } : undefined),
  delegation: (f) =>
    f.runtime === true ? { kind: 'delegation', runtime: true } : name(f.fromSession) ? { kind: 'delegation', fromSession: f.fromSession } : undefined,
};

/** A message source read from untrusted fields (`kind` and that kind's fields), or undefined when they do not make one. */
export function readMessageSource(kind: unknown, fields: Fields): MessageSource | undefined {
  return typeof kind === 'string' && Object.hasOwn(READERS, kind) ? READERS[kind as MessageSourceKind](fields) : undefined;
}

/** Each kind of message in words, for errors and notices ("a goal round"; never the raw kind). */
export const SOURCE_WORDS: Record<MessageSourceKind, string> = {
  user: 'a human message',
  followup: 'a message',
  delegation: 'a task',
  goal: 'a goal round',
  'subagent-settled': "a subagent's settlement notice",
  'subagent-result': "a background subagent's result",
  'subagent-report': "a subagent's report",
};

export const capitalised = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);
