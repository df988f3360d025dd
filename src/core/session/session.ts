import { copyData } from './copy';
import { type DerivedMessage, SurfaceFold } from './derive';
import { SessionValidationError } from './errors';
import type { EventDraft, SessionEvent, SessionHeader } from './events';
import { checkEventShape, checkHeader } from './validate';

interface OpenTurn {
  turnId: string;
  /** callId → tool name, for calls of this turn still waiting for a result. */
  pending: Map<string, string>;
  answered: Set<string>;
}

/** Ordering state folded from the log: what the next event may be. */
interface LogState {
  turn: OpenTurn | null;
  compactionId: string | null;
  inbox: Set<string>;
}

export interface SessionOptions {
  /** Skip shape checks when restoring bytes the store already checksummed and validated. */
  trusted?: boolean;
}

/**
 * One session: a header and an append-only, validated event list (DESIGN §2).
 * It knows no runtime, store or model; everything else is folded from it.
 */
export class Session {
  readonly header: SessionHeader;
  private readonly log: SessionEvent[] = [];
  /** The model's surface, folded as events arrive (deriveMessages() without a refold). */
  private readonly surface = new SurfaceFold();
  private folded = 0;
  private readonly state: LogState = { turn: null, compactionId: null, inbox: new Set() };
  private readonly appendListeners = new Set<(e: SessionEvent) => void>();

  private constructor(header: SessionHeader) {
    checkHeader(header);
    this.header = structuredClone(header);
  }

  /** A new, empty session. */
  static create(header: SessionHeader): Session {
    if (header.seedLength !== undefined)
      throw new SessionValidationError('BAD_HEADER', 'Session header seedLength is only set by Session.fromSeed', 'seedLength');
    return new Session(header);
  }

  /**
   * A fork: a validated deep copy of `seed` (a contiguous prefix from seq 0 that ends
   * at a `turn/end`, or at the end of a compaction made after it, between turns), closed by
   * `session/end-seed`. A half turn is never copied, so the child replays a log that is whole.
   */
  static fromSeed(header: Omit<SessionHeader, 'seedLength'>, seed: readonly SessionEvent[]): Session {
    if (seed.length === 0) throw new SessionValidationError('BAD_SEED', 'A fork seed must hold at least one whole turn');
    const last = seed[seed.length - 1];
    if (last.type !== 'turn/end' && last.type !== 'compaction/end')
      throw new SessionValidationError(
        'BAD_SEED',
        `A fork seed must end at a turn/end, not ${last.type} (or at the compaction/end of a compaction made right after one)`,
        'type',
        last.seq,
      );
    const s = new Session({ ...header, seedLength: seed.length });
    for (let i = 0; i < seed.length; i++) {
      const e = seed[i];
      if (e === null || typeof e !== 'object' || e.seq !== i)
        throw new SessionValidationError('BAD_SEED', `A fork seed must be contiguous from seq 0 (position ${i} holds seq ${String(e?.seq)})`, 'seq', i);
      s.push(structuredClone(e), false);
    }
    if (s.state.compactionId !== null) throw new SessionValidationError('BAD_SEED', 'A fork seed must not end inside a compaction', 'type', last.seq);
    if (s.state.turn !== null) throw new SessionValidationError('BAD_SEED', 'A fork seed must not end inside a turn', 'type', last.seq);
    // The parent's queue (accepted, not claimed) stays the parent's: a fork answers its own
    // task, never a message typed to the parent mid-turn, a settlement notice or a wakeup report.
    const queued = [...s.state.inbox];
    s.push(
      { seq: seed.length, type: 'session/end-seed', at: new Date().toISOString(), seedLength: seed.length, ...(queued.length ? { droppedInbox: queued } : {}) },
      false,
    );
    return s;
  }

  /** Rebuild a session from stored events; every ordering rule is re-checked. */
  static restore(header: SessionHeader, events: readonly SessionEvent[], opts: SessionOptions = {}): Session {
    const s = new Session(header);
    for (const e of events) s.push(e, opts.trusted ?? false);
    const n = header.seedLength;
    if (n !== undefined && (s.log.length <= n || s.log[n].type !== 'session/end-seed'))
      throw new SessionValidationError('BAD_SEED', `Header says seedLength ${n} but seq ${n} is not session/end-seed`, 'seedLength', n);
    return s;
  }

  get id(): string {
    return this.header.id;
  }
  get events(): readonly SessionEvent[] {
    return this.log;
  }
  get length(): number {
    return this.log.length;
  }
  /** Events copied from a fork parent (0 when not forked). */
  get seedLength(): number {
    return this.header.seedLength ?? 0;
  }
  /** First seq this session produced itself; seed and its `session/end-seed` are replayed history. */
  get firstLiveSeq(): number {
    return this.header.seedLength === undefined ? 0 : this.header.seedLength + 1;
  }
  get openTurnId(): string | null {
    return this.state.turn?.turnId ?? null;
  }
  /** Tool calls of the open turn still waiting for a result. */
  get pendingCalls(): ReadonlyMap<string, string> {
    return this.state.turn?.pending ?? new Map();
  }
  get openCompactionId(): string | null {
    return this.state.compactionId;
  }
  /** Accepted inbox messages not yet claimed, in acceptance order. */
  get unclaimedInbox(): string[] {
    return [...this.state.inbox];
  }

