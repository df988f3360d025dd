import type { Database } from 'sql.js';
import { SessionValidationError } from '../session/errors';
import type { SessionEvent, SessionHeader } from '../session/events';
import { checkEventShape } from '../session/validate';
import { StoreError } from './errors';
import { JournaledDb, type JournaledDbOptions } from './journaled-db';
import { prepared } from './prepared';
import { TREE_SCHEMA } from './schema';

export type TreeOp = { op: 'session'; header: SessionHeader } | { op: 'events'; session: string; events: SessionEvent[] } | { op: 'delete'; session: string };

/** The events of one conversation tree (a root and its descendants) in one journaled sql.js file. */
export class TreeFile {
  /** Durable next seq per session: the contiguity check runs against it without a query. */
  private readonly nextSeq = new Map<string, number>();

  private constructor(
    readonly name: string,
    private readonly jdb: JournaledDb<TreeOp>,
  ) {
    const res = jdb.db.exec('SELECT id, next_seq FROM sessions');
    for (const [id, next] of res[0]?.values ?? []) this.nextSeq.set(String(id), Number(next));
  }

  static async open(dir: string, name: string, opts: JournaledDbOptions): Promise<TreeFile> {
    let tree: TreeFile | undefined;
    const jdb = await JournaledDb.open<TreeOp>(
      dir,
      name,
      {
        schema: TREE_SCHEMA,
        check: (p, batch) => tree!.check(p, batch),
        apply: (db, p) => applyTreeOp(db, p, tree?.nextSeq),
        merge: mergeTreeOps,
      },
      opts,
    );
    tree = new TreeFile(name, jdb);
    return tree;
  }

  get file(): string {
    return this.jdb.dbFile;
  }
  get quarantined() {
    return this.jdb.quarantined;
  }

  /** Refused (IO, as every read) once a write failed to become durable: the counts would include it. */
  has(id: string): boolean {
    this.jdb.assertReadable();
    return this.nextSeq.has(id);
  }
  length(id: string): number {
    this.jdb.assertReadable();
    return this.nextSeq.get(id) ?? 0;
  }

  write(ops: TreeOp[]): Promise<void> {
    return this.jdb.write(ops);
  }

  /** The stored header (the copy kept so a lost catalog can be rebuilt from tree files). */
  headers(): SessionHeader[] {
    const res = this.jdb.db.exec('SELECT header FROM sessions');
    return (res[0]?.values ?? []).map(([h]) => JSON.parse(String(h)) as SessionHeader);
  }

  /** Events of one session from `fromSeq`, without touching the other sessions of the tree. */
  events(id: string, fromSeq = 0): SessionEvent[] {
    const stmt = this.jdb.db.prepare('SELECT body FROM chunks WHERE session = ? AND last_seq >= ? ORDER BY first_seq');
    // Each row is one batch as a JSON array: parsed row by row, never joined into one copy.
    let all: SessionEvent[] = [];
    try {
      stmt.bind([id, fromSeq]);
      while (stmt.step()) {
        const batch = JSON.parse(stmt.get()[0] as string) as SessionEvent[];
        if (all.length === 0) all = batch;
        else for (const e of batch) all.push(e);
      }
    } finally {
      stmt.free();
    }
    return fromSeq > 0 && all.length > 0 && all[0].seq < fromSeq ? all.slice(fromSeq - all[0].seq) : all;
  }

  checkpoint(): Promise<void> {
    return this.jdb.checkpoint();
  }
  close(opts?: { checkpoint?: boolean; foldFrom?: number }): Promise<void> {
    return this.jdb.close(opts);
  }

  /** Refuse what would break the log: an unknown session, a seq gap, a malformed event. */
  private check(p: TreeOp, batch: Map<string, unknown>): void {
    const key = (id: string) => `next:${id}`;
    // A key present with `undefined` is a session deleted earlier in the same record.
    const next = (id: string): number | undefined => (batch.has(key(id)) ? (batch.get(key(id)) as number | undefined) : this.nextSeq.get(id));
    if (p.op === 'delete') {
      batch.set(key(p.session), undefined);
      return;
    }
    if (p.op === 'session') {
      if (next(p.header.id) !== undefined) throw new StoreError('DUPLICATE_SESSION', `Session ${p.header.id} already exists in ${this.file}`, this.file);
      batch.set(key(p.header.id), 0);
      return;
    }
    let seq = next(p.session);
    if (seq === undefined)
      throw new StoreError(
        'MISSING_DATA',
        `Session ${p.session} has no data in ${this.file} (if that file was quarantined, its sessions are in the *.corrupt-* copy)`,
        this.file,
      );
    if (p.events.length === 0) return;
    for (const e of p.events) {
      try {
        checkEventShape(e, seq);
      } catch (err) {
        const gap = err instanceof SessionValidationError && err.code === 'SEQ_GAP';
        throw new StoreError(gap ? 'SEQ_GAP' : 'BAD_EVENT', `Session ${p.session}: ${(err as Error).message}`, this.file, err);
      }
      seq++;
    }
    batch.set(key(p.session), seq);
  }
}

