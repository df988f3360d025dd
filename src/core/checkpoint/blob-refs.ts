import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import type { SessionEvent, SessionHeader } from '../session/events';

// Which blobs each session's log names (decision 0121): a deletion's sweep (`forget.ts`) keeps
// what any remaining session names without reading their logs. Each session's entry is the set
// of ids its `checkpoint` events name up to a watermark (`length`: the events it covers), with
// a count per blob of the sessions naming it. Entries follow every durable write of the store
// (`onAppended`: the recorder's steps, a rewind's record, a recovery's, a fork's copied seed),
// and are kept in `checkpoints/refs.json` (after each sweep, and at a clean close when an append
// named a blob) for the next process. Before a sweep trusts an entry, its watermark is checked
// against the session's length as the store's kept summary says it (no log read): a log that
// grew since (a kill before the file was written again, a close after appends that named no
// blob, a process that kept no index) has only its new events read, and a session with no usable
// entry has its log read once. So the file may lag, be lost or be unreadable: the cost is reads,
// never a blob a log names.

/** What the index needs of the store. */
export interface RefsSource {
  listRefs(): readonly Readonly<SessionHeader>[];
  header(id: string): SessionHeader | undefined;
  has(id: string): boolean;
  /** The session's length without reading its log (its kept summary), undefined when unknown. */
  summaryRef(id: string): { readonly length: number } | undefined;
  readEvents(id: string, fromSeq?: number): Promise<SessionEvent[]>;
  onAppended(fn: (id: string, events: readonly SessionEvent[]) => void): () => void;
}

interface Entry {
  /** The header's `createdAt`: an entry of an earlier session of the same id is never taken for this one's. */
  createdAt: string;
  /** The first seq it covers (0 once whole; more when it began with an append before the file was read). */
  from: number;
  /** Events [from, length) are covered; ids of a later append past a gap are in `blobs` too (over-kept, never missing). */
  length: number;
  blobs: Set<string>;
}

/** The persisted form: per session, its header's createdAt, the events covered, the ids they name. */
interface RefsFile {
  v: 1;
  sessions: Record<string, { c: string; n: number; b: string[] }>;
}

const HEX = /[0-9a-f]{40}/g;
/** Every 40-hex run of `text` (an object id, or what looks like one: over-kept, never missed). */
export const hexIds = (text: string): string[] => text.match(HEX) ?? [];
const ID = /^[0-9a-f]{40}$/;
export const REFS_FILE = 'refs.json';

/** Every id a checkpoint event names (any 40-hex run: over-keeps a name that looks like one, never misses a field). */
export function checkpointIds(events: readonly SessionEvent[]): string[] {
  const out: string[] = [];
  for (const e of events) if (e.type === 'checkpoint') out.push(...hexIds(JSON.stringify(e)));
  return out;
}

export class BlobRefs {
  private readonly entries = new Map<string, Entry>();
  /** Per blob id: how many entries name it. */
  private readonly counts = new Map<string, number>();
  private loaded: Promise<void> | undefined;
  /** The file lacks an id an entry names (an append named a blob): a close writes it. */
  private named = false;
  /** Entries moved otherwise (watermarks, entries made or dropped): written at the next sweep. */
  private dirty = false;
  private saving: Promise<void> = Promise.resolve();

  constructor(
    private readonly dir: string,
    private readonly store: RefsSource,
  ) {
    store.onAppended((id, events) => this.appended(id, events));
  }

  private get file(): string {
    return path.join(this.dir, REFS_FILE);
  }

  /** Whether a remaining session's log names the id (as of the last `current()`, and every durable write since). */
  has(id: string): boolean {
    return (this.counts.get(id) ?? 0) > 0;
  }

  /** Deleted sessions: what they named counts no more. */
  drop(ids: readonly string[]): void {
    for (const id of ids) this.remove(id);
  }

  /**
   * Make the index whole for every session the store lists, reading only what it lacks: an
   * entry's events past its watermark, or a whole log without an entry. A log that cannot be
   * read of a session still listed throws (the sweep then removes nothing).
   */
  async current(): Promise<this> {
    await this.load();
    const listed = this.store.listRefs();
    const ids = new Set(listed.map((h) => h.id));
    for (const id of [...this.entries.keys()]) if (!ids.has(id)) this.remove(id);
    for (const h of listed) {
      let e = this.entries.get(h.id);
      if (e && e.createdAt !== h.createdAt) {
        this.remove(h.id);
        e = undefined;
      }
      const known = this.store.summaryRef(h.id)?.length;
      if (e && e.from === 0 && known !== undefined && e.length === known) continue;
      try {
        await this.catchUp(h.id, e && e.from === 0 && known !== undefined && e.length < known ? e : undefined);
      } catch (err) {
        if (this.store.has(h.id)) throw err;
        this.remove(h.id); // deleted meanwhile
      }
    }
    return this;
  }