  /**
   * Validate and append one event; `seq` and `at` are filled in when absent.
   * On error nothing changes. Returns a deep copy of the stored event (the log keeps its own).
   */
  append(draft: EventDraft): SessionEvent {
    // Copied once on the way in (the caller keeps its draft), and once on the way out (the caller's to change).
    return copyData(this.place(draft, copyData(draft) as SessionEvent));
  }

  /**
   * `append` of a draft that is handed over (decision 0118): the log keeps `draft` itself, with
   * no copy in, and nobody is handed a copy out (read the log's own at the end of `events`). Only
   * for a caller that built the draft for the log alone, of plain data, and keeps no reference
   * into it (the remote sink's messages and results). On error nothing changes but the draft's
   * `seq` and `at`.
   */
  adopt(draft: EventDraft): void {
    this.place(draft, draft as SessionEvent);
  }

  /** Validate `e` (the draft, or its copy) and append it; `seq` and `at` filled in when the draft has none. */
  private place(draft: EventDraft, e: SessionEvent): SessionEvent {
    if (draft.type === 'session/end-seed')
      throw new SessionValidationError('BAD_SEED', 'session/end-seed is written only by Session.fromSeed', 'type', this.log.length);
    e.seq = draft.seq ?? this.log.length;
    e.at = draft.at ?? isoNow();
    this.push(e, false);
    if (this.appendListeners.size > 0) this.notify(e);
    return e;
  }

  private notify(e: SessionEvent): void {
    for (const fn of this.appendListeners) {
      try {
        fn(e);
      } catch {
        // The event is stored; an observer's failure must not make the append look refused.
      }
    }
  }

  /** The model's view of this session (compaction replacements applied). */
  deriveMessages(): DerivedMessage[] {
    this.surfaceNow();
    return this.surface.messages();
  }

  /**
   * The model's view and its lineage: surfaces of one lineage extend one another (a request
   * builder reuses what it serialized of the earlier one; decision 0064). `messages` is the
   * fold's live array (SurfaceFold.live): a later call under the same lineage extends it.
   */
  surfaceNow(): { messages: readonly DerivedMessage[]; lineage: object } {
    // Folded on demand, from where the last call stopped: loading a session costs nothing
    // here, and each model request folds only the events since the previous one.
    while (this.folded < this.log.length) this.surface.apply(this.log[this.folded++]);
    return { messages: this.surface.live(), lineage: this.surface.lineage };
  }

  /** Observe appends (UI deltas, persistence). Returns an unsubscribe function. */
  onAppend(fn: (e: SessionEvent) => void): () => void {
    this.appendListeners.add(fn);
    return () => this.appendListeners.delete(fn);
  }

  private push(e: SessionEvent, trusted: boolean): void {
    if (!trusted) checkEventShape(e, this.log.length);
    else if (e.seq !== this.log.length)
      throw new SessionValidationError('SEQ_GAP', `seq ${e.seq} does not follow the log (expected ${this.log.length})`, 'seq', this.log.length);
    ORDER[e.type]?.(this.state, e as never, this);
    this.log.push(e);
  }
}

let lastMs = Number.NaN;
let lastIso = '';
/** `new Date().toISOString()`, formatted once per millisecond (a mapped stream appends many events in one). */
function isoNow(): string {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
}

type OrderRule<T extends SessionEvent['type']> = (st: LogState, e: Extract<SessionEvent, { type: T }>, s: Session) => void;

function needTurn(st: LogState, e: SessionEvent): OpenTurn {
  if (!st.turn) throw new SessionValidationError('TURN_NOT_OPEN', `${e.type} needs an open turn (no turn/start before it)`, 'type', e.seq);
  return st.turn;
}