/**
 * A group commit's ops with each session's event appends joined into one (one chunk row, two
 * statements, instead of two statements per append): a fan-out's children append a few events
 * each, many at a time (decision 0088). Ops of different sessions touch different rows, so an
 * append may join an earlier one of its session across them; never across that session's own
 * creation or deletion. The same rows result, the events in the same order, fewer of them.
 */
export function mergeTreeOps(ops: TreeOp[]): TreeOp[] {
  const out: TreeOp[] = [];
  const joinable = new Map<string, { op: 'events'; session: string; events: SessionEvent[] }>();
  for (const p of ops) {
    if (p.op !== 'events') {
      joinable.delete(p.op === 'session' ? p.header.id : p.session);
      out.push(p);
      continue;
    }
    const earlier = joinable.get(p.session);
    if (earlier) for (const e of p.events) earlier.events.push(e);
    else {
      const own = { op: 'events' as const, session: p.session, events: [...p.events] };
      joinable.set(p.session, own);
      out.push(own);
    }
  }
  return out;
}

function applyTreeOp(db: Database, p: TreeOp, nextSeq: Map<string, number> | undefined): void {
  if (p.op === 'delete') {
    db.run('DELETE FROM chunks WHERE session = ?', [p.session]);
    db.run('DELETE FROM sessions WHERE id = ?', [p.session]);
    nextSeq?.delete(p.session);
    return;
  }
  if (p.op === 'session') {
    prepared(db, 'INSERT INTO sessions (id, header, next_seq) VALUES (?, CAST(? AS TEXT), 0)').run([
      p.header.id,
      Buffer.from(JSON.stringify(p.header), 'utf8'),
    ]);
    nextSeq?.set(p.header.id, 0);
    return;
  }
  if (p.events.length === 0) return;
  const insert = prepared(db, 'INSERT INTO chunks (session, first_seq, last_seq, body) VALUES (?, ?, ?, CAST(? AS TEXT))');
  // Bound as UTF-8 bytes and cast to TEXT in SQLite: the same TEXT row, but sql.js copies the
  // bytes instead of measuring and encoding a JS string character by character (~0.2 ms a batch).
  for (const row of chunkRows(p.events)) insert.run([p.session, row.first, row.last, Buffer.from(row.json, 'utf8')]);
  const last = p.events[p.events.length - 1].seq;
  prepared(db, 'UPDATE sessions SET next_seq = ? WHERE id = ?').run([last + 1, p.session]);
  nextSeq?.set(p.session, last + 1);
}

/**
 * Characters of JSON past which a batch is stored as several rows. Reading a row makes one
 * string of its body; V8 puts a string past ~128 KB (64 Ki two-byte characters) in its
 * large-object space, on fresh pages, where decoding it cost ~3× parsing it (a 10k-event
 * history written at once — a fork's copy, a session created with its past — was one 4.75 MB
 * row: 21 ms of decoding for 14 ms of parsing). 32 Ki characters stay clear of it whatever the
 * text (decision 0088, amended).
 */
export const CHUNK_CHARS = 32 * 1024;

/** A batch's rows: the whole batch when its JSON is short (every turn's append), else runs of whole events of at most CHUNK_CHARS (an event longer than that is a row of its own). */
export function chunkRows(events: readonly SessionEvent[]): { first: number; last: number; json: string }[] {
  const whole = JSON.stringify(events);
  if (whole.length <= CHUNK_CHARS) return [{ first: events[0].seq, last: events[events.length - 1].seq, json: whole }];
  const rows: { first: number; last: number; json: string }[] = [];
  let parts: string[] = [];
  let size = 2;
  let first = events[0].seq;
  for (const e of events) {
    const json = JSON.stringify(e);
    if (parts.length > 0 && size + json.length + 1 > CHUNK_CHARS) {
      rows.push({ first, last: e.seq - 1, json: `[${parts.join(',')}]` });
      parts = [];
      size = 2;
      first = e.seq;
    }
    parts.push(json);
    size += json.length + 1;
  }
  rows.push({ first, last: events[events.length - 1].seq, json: `[${parts.join(',')}]` });
  return rows;
}
