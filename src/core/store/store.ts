import type { SessionEvent, SessionHeader } from '../session/events';
import { Session } from '../session/session';
import { type SessionSummary, summarize } from '../session/summary';
import { checkHeader } from '../session/validate';
import type { Catalog } from './catalog';
import { hasCleanMarker, leaveCleanMarker, removeCleanMarker } from './clean-marker';
import { guardRead, missingData, type Quarantine, StoreError, unknownSession } from './errors';
import { StoreListeners } from './listeners';
import { LogGate } from './log-gate';
import { Operations } from './operations';
import { StoreCounters, type StoreStats } from './stats';
import { openStoreFolder, storeExists } from './store-folder';
import { Strays } from './strays';
import { SummaryBook } from './summaries';
import type { TreeFile } from './tree';
import { TreeCache, type TreeCacheOptions } from './tree-cache';

export { CLEAN_MARKER } from './clean-marker';

export interface StoreOptions extends TreeCacheOptions {
  /** Open only a store that exists: a folder without one is refused (NO_STORE), and nothing is created in it. */ mustExist?: boolean;
  /**
   * At close, fold a journal into its database file only when it holds at least this many bytes
   * (default 0: every journal). Durability is the journal's either way; a smaller journal is
   * replayed by the next open. A one-shot CLI process skips a checkpoint per file (decision 0085).
   */
  closeFoldsFrom?: number;
}

/**
 * The durable home of every session (DESIGN §3): a catalog of headers plus one journaled
 * sql.js file per conversation tree under `trees/`. One writer per folder (a lock file).
 */
export class Store {
  private readonly openTrees: TreeCache;
  /** Sessions being created, and the unlisted ones a tree file holds (dropped as it opens). */
  private readonly strays: Strays;
  private readonly problemList: Quarantine[] = [];
  /** Operations under way: close waits for them, and refuses new ones (decision 0098). */
  private readonly ops: Operations;
  /** Write CLEAN_MARKER at close: the harness says every turn has ended. */
  private cleanOnClose = false;
  private readonly summaries: SummaryBook;
  private readonly listeners = new StoreListeners();
  /**
   * The one gate every writer of a log no resident agent holds goes through (decision 0129): kept
   * here, with the store every such writer already has, so no part can be made with a gate of its own.
   */
  readonly logGate = new LogGate();

  private constructor(
    readonly dir: string,
    private readonly catalog: Catalog,
    private readonly opts: StoreOptions,
    private readonly unlock: () => void,
    private readonly counters: StoreCounters,
  ) {
    this.problemList.push(...catalog.quarantined);
    this.ops = new Operations(dir);
    this.summaries = new SummaryBook(catalog);
    this.strays = new Strays(catalog);
    this.openTrees = new TreeCache(
      dir,
      opts,
      (q) => this.problemList.push(...q),
      (t) => this.strays.drop(t),
    );
  }

  static async open(dir: string, opts: StoreOptions = {}): Promise<Store> {
    // One set of counters for the catalog and every tree file (`stats()`).
    const counters = new StoreCounters();
    opts = { ...opts, counters };
    const { catalog, unlock, problems, rebuild } = await openStoreFolder(dir, opts.mustExist === true, opts);
    try {
      const store = new Store(dir, catalog, opts, unlock, counters);
      store.problemList.push(...problems);
      // A catalog that lost records is completed from every tree file, not only unknown ones.
      await store.reconcile(rebuild || catalog.mayHaveLost);
      return store;
    } catch (err) {
      unlock();
      throw err;
    }
  }

  /** Whether `dir` holds a store: its catalog (database or journal) is there. */
  static exists(dir: string): Promise<boolean> {
    return storeExists(dir);
  }

  /**
   * True when the last process that ran turns on this store closed it with every turn ended
   * (the marker Harness.close leaves): no stored session has a turn open, so crash recovery
   * need not read every log. Absent after a crash, or for a store older than the marker.
   */
  get closedCleanly(): boolean {
    return hasCleanMarker(this.dir);
  }

  /** Turns may run from now on: the marker goes (durably) until a clean close writes it again. */
  markRunning(): Promise<void> {
    return this.ops.run(async () => {
      this.cleanOnClose = false;
      // The kept summaries stop being exact now too, durably, beside the marker's removal: the
      // first append after an open (a resumed child's accept) then waits for its own write only,
      // not for a catalog write before it (decision 0064).
      const clearing = this.summaries.beforeWrite();
      await removeCleanMarker(this.dir, this.counters);
      await clearing;
    });
  }

  /** Every turn has ended: `close` leaves the marker (after the tree files are closed, beside the catalog's last write). */
  markCleanOnClose(): void {
    this.cleanOnClose = true;
  }

  /**
   * What durable writes have cost since open (a copy): fsyncs, group commits, journal records,
   * events. Syncs per event below one is group commit at work (decision 0063).
   */
  stats(): StoreStats {
    return this.counters.snapshot();
  }

