import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Database } from 'sql.js';
import { describeError } from '../errors';
import { loadVerified, type Schema, seal, tune } from './db-file';
import { type Quarantine, StoreError } from './errors';
import { moveAside, readWhole, removeStaleTemps, writeFileAtomic } from './fsutil';
import { admitGroup, type Pending } from './group-record';
import { encodeRecord, JournalFile, type JournalRecord, maxRecordBytes, RecordTooLarge, scanJournal } from './journal';
import { forgetPrepared } from './prepared';
import { quarantineAll } from './quarantine';
import { loadSqlJs } from './sqljs';
import type { StoreCounters } from './stats';

export interface DbHooks<P> {
  schema: Schema;
  /**
   * Refuse a payload before it is written, against durable state plus `batch`, a scratch
   * map shared by the earlier payloads of the same group commit. Throw to refuse.
   */
  check?(payload: P, batch: Map<string, unknown>): void;
  /** Apply a durable payload to the in-memory database (live and on replay). */
  apply(db: Database, payload: P): void;
  /**
   * The payloads of one group commit (checked, in order) as fewer payloads with the same effect,
   * written as its one record (decision 0088). Must not change the given payloads.
   */
  merge?(payloads: P[]): P[];
}

export interface JournaledDbOptions {
  /** Checkpoint once the journal holds this many bytes, or the database file's size if larger. */
  checkpointBytes?: number;
  /** Where syncs, commits and records are counted (the store's, shared by its files). */
  counters?: StoreCounters;
  /** The largest journal record a write may make (tests lower it); never above MAX_RECORD_BYTES, the most an open reads back. */
  maxRecordBytes?: number;
}

const DEFAULT_CHECKPOINT_BYTES = 8 * 1024 * 1024;

/**
 * One sql.js database made durable by a checksummed journal beside it (DESIGN §3).
 * Writes: journal append + fdatasync (cost ∝ bytes appended), then apply in memory.
 * Checkpoints: export → temp → fsync → rename → fsync folder, then the journal is reset;
 * the database remembers the last journal record it holds (its lsn), so a crash between
 * rename and reset replays nothing twice. One writer: a queue with group commit.
 */
export class JournaledDb<P extends object> {
  private queue: Pending<P>[] = [];
  private flushing: Promise<void> | null = null;
  private closed = false;
  private dbBytes: number;
  /** Opening cut a torn tail off the journal: records a crash interrupted (or damage) are gone. */
  tornTail = false;
  /** Set when the in-memory database holds a write the journal failed to make durable. */
  private diverged: StoreError | undefined;
  private released = false;

  private constructor(
    readonly dbFile: string,
    private readonly database: Database,
    private journal: JournalFile,
    private readonly hooks: DbHooks<P>,
    private lsn: number,
    private readonly opts: JournaledDbOptions,
    dbBytes: number,
    /** Files moved aside while opening (a damaged journal whose good prefix was kept). */
    readonly quarantined: Quarantine[],
  ) {
    this.dbBytes = dbBytes;
  }

