import type { SessionEvent, SessionHeader } from '../session/events';
import { foldSummary, type SessionSummary, summarize } from '../session/summary';
import type { Catalog } from './catalog';

/**
 * Every session's summary, kept incrementally: each durable append is folded in memory (no
 * extra write on the append path), and a clean close persists them in the catalog marked
 * `current`. The first write after an open clears that mark durably, before anything else is
 * written, so a crash leaves them marked stale and the next open folds logs instead (the
 * recovery scan a crash needs anyway). A session whose summary is unknown (a stale catalog,
 * an older store) is folded from its log once, on demand. Decision 0025.
 */
export class SummaryBook {
  private readonly known = new Map<string, SessionSummary>();
  /** Stored summaries not asked for yet, as the catalog's JSON (an open parses none of them). */
  private readonly stored: Map<string, string>;
  private readonly dirty = new Set<string>();
  /** The catalog's rows are exact; cleared (durably) by the first write. */
  private current: boolean;
  /** Rows the catalog holds may be stale: the close rewrites the table instead of patching it. */
  private reset: boolean;
  private clearing: Promise<void> | undefined;

  constructor(private readonly catalog: Catalog) {
    const stored = catalog.storedSummaries();
    this.stored = stored ?? new Map();
    this.current = stored !== undefined;
    this.reset = stored === undefined;
  }

  /** The kept summary, a stored one parsed on first use. */
  private kept(id: string): SessionSummary | undefined {
    const k = this.known.get(id);
    if (k) return k;
    const text = this.stored.get(id);
    if (text === undefined) return undefined;
    this.stored.delete(id);
    const s = parsed(text);
    if (s) this.known.set(id, s);
    return s;
  }

  /**
   * The summary, if known without reading the log (a copy). A stored one not parsed yet is
   * parsed for the caller alone (the parse is the copy) and stays text here: the panel's first
   * fold of 1,000 conversations costs 1,000 parses, not parses and clones (decision 0092).
   */
  get(id: string): SessionSummary | undefined {
    const k = this.known.get(id);
    if (k) return structuredClone(k);
    const text = this.stored.get(id);
    return text === undefined ? undefined : parsed(text);
  }

  /** The kept summary itself, read-only, without a copy (per-step readers: the budget guard). */
  peek(id: string): Readonly<SessionSummary> | undefined {
    return this.kept(id);
  }

  /** Remember a summary folded from a whole log (a copy is kept). */
  learn(id: string, s: SessionSummary): void {
    this.stored.delete(id);
    this.known.set(id, structuredClone(s));
    this.dirty.add(id);
  }

  /** Before any write: the catalog's rows stop being exact, durably, once per open. */
  beforeWrite(): Promise<void> | undefined {
    if (!this.current) return this.clearing;
    this.current = false;
    this.clearing = this.catalog.add([{ op: 'summaries', rows: [], current: false }]);
    return this.clearing;
  }

  /** A session was published with these events. */
  created(h: SessionHeader, events: readonly SessionEvent[]): void {
    this.stored.delete(h.id);
    this.known.set(h.id, summarize(h, events));
    this.dirty.add(h.id);
  }

  /** Events were appended durably; an unknown summary stays unknown (it is folded from the log). */
  appended(id: string, events: readonly SessionEvent[]): void {
    const s = this.kept(id);
    if (!s) return;
    for (const e of events) foldSummary(s, e);
    this.dirty.add(id);
  }

  deleted(ids: readonly string[]): void {
    for (const id of ids) {
      this.known.delete(id);
      this.stored.delete(id);
      this.dirty.delete(id);
    }
  }

  /** At a clean close: write what changed (or everything, over stale rows) and mark it exact. */
  async persist(): Promise<void> {
    if (this.current && this.dirty.size === 0) return;
    const ids = this.reset ? [...this.known.keys()] : [...this.dirty];
    const rows = ids.flatMap((id): [string, SessionSummary][] => {
      const s = this.known.get(id);
      return s ? [[id, s]] : [];
    });
    await this.catalog.add([{ op: 'summaries', rows, ...(this.reset ? { reset: true } : {}), current: true }]);
    this.current = true;
    this.reset = false;
    this.dirty.clear();
  }
}

/** A stored summary's JSON; an unreadable one is unknown, so folded from its log like a stale one. */
function parsed(text: string): SessionSummary | undefined {
  try {
    return JSON.parse(text) as SessionSummary;
  } catch {
    return undefined;
  }
}