  /**
   * Write the index for the next process (temp + rename; unsynced: a file lost or torn is only
   * read again from the logs). `when`: `'changed'` (a sweep) writes whatever moved; `'named'` (a
   * close) only when an append named a blob since the last write. Watermarks need not advance
   * for correctness: an entry behind its log has only its new events read at the next sweep,
   * which then writes the file; a close after appends that named nothing leaves it as it is.
   */
  persist(when: 'changed' | 'named' = 'changed'): Promise<void> {
    this.saving = this.saving.then(async () => {
      if (!(when === 'named' ? this.named : this.dirty || this.named) || !fs.existsSync(this.dir)) return;
      await this.load();
      this.dirty = false;
      this.named = false;
      const out: RefsFile = { v: 1, sessions: {} };
      for (const [id, e] of this.entries) if (e.from === 0) out.sessions[id] = { c: e.createdAt, n: e.length, b: [...e.blobs] };
      const temp = `${this.file}.tmp`; // one writing process per store (its lock), and one write at a time here
      try {
        await fsp.writeFile(temp, JSON.stringify(out));
        await fsp.rename(temp, this.file);
      } catch {
        this.dirty = true; // tried again at the next sweep or close
        this.named = true;
        await fsp.rm(temp, { force: true }).catch(() => undefined);
      }
    });
    return this.saving;
  }

  /** Read the events an entry lacks (from its watermark, or the whole log without one) and take their ids. */
  private async catchUp(id: string, e: Entry | undefined): Promise<void> {
    const from = e ? e.length : 0;
    const events = await this.store.readEvents(id, from);
    const now = this.entries.get(id);
    if (e) {
      if (now !== e) return; // replaced or dropped while read: the newer entry stands
      this.add(e, checkpointIds(events));
      e.length = Math.max(e.length, from + events.length);
      return;
    }
    // The whole log: a new whole entry, with what appends meanwhile brought to the old one.
    const header = this.store.header(id);
    if (!header) return;
    const whole: Entry = { createdAt: header.createdAt, from: 0, length: events.length, blobs: new Set() };
    const kept = now?.createdAt === header.createdAt ? [...now.blobs] : [];
    this.remove(id);
    this.entries.set(id, whole);
    this.add(whole, [...checkpointIds(events), ...kept]);
  }

  /** A durable write: a session's creation (seq 0) starts its entry anew; an append extends it. Never throws. */
  private appended(id: string, events: readonly SessionEvent[]): void {
    let e = this.entries.get(id);
    // No events: a session published empty (an entry covering nothing; were it an append, the check against its length reads the log).
    const first = events[0]?.seq ?? (e ? e.length : 0);
    if (first === 0 || !e) {
      const createdAt = this.store.header(id)?.createdAt;
      if (createdAt === undefined) return;
      this.remove(id);
      e = { createdAt, from: first, length: first, blobs: new Set() };
      this.entries.set(id, e);
    }
    if (this.add(e, checkpointIds(events))) this.named = true;
    if (first <= e.length) e.length = Math.max(e.length, first + events.length);
    this.dirty = true;
  }

  /** Read the file once, merged under what this process has written since it began. */
  private load(): Promise<void> {
    this.loaded ??= (async () => {
      const stored = parsed(await fsp.readFile(this.file, 'utf8').catch(() => ''));
      for (const [id, s] of Object.entries(stored)) {
        const e = this.entries.get(id);
        if (!e) {
          const fresh: Entry = { createdAt: s.c, from: 0, length: s.n, blobs: new Set() };
          this.entries.set(id, fresh);
          this.add(fresh, s.b);
        } else if (e.from > 0 && e.createdAt === s.c && e.from <= s.n) {
          // Appends of this process before the file was read continue the file's entry.
          this.add(e, s.b);
          e.from = 0;
          e.length = Math.max(e.length, s.n);
        }
      }
    })();
    return this.loaded;
  }

  /** Take `ids` into the entry; whether one was new to it. */
  private add(e: Entry, ids: readonly string[]): boolean {
    let added = false;
    for (const id of ids) {
      if (e.blobs.has(id)) continue;
      e.blobs.add(id);
      this.counts.set(id, (this.counts.get(id) ?? 0) + 1);
      added = true;
    }
    this.dirty = true;
    return added;
  }

  private remove(sessionId: string): void {
    const e = this.entries.get(sessionId);
    if (!e) return;
    this.entries.delete(sessionId);
    for (const id of e.blobs) {
      const n = (this.counts.get(id) ?? 1) - 1;
      if (n > 0) this.counts.set(id, n);
      else this.counts.delete(id);
    }
    this.dirty = true;
  }
}

/** The file's entries that are well formed; none when it is absent, torn or of another version. */
function parsed(text: string): RefsFile['sessions'] {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return {};
  }
  const sessions = (raw as Partial<RefsFile> | null)?.v === 1 ? (raw as RefsFile).sessions : undefined;
  if (typeof sessions !== 'object' || sessions === null) return {};
  const out: RefsFile['sessions'] = {};
  for (const [id, s] of Object.entries(sessions)) {
    if (typeof s?.c !== 'string' || !Number.isSafeInteger(s.n) || s.n < 0 || !Array.isArray(s.b)) continue;
    if (!s.b.every((b) => typeof b === 'string' && ID.test(b))) continue;
    out[id] = s;
  }
  return out;
}