  /** Open (or create) `<base>.db` + `<base>.wal` in `dir`. A damaged database is quarantined and refused. */
  static async open<P extends object>(dir: string, base: string, hooks: DbHooks<P>, opts: JournaledDbOptions = {}): Promise<JournaledDb<P>> {
    const dbFile = path.join(dir, `${base}.db`);
    const walFile = path.join(dir, `${base}.wal`);
    await removeStaleTemps(dir, `${base}.db`);
    const SQL = await loadSqlJs();
    const quarantined: Quarantine[] = [];

    const hasDb = fs.existsSync(dbFile);
    let db: Database;
    let dbLsn = 0;
    let migrated = false;
    let dbBytes = 0;
    if (hasDb) {
      // Gone since existsSync (never, under the lock): readFile throws what it did before.
      const bytes = (await readWhole(dbFile)) ?? (await fs.promises.readFile(dbFile));
      dbBytes = bytes.length;
      try {
        ({ db, lsn: dbLsn, migrated } = loadVerified(SQL, bytes, hooks.schema));
      } catch (err) {
        if (err instanceof StoreError && err.code === 'SCHEMA_TOO_NEW') throw new StoreError(err.code, `${dbFile}: ${err.message}`, dbFile);
        throw await quarantineAll(dbFile, walFile, describeError(err), err);
      }
    } else {
      db = new SQL.Database();
      tune(db);
      hooks.schema.create(db);
      db.run('INSERT INTO meta(key, value) VALUES (?, ?), (?, ?), (?, ?)', ['kind', hooks.schema.kind, 'schema', hooks.schema.version, 'lsn', 0]);
    }

    const wal = (await readWhole(walFile)) ?? Buffer.alloc(0);
    const scan = scanJournal(wal);
    const fresh = scan.records.filter((r) => r.lsn > dbLsn);
    if (fresh.length > 0 && fresh[0].lsn !== dbLsn + 1) {
      db.close();
      const why = hasDb
        ? `the journal continues at record ${fresh[0].lsn} but the database ends at ${dbLsn}`
        : `the database file is missing but the journal starts at record ${fresh[0].lsn}`;
      throw await quarantineAll(dbFile, walFile, why);
    }
    let lsn = dbLsn;
    try {
      db.run('BEGIN');
      for (const rec of fresh) {
        if (rec.lsn !== lsn + 1) throw new Error(`journal record ${rec.lsn} follows ${lsn}`);
        for (const p of rec.ops as P[]) hooks.apply(db, p);
        lsn = rec.lsn;
      }
      db.run('COMMIT');
    } catch (err) {
      db.close();
      throw await quarantineAll(dbFile, walFile, `the journal does not replay: ${describeError(err)}`, err);
    }

    const journal = await JournalFile.open(walFile, wal.length, opts.counters);
    const jdb = new JournaledDb<P>(dbFile, db, journal, hooks, lsn, opts, dbBytes, quarantined);
    // An upgraded file is written back now: otherwise it stays old on disk until the next
    // checkpoint (never, if nothing is written) and is migrated again at every open.
    if (migrated) await jdb.writeCheckpoint();
    if (scan.tail === 'torn') {
      // The unacknowledged write a crash interrupted: drop it so new records follow good ones.
      await journal.truncate(scan.goodBytes);
      jdb.tornTail = true;
    } else if (scan.tail === 'corrupt') {
      // Keep the good prefix (checkpointed now), move the damaged journal aside, start a new one.
      await journal.close();
      await jdb.writeCheckpoint();
      const movedTo = (await moveAside(walFile)) ?? walFile;
      quarantined.push({ file: walFile, movedTo, reason: scan.reason ?? 'damaged journal', at: new Date().toISOString() });
      jdb.journal = await JournalFile.open(walFile, 0, opts.counters);
    }
    return jdb;
  }