  /** Files moved aside since this store was opened, with why. */
  get problems(): readonly Quarantine[] {
    return this.problemList;
  }

  list(): SessionHeader[] {
    return this.catalog.headers();
  }
  /**
   * Every header without a copy, read-only (a later write replaces a header, never changes
   * it): for readers that only look, such as the panel's tree at open (1,000 copies were most
   * of its cost). Anyone who keeps and changes a header takes `list()`.
   */
  listRefs(): readonly Readonly<SessionHeader>[] {
    return this.catalog.headerRefs();
  }
  children(id: string): SessionHeader[] {
    return this.catalog.children(id);
  }
  /** Every descendant of a session (not itself), breadth-first: children before grandchildren. */
  descendants(id: string): SessionHeader[] {
    return this.catalog
      .subtree(id)
      .slice(1)
      .map((x) => this.header(x)!);
  }
  header(id: string): SessionHeader | undefined {
    const e = this.catalog.get(id);
    return e && structuredClone(e.header);
  }
  has(id: string): boolean {
    return this.catalog.get(id) !== undefined;
  }
  /** A session's parent, without copying its header (asked for every staged event and at every turn edge). */
  parentOf(id: string): string | undefined {
    return this.catalog.get(id)?.header.parentSession;
  }

  /**
   * Publish a session: its header and the events it already holds (a fork seed, the
   * unpublished setup) become durable together, or not at all. A child joins its parent's tree.
   */
  createSession(header: SessionHeader, events: readonly SessionEvent[] = []): Promise<void> {
    return this.ops.run(() => this.create(header, events));
  }

  private async create(header: SessionHeader, events: readonly SessionEvent[]): Promise<void> {
    checkHeader(header);
    if (this.catalog.get(header.id)) throw new StoreError('DUPLICATE_SESSION', `Session ${header.id} already exists; pick another id.`);
    let treeName = header.id;
    if (header.parentSession !== undefined) {
      const parent = this.catalog.get(header.parentSession);
      if (!parent)
        throw new StoreError('UNKNOWN_PARENT', `Parent session ${header.parentSession} of ${header.id} is not in this store; create the parent first.`);
      treeName = parent.tree;
    }
    // Tree first, catalog second: the catalog write is the commit point (decision 0018). A
    // crash in between leaves an unlisted session in a tree file: a stray, dropped when that
    // tree is next opened (or, for a new tree, added back by reconcile) — never a listed
    // session without data. A stray still there (the catalog write failed in this process)
    // is replaced in the same journal record, so creating the id again succeeds.
    await this.summaries.beforeWrite();
    this.ops.assertOpen();
    this.strays.beginCreating(header.id, treeName);
    try {
      await this.withTree(treeName, (tree) => {
        this.ops.assertOpen(); // opening the tree took a while: the close may have begun
        return tree.write([
          ...(tree.has(header.id) ? [{ op: 'delete' as const, session: header.id }] : []),
          { op: 'session', header },
          { op: 'events', session: header.id, events: [...events] },
        ]);
      });
      // Written to the tree: the commit point follows even if a close began (it waits for us).
      await this.catalog.add([{ op: 'session', header, tree: treeName }]);
      this.counters.events += events.length;
      this.summaries.created(header, events);
      this.listeners.appended(header.id, events);
    } finally {
      this.strays.endCreating(header.id);
    }
  }

  /** Durably append events (contiguous with what is stored); resolves once on disk. */
  append(id: string, events: readonly SessionEvent[]): Promise<void> {
    return this.ops.run(async () => {
      const clearing = this.summaries.beforeWrite();
      if (clearing) {
        await clearing;
        this.ops.assertOpen();
      }
      await this.withTreeOf(id, (tree) => {
        this.ops.assertOpen(); // opening the tree took a while: the close may have begun
        return tree.write([{ op: 'events', session: id, events: [...events] }]);
      });
      this.counters.events += events.length;
      this.summaries.appended(id, events);
      this.listeners.appended(id, events);
    });
  }

  /**
   * Called after every durable write of a session's events (its creation included), once its
   * summary has folded them: the budget guard keeps its subtree totals with it. A listener
   * must not throw (a throw is swallowed: the write is already durable).
   */
  onAppended(fn: (id: string, events: readonly SessionEvent[]) => void): () => void {
    return this.listeners.onAppended(fn);
  }

  /**
   * Called for every event a writer over this store applies, in its log's order, when it is
   * staged: validated and in the writer's in-memory log, its durable append under way (a new
   * session's events when it is published). Every writer of every session, resident or not,
   * reports here, so a view built on it misses no write (decision 0054). A listener must not
   * throw (a throw is swallowed: the writer's append goes on).
   */
  onStaged(fn: (id: string, event: SessionEvent) => void): () => void {
    return this.listeners.onStaged(fn);
  }

  /** A writer staged an event (see `onStaged`). */
  staged(id: string, event: SessionEvent): void {
    this.listeners.staged(id, event);
  }

  /** The kept summary without a copy (read-only; undefined when unknown without a log read). */
  summaryRef(id: string): Readonly<SessionSummary> | undefined {
    return this.summaries.peek(id);
  }

