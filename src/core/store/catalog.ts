import type { Database } from 'sql.js';
import type { SessionHeader } from '../session/events';
import type { SessionSummary } from '../session/summary';
import { JournaledDb, type JournaledDbOptions } from './journaled-db';
import { prepared } from './prepared';
import { CATALOG_SCHEMA } from './schema';

export type CatalogOp =
  | { op: 'session'; header: SessionHeader; tree: string }
  /** `tree`: this was that tree's last session; its files go (decision 0098). */
  | { op: 'delete'; id: string; tree?: string }
  /** Session summaries (`reset`: every earlier row goes first) and whether they are exact now. */
  | { op: 'summaries'; rows: [string, SessionSummary][]; reset?: boolean; current: boolean };

interface Entry {
  header: SessionHeader;
  tree: string;
}

/** The meta row naming a tree whose last session was deleted: its files are leftovers. */
const DROPPED = 'dropped-tree:';

type Apply<K extends CatalogOp['op']> = (db: Database, p: Extract<CatalogOp, { op: K }>) => void;

const APPLY: { [K in CatalogOp['op']]: Apply<K> } = {
  // The statements a fan-out runs for each child (and a close for each summary) are prepared
  // once; the JSON bound as UTF-8 bytes and cast to TEXT, as tree.ts binds its chunks.
  session: (db, p) => {
    prepared(db, 'INSERT OR REPLACE INTO sessions (id, tree, parent, header) VALUES (?, ?, ?, CAST(? AS TEXT))').run([
      p.header.id,
      p.tree,
      p.header.parentSession ?? null,
      Buffer.from(JSON.stringify(p.header), 'utf8'),
    ]);
    // A tree of that name is in use again (a new root with a deleted one's id).
    prepared(db, 'DELETE FROM meta WHERE key = ?').run([DROPPED + p.tree]);
  },
  delete: (db, p) => {
    db.run('DELETE FROM sessions WHERE id = ?', [p.id]);
    db.run('DELETE FROM summaries WHERE id = ?', [p.id]);
    if (p.tree !== undefined) db.run('INSERT OR REPLACE INTO meta (key, value) VALUES (?, 1)', [DROPPED + p.tree]);
  },
  summaries: (db, p) => {
    if (p.reset) db.run('DELETE FROM summaries');
    const row = prepared(db, 'INSERT OR REPLACE INTO summaries (id, summary) VALUES (?, CAST(? AS TEXT))');
    for (const [id, s] of p.rows) row.run([id, Buffer.from(JSON.stringify(s), 'utf8')]);
    db.run("INSERT OR REPLACE INTO meta (key, value) VALUES ('summaries', ?)", [p.current ? 'current' : 'stale']);
  },
};

/** Every session header and the tree file holding its events; small, kept in memory. */
export class Catalog {
  private readonly entries = new Map<string, Entry>();
  private readonly kids = new Map<string, string[]>();
  /** Trees whose last session was deleted: files of theirs still on disk are leftovers (a crash before their removal). */
  private readonly droppedTrees = new Set<string>();

  private constructor(private readonly jdb: JournaledDb<CatalogOp>) {
    const res = jdb.db.exec('SELECT tree, header FROM sessions ORDER BY rowid');
    for (const [tree, header] of res[0]?.values ?? []) this.index({ op: 'session', tree: String(tree), header: JSON.parse(String(header)) });
    const dropped = jdb.db.exec(`SELECT substr(key, ${DROPPED.length + 1}) FROM meta WHERE substr(key, 1, ${DROPPED.length}) = ?`, [DROPPED]);
    for (const [tree] of dropped[0]?.values ?? []) this.droppedTrees.add(String(tree));
  }

  /**
   * The stored summaries as their JSON text (parsed when first asked for: an open reads none),
   * when the last close left them exact; else none (fold the logs).
   */
  storedSummaries(): Map<string, string> | undefined {
    const db = this.jdb.db;
    if (db.exec("SELECT value FROM meta WHERE key = 'summaries'")[0]?.values[0]?.[0] !== 'current') return undefined;
    const out = new Map<string, string>();
    for (const [id, summary] of db.exec('SELECT id, summary FROM summaries')[0]?.values ?? [])
      if (this.entries.has(String(id))) out.set(String(id), String(summary));
    return out;
  }

  static async open(dir: string, opts: JournaledDbOptions): Promise<Catalog> {
    const jdb = await JournaledDb.open<CatalogOp>(
      dir,
      'catalog',
      {
        schema: CATALOG_SCHEMA,
        apply: (db, p) => APPLY[p.op](db, p as never),
      },
      opts,
    );
    return new Catalog(jdb);
  }

  get quarantined() {
    return this.jdb.quarantined;
  }

  /**
   * Entries may be missing: the journal was damaged, or a crash tore its last record (a
   * createSession whose tree write landed but whose catalog write did not).
   */
  get mayHaveLost(): boolean {
    return this.jdb.quarantined.length > 0 || this.jdb.tornTail;
  }

  async add(ops: CatalogOp[]): Promise<void> {
    await this.jdb.write(ops);
    for (const op of ops) this.index(op);
  }

  private index(op: CatalogOp): void {
    if (op.op === 'summaries') return;
    if (op.op === 'delete') {
      if (op.tree !== undefined) this.droppedTrees.add(op.tree);
      const parent = this.entries.get(op.id)?.header.parentSession;
      this.entries.delete(op.id);
      this.kids.delete(op.id);
      if (parent)
        this.kids.set(
          parent,
          (this.kids.get(parent) ?? []).filter((k) => k !== op.id),
        );
      return;
    }
    this.droppedTrees.delete(op.tree);
    const known = this.entries.has(op.header.id);
    this.entries.set(op.header.id, { header: op.header, tree: op.tree });
    if (!known && op.header.parentSession) {
      const list = this.kids.get(op.header.parentSession) ?? [];
      list.push(op.header.id);
      this.kids.set(op.header.parentSession, list);
    }
  }

  get(id: string): Entry | undefined {
    return this.entries.get(id);
  }
  headers(): SessionHeader[] {
    return [...this.entries.values()].map((e) => structuredClone(e.header));
  }
  /** Every header as kept, no copy: an entry's header is replaced, never changed in place. */
  headerRefs(): Readonly<SessionHeader>[] {
    return [...this.entries.values()].map((e) => e.header);
  }
  children(id: string): SessionHeader[] {
    return (this.kids.get(id) ?? []).map((k) => structuredClone(this.entries.get(k)!.header));
  }
  /** Whether `tree`'s last session was deleted (and no session uses its name since). */
  dropped(tree: string): boolean {
    return this.droppedTrees.has(tree);
  }
  /** Whether every session listed in `tree` is one of `ids` (deleting them empties it). */
  holdsOnly(tree: string, ids: readonly string[]): boolean {
    const set = new Set(ids);
    for (const [id, e] of this.entries) if (e.tree === tree && !set.has(id)) return false;
    return true;
  }
  trees(): Set<string> {
    return new Set([...this.entries.values()].map((e) => e.tree));
  }
  /** The session and all its descendants, children after parents. */
  subtree(id: string): string[] {
    const out: string[] = [];
    const queue = [id];
    while (queue.length > 0) {
      const cur = queue.shift()!;
      if (!this.entries.has(cur)) continue;
      out.push(cur);
      queue.push(...(this.kids.get(cur) ?? []));
    }
    return out;
  }

  checkpoint(): Promise<void> {
    return this.jdb.checkpoint();
  }

  close(opts?: { foldFrom?: number }): Promise<void> {
    return this.jdb.close(opts);
  }
}