// Ordering rules per type, applied after the shape check; types without a rule may appear anywhere.
const ORDER: { [T in SessionEvent['type']]?: OrderRule<T> } = {
  'turn/start': (st, e) => {
    if (st.turn) throw new SessionValidationError('TURN_ALREADY_OPEN', `turn ${st.turn.turnId} is still open`, 'type', e.seq);
    st.turn = { turnId: e.turnId, pending: new Map(), answered: new Set() };
  },
  'turn/end': (st, e) => {
    const t = needTurn(st, e);
    if (t.turnId !== e.turnId)
      throw new SessionValidationError('TURN_MISMATCH', `turn/end names turn ${e.turnId} but turn ${t.turnId} is open`, 'turnId', e.seq);
    if (e.stopReason === 'completed' && t.pending.size > 0)
      throw new SessionValidationError(
        'PENDING_CALLS',
        `a completed turn cannot end with unanswered tool calls (${[...t.pending.keys()].join(', ')})`,
        'stopReason',
        e.seq,
      );
    st.turn = null;
  },
  'assistant/message': (st, e) => {
    const t = needTurn(st, e);
    const calls = e.toolCalls ?? [];
    for (const c of calls) {
      if (t.pending.has(c.id) || t.answered.has(c.id))
        throw new SessionValidationError('BAD_FIELD', `tool call id ${c.id} is already used in this turn`, 'toolCalls', e.seq);
    }
    // Only once every call is checked, so a refused message leaves nothing pending.
    for (const c of calls) t.pending.set(c.id, c.name);
  },
  'tool/result': (st, e) => {
    const t = needTurn(st, e);
    if (t.answered.has(e.callId)) throw new SessionValidationError('DUPLICATE_RESULT', `tool call ${e.callId} already has a result`, 'callId', e.seq);
    const name = t.pending.get(e.callId);
    if (name === undefined) throw new SessionValidationError('UNKNOWN_CALL', `no pending tool call ${e.callId} in the current turn`, 'callId', e.seq);
    if (name !== e.name) throw new SessionValidationError('BAD_FIELD', `tool/result names ${e.name} but call ${e.callId} was ${name}`, 'name', e.seq);
    t.pending.delete(e.callId);
    t.answered.add(e.callId);
  },
  'request/header': (st, e) => void needTurn(st, e),
  'inbox/accepted': (st, e) => {
    if (st.inbox.has(e.messageId)) throw new SessionValidationError('INBOX_STATE', `inbox message ${e.messageId} was already accepted`, 'messageId', e.seq);
    st.inbox.add(e.messageId);
  },
  'inbox/claimed': (st, e) => {
    if (!st.inbox.delete(e.messageId))
      throw new SessionValidationError('INBOX_STATE', `inbox message ${e.messageId} is not waiting in the inbox`, 'messageId', e.seq);
  },
  // A withdrawn message leaves the inbox exactly like a claimed one, but no turn follows.
  'inbox/withdrawn': (st, e) => {
    if (!st.inbox.delete(e.messageId))
      throw new SessionValidationError(
        'INBOX_STATE',
        `inbox message ${e.messageId} is not waiting in the inbox (already claimed or withdrawn)`,
        'messageId',
        e.seq,
      );
  },
  'compaction/start': (st, e) => {
    if (st.compactionId) throw new SessionValidationError('COMPACTION_STATE', `compaction ${st.compactionId} is still open`, 'type', e.seq);
    st.compactionId = e.compactionId;
  },
  'compaction/summary': (st, e) => needCompaction(st, e.compactionId, e.seq),
  'compaction/end': (st, e) => {
    needCompaction(st, e.compactionId, e.seq);
    st.compactionId = null;
  },
  'user/message': (st, e) => {
    if (e.surfaceOp === undefined && e.replaces === undefined) return;
    if (e.surfaceOp !== 'replace' || !e.replaces || !e.compactionId)
      throw new SessionValidationError('BAD_FIELD', "a surface replacement needs surfaceOp 'replace', replaces and compactionId together", 'surfaceOp', e.seq);
    needCompaction(st, e.compactionId, e.seq);
    if (e.replaces.toSeq >= e.seq) throw new SessionValidationError('BAD_FIELD', 'replaces must name earlier events only', 'replaces', e.seq);
  },
  'session/end-seed': (st, e) => {
    if (e.seedLength !== e.seq)
      throw new SessionValidationError('BAD_SEED', `session/end-seed must sit at seq seedLength (${e.seedLength})`, 'seedLength', e.seq);
    for (const id of e.droppedInbox ?? []) {
      if (!st.inbox.delete(id))
        throw new SessionValidationError('INBOX_STATE', `droppedInbox names ${id}, which is not waiting in the seeded inbox`, 'droppedInbox', e.seq);
    }
  },
};

/**
 * Whether appending an event of this type is checked against the log's state (an ordering rule,
 * or `session/end-seed`, which only `fromSeed` writes). One of any other type is checked by its
 * shape and its seq alone: it may be appended without the log folded (`appendWithoutFold`).
 */
export function foldedForAppend(type: SessionEvent['type']): boolean {
  return type === 'session/end-seed' || ORDER[type] !== undefined;
}

function needCompaction(st: LogState, id: string, seq: number): void {
  if (st.compactionId !== id)
    throw new SessionValidationError(
      'COMPACTION_STATE',
      st.compactionId ? `compaction ${st.compactionId} is open, not ${id}` : `no compaction ${id} is open`,
      'compactionId',
      seq,
    );
}
