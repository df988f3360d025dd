import { copyData } from '../session/copy';
import type { EventDraft, SessionEvent } from '../session/events';
import { foldedForAppend, type Session } from '../session/session';
import { checkEventShape } from '../session/validate';
import type { Store } from '../store/store';

/** What a write that waits for nothing returns. */
const DONE: Promise<void> = Promise.resolve();

/**
 * A session and where it persists. Events are validated by the session first, then made
 * durable; `append` resolves only once the event is on disk. Until `publish()` the session
 * is unpublished: events are held in memory and land with the first durable batch.
 */
/**
 * A session's log as control code writes to it (a policy switch, a withdrawal, a grant, a
 * goal or workflow fact): its events so far and a durable append. A resident `Agent` is one
 * (its appends stay in order with its turn's); a `SessionWriter` over the stored log is the other.
 */
export interface SessionLog {
  readonly id: string;
  readonly session: Session;
  append(draft: EventDraft): Promise<SessionEvent>;
}

export class SessionWriter implements SessionLog {
  private published: boolean;
  private readonly listeners = new Set<(e: SessionEvent, s: Session) => void>();
  private tail: Promise<void> = Promise.resolve();

  constructor(
    readonly session: Session,
    private readonly store: Store | null,
    opts: { published?: boolean } = {},
  ) {
    this.published = opts.published ?? true;
  }

  get id(): string {
    return this.session.id;
  }
  get isPublished(): boolean {
    return this.published;
  }

  /** Persist the header and every event held so far, atomically. */
  async publish(): Promise<void> {
    if (this.published) return;
    if (this.store) await this.store.createSession(this.session.header, this.session.events);
    this.published = true;
    // Listeners get copies, as every appended event's (the log keeps its own).
    for (const e of this.session.events) this.emit(copyData(e));
  }

  async append(draft: EventDraft): Promise<SessionEvent> {
    return this.stage(draft);
  }

  /**
   * Validate and apply the event now — a refused event throws here, synchronously, and
   * changes nothing — and return a promise that resolves once it is on disk. Events staged
   * back to back share one group commit (one fdatasync); the log's order is the call order.
   * A caller that acts on the event (runs a tool, answers a parent) awaits it first.
   */
  stage(draft: EventDraft): Promise<SessionEvent> {
    const e = this.session.append(draft);
    // The store writes the log's own event, never `e`: listeners and the caller share `e`, and one
    // changing it before the write is durable must not change what is written (decision 0065).
    const own = this.session.events[this.session.length - 1];
    if (!this.published) return Promise.resolve(e);
    this.emit(e);
    const p = this.persist(own);
    if (!p) return Promise.resolve(e);
    const durable = p.then(() => e);
    // Awaited later (after other staged events): a failure is reported there, not as unhandled.
    durable.catch(() => undefined);
    return durable;
  }

  /**
   * `stage` of a draft handed over (`Session.adopt`, decision 0118): the log keeps the draft itself
   * (no copy in) and the caller gets no event back. Listeners share one copy of the log's event,
   * made only when there is someone to hand it to (a listener, or a store with its own). Only for
   * a caller that built the draft for the log and keeps no reference into it (the remote sink).
   */
  write(draft: EventDraft): Promise<void> {
    this.session.adopt(draft);
    if (!this.published) return DONE;
    const own = this.session.events[this.session.length - 1];
    if (this.listeners.size > 0 || this.store) this.emit(copyData(own));
    const p = this.persist(own);
    if (!p) return DONE;
    // Awaited later (after other staged events): a failure is reported there, not as unhandled.
    p.catch(() => undefined);
    return p;
  }

  /** The log's own event into the store (none: nothing to wait for). */
  private persist(own: SessionEvent): Promise<void> | undefined {
    if (!this.store) return undefined;
    // Appends are ordered by the store's single writer queue; keep the promise chain so
    // `flush()` can wait for everything issued so far.
    const p = this.store.append(this.session.id, [own]);
    this.tail = this.tail.then(
      () => p,
      () => p,
    );
    return p;
  }

  /** Wait until every append issued so far is durable. */
  flush(): Promise<void> {
    return this.tail;
  }

  onEvent(fn: (e: SessionEvent, s: Session) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  private emit(e: SessionEvent): void {
    if (this.listeners.size > 0) for (const fn of this.listeners) fn(e, this.session);
    this.store?.staged(this.session.id, e);
  }
}

/**
 * Durably append one event to a stored log that is not resident, without reading it: for a type
 * with no ordering rule (a rewind's `checkpoint` record), whose only checks are its shape and its
 * seq — the seq the store holds now, checked again by the store against its durable length at
 * the commit. The caller holds the store's `logGate` for `id` (decision 0129): no other writer of
 * the log lands between the seq and the commit, so the store refusing it (SEQ_GAP) is a fault,
 * said, not retried. It is staged to the store's listeners (decision 0054) once durable. Any other
 * type is appended through a `SessionWriter` over the folded log, as before (decision 0128).
 */
export async function appendWithoutFold(store: Store, id: string, draft: EventDraft): Promise<SessionEvent> {
  if (foldedForAppend(draft.type)) return new SessionWriter(await store.inspect(id), store).append(draft);
  const e = copyData(draft) as SessionEvent;
  e.at = draft.at ?? new Date().toISOString();
  e.seq = draft.seq ?? (await store.length(id));
  checkEventShape(e, e.seq);
  await store.append(id, [copyData(e)]);
  store.staged(id, copyData(e));
  return copyData(e);
}

/**
 * `fn` with the one writer of `id`'s log, through the store's gate (decision 0129): its resident
 * agent if it has one once the gate is taken, else a `SessionWriter` over the stored log — the
 * way a control event reaches a session that may not be in memory.
 */
export function withStoredLog<T>(store: Store, id: string, resident: (id: string) => SessionLog | undefined, fn: (log: SessionLog) => Promise<T>): Promise<T> {
  return store.logGate.run(id, async () => fn(resident(id) ?? new SessionWriter(await store.inspect(id), store)));
}