  /** Durably append payloads as one journal record; resolves once on disk and applied. */
  write(payloads: P[]): Promise<void> {
    if (this.closed) return Promise.reject(new StoreError('CLOSED', `The store file ${this.dbFile} is closed`, this.dbFile));
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ payloads, resolve, reject });
      this.kick();
    });
  }

  /**
   * Start the writer loop unless it runs. Work queued after the loop's last look at the
   * queue (by a caller resumed before the loop's promise settled) restarts it.
   *
   * Group commit (decision 0063): an idle loop starts on the event loop's next turn, not now,
   * so every write issued before this code yields — a turn's claim, start, message and request
   * header; a fan-out's children — is written with the first and covered by its one
   * fdatasync. Writes that arrive while that sync runs wait in the queue and share the next.
   */
  private kick(): void {
    this.flushing ??= new Promise<void>((next) => setImmediate(next))
      .then(() => this.flush())
      .finally(() => {
        this.flushing = null;
        if (this.queue.length > 0) this.kick();
      });
  }

  /** The in-memory database (reads); refused once it holds a write that never became durable. */
  get db(): Database {
    this.assertReadable();
    return this.database;
  }

  /** Throws once the in-memory state holds a write that never became durable (reads would show it). */
  assertReadable(): void {
    if (this.diverged) throw this.diverged;
  }

  /** Bytes in the journal not yet folded into the database file. */
  get journalBytes(): number {
    return this.journal.size;
  }

  private async flush(): Promise<void> {
    while (this.queue.length > 0) {
      const cut = this.queue.findIndex((q) => q.checkpoint);
      if (cut === 0) {
        const req = this.queue.shift()!;
        await this.checkpointNow().then(req.resolve, req.reject);
        continue;
      }
      const items = cut < 0 ? this.queue.splice(0) : this.queue.splice(0, cut);
      const group = admitGroup(items, this.lsn + 1, this.hooks, (lsn, ops) => encode(lsn, ops, this.dbFile, this.opts.maxRecordBytes));
      if (!group) continue;
      const { accepted, ops, record } = group;
      const lsn = this.lsn + group.records;
      // The record is applied to the in-memory database while its fdatasync runs: sql.js is
      // CPU, the fsync is waiting, so the apply costs the append no time, and the next write
      // comes sooner after this fsync (which, on the disks measured, makes that one faster).
      // Nothing is acknowledged before the fdatasync returns.
      let applied = false;
      let applyError: unknown;
      const apply = (): void => {
        applied = true;
        try {
          this.database.run('BEGIN');
          for (const p of ops) this.hooks.apply(this.database, p);
          this.database.run('COMMIT');
        } catch (err) {
          applyError = err;
        }
      };
      try {
        await this.journal.append(record, apply);
      } catch (err) {
        const what = `Could not write to ${this.journal.file}: ${describeError(err)}. Nothing acknowledged was lost; free disk space or check permissions`;
        if (!applied) {
          const e = new StoreError('IO', `${what} and retry.`, this.journal.file, err);
          for (const item of accepted) item.reject(e);
          continue;
        }
        // Applied in memory but not durable (the journal was cut back): this file's reads and
        // writes stop until a reopen rebuilds it from disk, where the record is absent.
        const e = new StoreError('IO', `${what}, then reopen the store (reload the window or rerun the command).`, this.journal.file, err);
        this.closed = true;
        this.diverged = e;
        for (const item of [...accepted, ...this.queue.splice(0)]) item.reject(e);
        return;
      }
      if (applyError !== undefined) {
        // Durable but not applied: refuse further writes; reopening replays the journal.
        this.closed = true;
        const e = new StoreError(
          'IO',
          `Applying a durable record to ${this.dbFile} failed: ${describeError(applyError)}. Reopen the store to replay it.`,
          this.dbFile,
          applyError,
        );
        for (const item of [...accepted, ...this.queue.splice(0)]) item.reject(e);
        return;
      }
      this.lsn = lsn;
      if (this.opts.counters) this.opts.counters.records += accepted.length;
      for (const item of accepted) item.resolve();
      if (this.journal.size >= Math.max(this.opts.checkpointBytes ?? DEFAULT_CHECKPOINT_BYTES, this.dbBytes)) {
        await this.checkpointNow().catch(() => undefined); // the journal still holds everything; retried next time
      }
    }
  }

  /**
   * Fold the journal into the database file now, after the writes queued before it. It runs
   * in the writer loop: a write landing between the export and the journal reset would be
   * wiped from the journal while missing from the database file.
   */
  checkpoint(): Promise<void> {
    if (this.closed) return Promise.reject(new StoreError('CLOSED', `The store file ${this.dbFile} is closed`, this.dbFile));
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ payloads: [], checkpoint: true, resolve, reject });
      this.kick();
    });
  }

  private async checkpointNow(): Promise<void> {
    if (this.journal.size === 0 && fs.existsSync(this.dbFile)) return;
    await this.writeCheckpoint();
    await this.journal.reset();
  }

  private async writeCheckpoint(): Promise<void> {
    this.database.run("UPDATE meta SET value = ? WHERE key = 'lsn'", [this.lsn]);
    const bytes = this.database.export(); // never inside a transaction: writes are committed before we get here
    seal(bytes);
    // export() closed and reopened the connection: its statements are freed, its pragmas reset.
    forgetPrepared(this.database);
    tune(this.database);
    this.dbBytes = bytes.length;
    if (this.opts.counters) this.opts.counters.syncs += 2; // the temp file, then the folder after the rename
    await writeFileAtomic(this.dbFile, bytes);
  }

  private async drain(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  /**
   * Finish queued writes, checkpoint, release the file. `foldFrom`: checkpoint only a journal of
   * at least this many bytes; a smaller one stays, durable, for the next open to replay.
   */
  async close(opts: { checkpoint?: boolean; foldFrom?: number } = {}): Promise<void> {
    if (this.released) return;
    this.released = true;
    // A file stopped by a failed write is released without a checkpoint: its memory is not what the disk holds.
    const healthy = !this.closed;
    this.closed = true;
    await this.drain();
    const fold = (opts.checkpoint ?? true) && this.journal.size >= (opts.foldFrom ?? 0);
    if (healthy && fold) await this.checkpointNow().catch(() => undefined);
    await this.journal.close().catch(() => undefined);
    this.database.close();
  }
}

/**
 * A journal record; BAD_EVENT when the payloads are not JSON (a BigInt, a cycle), TOO_LARGE when
 * the record would pass what an open reads back (decision 0098): refused before a byte is written.
 */
function encode(lsn: number, ops: unknown[], dbFile: string, maxBytes?: number): Buffer {
  try {
    return encodeRecord({ lsn, ops }, maxBytes);
  } catch (err) {
    const bytes =
      err instanceof RecordTooLarge ? err.bytes : err instanceof RangeError && /string length/i.test(err.message) ? Number.POSITIVE_INFINITY : undefined;
    if (bytes !== undefined) {
      const size = Number.isFinite(bytes) ? `${mib(bytes)} MiB` : 'more than a string can hold';
      throw new StoreError(
        'TOO_LARGE',
        `A write to ${dbFile} is ${size} as one journal record, past the ${mib(maxRecordBytes(maxBytes))} MiB limit a store can read back; nothing of it was written. Append its events in smaller batches; a single event this large cannot be stored (shorten it, or keep its content in a file).`,
        dbFile,
        err,
      );
    }
    throw new StoreError('BAD_EVENT', `A record for ${dbFile} cannot be stored as JSON (${describeError(err)}); remove that value and retry.`, dbFile, err);
  }
}

function mib(bytes: number): string {
  return (bytes / (1024 * 1024)).toFixed(1);
}

export type { JournalRecord };
