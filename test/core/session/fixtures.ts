// Shared builders and assertions for the session specs. Not a spec itself.
import * as assert from 'node:assert/strict';
import {
  type EventDraft,
  type MessageSource,
  type MessageSourceKind,
  Session,
  type SessionErrorCode,
  type SessionEvent,
  type SessionHeader,
  SessionValidationError,
  type StopReason,
} from '../../../src/core/session';

export const T0 = '2025-01-01T00:00:00.000Z';

export function header(over: Partial<SessionHeader> = {}): SessionHeader {
  return { id: 'root', createdAt: T0, origin: 'user', ...over };
}

export function forkHeader(over: Partial<SessionHeader> = {}): Omit<SessionHeader, 'seedLength'> {
  return { id: 'fork-1', createdAt: T0, origin: 'fork', parentSession: 'root', ...over };
}

/** A draft the type system would refuse: for feeding malformed input on purpose. */
export function raw(o: unknown): EventDraft {
  return o as EventDraft;
}

/** One source of each kind, with exactly its fields (the compiler holds the table to the union). */
export const SOURCES: { [K in MessageSourceKind]: Extract<MessageSource, { kind: K }> } = {
  user: { kind: 'user' },
  followup: { kind: 'followup', fromSession: 'user' },
  'subagent-report': { kind: 'subagent-report', fromSession: 'child', mode: 'quiet' },
  'subagent-settled': { kind: 'subagent-settled', fromSession: 'child', stopReason: 'completed', refused: 1 },
  'subagent-result': { kind: 'subagent-result', fromSession: 'child', stopReason: 'completed' },
  goal: { kind: 'goal', revision: 1, round: 1 },
  delegation: { kind: 'delegation', fromSession: 'parent' },
  hook: { kind: 'hook', event: 'Stop' },
};

/** Draft builders, one per event the specs use most. */
export const ev = {
  user: (text: string, source: MessageSource = { kind: 'user' }): EventDraft => ({ type: 'user/message', text, source }),
  turnStart: (turnId: string): EventDraft => ({ type: 'turn/start', turnId }),
  turnEnd: (turnId: string, stopReason: StopReason = 'completed'): EventDraft => ({ type: 'turn/end', turnId, stopReason }),
  assistant: (text: string, calls: Array<[id: string, name: string]> = []): EventDraft => ({
    type: 'assistant/message',
    text,
    model: 'test-model',
    ...(calls.length ? { toolCalls: calls.map(([id, name]) => ({ id, name, arguments: '{}' })) } : {}),
  }),
  result: (callId: string, name: string, content = 'ok', isError = false): EventDraft => ({
    type: 'tool/result',
    callId,
    name,
    content,
    isError,
  }),
  requestHeader: (): EventDraft => ({
    type: 'request/header',
    model: 'test-model',
    provider: 'test',
    bytes: 120,
    headBytes: 80,
    headHash: 'h1',
    prefixHash: 'p1',
  }),
  accepted: (messageId: string, text = 'queued'): EventDraft => ({
    type: 'inbox/accepted',
    messageId,
    text,
    source: { kind: 'followup', fromSession: 'user' },
  }),
  claimed: (messageId: string): EventDraft => ({ type: 'inbox/claimed', messageId }),
  compactionStart: (compactionId: string): EventDraft => ({ type: 'compaction/start', compactionId, reason: 'manual' }),
  compactionSummary: (compactionId: string, text = 'summary'): EventDraft => ({ type: 'compaction/summary', compactionId, text }),
  compactionEnd: (compactionId: string, outcome: 'committed' | 'aborted' = 'committed'): EventDraft => ({
    type: 'compaction/end',
    compactionId,
    outcome,
  }),
  replacement: (compactionId: string, fromSeq: number, toSeq: number, text = 'summary'): EventDraft => ({
    type: 'user/message',
    text,
    source: { kind: 'user' },
    surfaceOp: 'replace',
    replaces: { fromSeq, toSeq },
    compactionId,
  }),
  sandbox: (mode: 'read-only' | 'workspace-write' | 'full-access', source: 'user' | 'delegation'): EventDraft => ({
    type: 'sandbox/mode',
    mode,
    source,
  }),
  approval: (policy: 'ask' | 'never', source: 'user' | 'delegation'): EventDraft => ({ type: 'approval/policy', policy, source }),
  descriptor: (label: string): EventDraft => ({ type: 'subagent/descriptor', version: 2, mode: 'one-shot', provider: 'local', label }),
};

/** The drafts of one whole, completed turn: a user message answered by the assistant. */
export function wholeTurn(turnId: string, userText = `ask ${turnId}`, answer = `answer ${turnId}`): EventDraft[] {
  return [ev.turnStart(turnId), ev.user(userText), ev.assistant(answer), ev.turnEnd(turnId)];
}

export function appendAll(s: Session, drafts: readonly EventDraft[]): Session {
  for (const d of drafts) s.append(d);
  return s;
}

export function sessionWith(drafts: readonly EventDraft[], over: Partial<SessionHeader> = {}): Session {
  return appendAll(Session.create(header(over)), drafts);
}

/** Everything observable about a session, as plain data. */
export function snapshot(s: Session) {
  return {
    length: s.length,
    events: structuredClone(s.events) as SessionEvent[],
    openTurnId: s.openTurnId,
    pendingCalls: [...s.pendingCalls],
    openCompactionId: s.openCompactionId,
    unclaimedInbox: s.unclaimedInbox,
  };
}

export interface Expected {
  code: SessionErrorCode;
  /** The field the error must name; `undefined` asserts it names none. Omit to not check. */
  field?: string | undefined;
  /** The seq the error must name; `undefined` asserts it names none. Omit to not check. */
  seq?: number | undefined;
}

/** `act` throws a SessionValidationError with the expected code, field and seq, and says so in its message. */
export function expectError(act: () => unknown, exp: Expected): SessionValidationError {
  let caught: unknown;
  try {
    act();
  } catch (err) {
    caught = err;
  }
  assert.ok(caught !== undefined, `expected ${exp.code}, but nothing was thrown`);
  assert.ok(caught instanceof SessionValidationError, `expected a SessionValidationError, got ${String(caught)}`);
  const err = caught;
  assert.equal(err.code, exp.code, `code (message: ${err.message})`);
  assert.equal(err.name, 'SessionValidationError');
  if ('field' in exp) {
    assert.equal(err.field, exp.field, `field (message: ${err.message})`);
    if (exp.field !== undefined) assert.ok(err.message.includes(`field '${exp.field}'`), `message names the field: ${err.message}`);
    else assert.ok(!err.message.includes('(field'), `message names no field: ${err.message}`);
  }
  if ('seq' in exp) {
    assert.equal(err.seq, exp.seq, `seq (message: ${err.message})`);
    if (exp.seq !== undefined) assert.match(err.message, new RegExp(`\\bseq ${exp.seq}\\)`), `message names the seq`);
    else assert.doesNotMatch(err.message, /\bseq \d+\)$/, `message names no seq`);
  }
  return err;
}

/** Like `expectError`, and the refused append (or whatever `act` does) left the session exactly as it was. */
export function expectRefusal(s: Session, act: (s: Session) => unknown, exp: Expected): SessionValidationError {
  const before = snapshot(s);
  const err = expectError(() => act(s), exp);
  assert.deepEqual(snapshot(s), before, 'the session is unchanged after a refused append');
  return err;
}