  /** The session's summary if known without reading its log (kept with every append), else undefined. */
  summaryOf(id: string): SessionSummary | undefined {
    return this.summaries.get(id);
  }

  /** The session's summary: kept with every append, or folded from its log once (a stale catalog). */
  async summary(id: string): Promise<SessionSummary> {
    const known = this.summaries.get(id);
    if (known) return known;
    const header = this.catalog.get(id)?.header;
    if (!header) throw this.unknown(id);
    const s = summarize(header, await this.readEvents(id));
    this.summaries.learn(id, s);
    return s;
  }

  /**
   * Delete a session and all its descendants: unlisted first (catalog), then their events
   * (tree). A crash in between leaves unlisted rows in the tree file, never a listed session
   * without data. A whole tree's files go once its deletion is durable (the catalog names the
   * tree in the same record, so an open after a crash removes what is left). Returns the deleted ids.
   */
  deleteSession(id: string): Promise<string[]> {
    return this.ops.run(async () => {
      if (!this.catalog.get(id)) throw this.unknown(id);
      await this.summaries.beforeWrite();
      this.ops.assertOpen();
      const entry = this.catalog.get(id);
      if (!entry) throw this.unknown(id); // deleted meanwhile
      const ids = this.catalog.subtree(id).reverse(); // children before parents
      const whole = this.catalog.holdsOnly(entry.tree, ids) && !this.strays.isCreatingIn(entry.tree);
      await this.catalog.add(ids.map((x) => ({ op: 'delete' as const, id: x, ...(whole && x === id ? { tree: entry.tree } : {}) })));
      this.summaries.deleted(ids);
      if (whole) await this.openTrees.remove(entry.tree);
      else await this.withTree(entry.tree, (tree) => tree.write(ids.filter((x) => tree.has(x)).map((x) => ({ op: 'delete' as const, session: x }))));
      return ids;
    });
  }

  /** Events of one session from `fromSeq` (raw, as stored). */
  readEvents(id: string, fromSeq = 0): Promise<SessionEvent[]> {
    return this.readOf(id, (tree) => tree.events(id, fromSeq));
  }

  /** Load one session (its tree file only; no other session is folded). */
  async inspect(id: string): Promise<Session> {
    const entry = this.catalog.get(id);
    const events = await this.readEvents(id);
    return Session.restore(entry!.header, events, { trusted: true });
  }

  /** Number of stored events of a session. */
  length(id: string): Promise<number> {
    return this.readOf(id, (tree) => tree.length(id));
  }

  /** Fold every journal into its database file now. */
  checkpoint(): Promise<void> {
    return this.ops.run(async () => {
      await this.openTrees.checkpoint();
      await this.catalog.checkpoint();
    });
  }

  /**
   * Refuse new calls (CLOSED), wait for those under way, then close every file and release the
   * lock: nothing is written after the lock is gone (decision 0098).
   */
  async close(): Promise<void> {
    if (this.ops.closed) return;
    try {
      await this.ops.close();
      const fold = { foldFrom: this.opts.closeFoldsFrom ?? 0 };
      await this.openTrees.close(fold);
      // The marker says every turn has ended, which the tree journals hold durably now; it owes
      // nothing to the catalog's summaries (exact or marked stale on their own), so its sync runs
      // beside theirs rather than after.
      const marking = this.cleanOnClose ? leaveCleanMarker(this.dir, this.counters) : Promise.resolve();
      try {
        // A failed write leaves them marked stale: the next open folds the logs it needs.
        await this.summaries.persist().catch(() => undefined);
        await this.catalog.close(fold);
      } finally {
        await marking;
      }
    } finally {
      this.unlock();
    }
  }

  private async withTreeOf<T>(id: string, fn: (tree: TreeFile) => T | Promise<T>): Promise<T> {
    const entry = this.catalog.get(id);
    if (!entry) throw this.unknown(id);
    return this.withTree(entry.tree, fn);
  }

  private withTree<T>(name: string, fn: (tree: TreeFile) => T | Promise<T>): Promise<T> {
    return this.openTrees.with(name, fn);
  }

  /** Index tree files the catalog does not know (a crash between the two writes, or a lost catalog). */
  private reconcile(all: boolean): Promise<void> {
    return this.strays.reconcile(
      this.dir,
      all,
      (name) => this.withTree(name, (tree) => tree.headers()),
      (name) => this.openTrees.remove(name),
    );
  }

  /** A read of one listed session from its tree, as an operation: MISSING_DATA or CORRUPT say what went wrong. */
  private readOf<T>(id: string, read: (tree: TreeFile) => T): Promise<T> {
    return this.ops.run(() =>
      this.withTreeOf(id, (tree) => {
        if (!tree.has(id)) throw missingData(id, tree.file);
        return guardRead(tree.file, () => read(tree));
      }),
    );
  }

  private unknown(id: string): StoreError {
    return unknownSession(id, this.dir);
  }
}
