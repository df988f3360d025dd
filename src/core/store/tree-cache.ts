import * as path from 'node:path';
import { type Quarantine, StoreError } from './errors';
import { removeJournaledFiles } from './fsutil';
import type { JournaledDbOptions } from './journaled-db';
import { TreeFile } from './tree';

export interface TreeCacheOptions extends JournaledDbOptions {
  /** Tree files kept in memory at once; the least recently used idle one is closed past this. */
  maxOpenTrees?: number;
}

/**
 * The store's open tree files: opened on first use, kept in LRU order, closed past
 * `maxOpenTrees` when no operation uses them (a reopen waits for that close, so two
 * instances never share the files), and a file found corrupt stays refused. Once closed,
 * no tree file is opened again (decision 0098).
 */
export class TreeCache {
  private readonly trees = new Map<string, Promise<TreeFile>>();
  /** Operations under way per opened instance: an evicted or removed tree is one no operation is using. */
  private readonly users = new Map<Promise<TreeFile>, number>();
  /** Removals waiting for an instance's last operation to end. */
  private readonly idle = new Map<Promise<TreeFile>, () => void>();
  /** Evicted or removed trees still closing (folding their journal, deleting their files): reopening waits for it. */
  private readonly closing = new Map<string, Promise<void>>();
  private readonly broken = new Map<string, StoreError>();
  private closed = false;

  constructor(
    private readonly dir: string,
    private readonly opts: TreeCacheOptions,
    /** Files moved aside while opening or refusing a tree. */
    private readonly quarantined: (q: readonly Quarantine[]) => void,
    /** Runs once on each freshly opened tree, before anyone uses it. */
    private readonly opened: (tree: TreeFile) => Promise<void>,
  ) {}

  /** Run `fn` on a tree that stays open until `fn` settles: eviction skips trees in use. */
  async with<T>(name: string, fn: (tree: TreeFile) => T | Promise<T>): Promise<T> {
    const p = this.tree(name);
    this.users.set(p, (this.users.get(p) ?? 0) + 1);
    this.evict(); // after counting the user: the tree just opened is never the one evicted
    try {
      return await fn(await p);
    } finally {
      const left = this.users.get(p)! - 1;
      if (left > 0) this.users.set(p, left);
      else {
        this.users.delete(p);
        this.idle.get(p)?.();
      }
      this.evict(); // a tree kept open past the limit because it was in use may go now
    }
  }

  /**
   * Close a tree once no operation uses it, without folding its journal, and delete its files:
   * its last session was deleted, durably (decision 0098). Opening the name again (a new root
   * with the same id) waits for this, and starts from no file.
   */
  remove(name: string): Promise<void> {
    const p = this.trees.get(name);
    this.trees.delete(name);
    this.broken.delete(name); // its files were moved aside: nothing of it is left to refuse
    const before = this.closing.get(name) ?? Promise.resolve();
    const done: Promise<void> = (async () => {
      await before; // an eviction still folding its journal writes the file we delete
      if (p) {
        if (this.users.has(p)) await new Promise<void>((resolve) => this.idle.set(p, resolve));
        this.idle.delete(p);
        await (await p.catch(() => undefined))?.close({ checkpoint: false });
      }
      await removeJournaledFiles(path.join(this.dir, 'trees'), name);
    })().finally(() => {
      if (this.closing.get(name) === done) this.closing.delete(name);
    });
    this.closing.set(name, done);
    return done;
  }

  /** Fold every open tree's journal into its file (an unreadable one is skipped: it is in the problems). */
  async checkpoint(): Promise<void> {
    for (const [name, p] of [...this.trees]) {
      const readable = await p.then(
        () => true,
        () => false,
      );
      // Evicted meanwhile? Its close folded the journal; otherwise hold it open while folding.
      if (readable && this.trees.has(name)) await this.with(name, (tree) => tree.checkpoint());
    }
  }

  /** Close every tree (`foldFrom`: see JournaledDb.close), and wait for those still closing. */
  async close(opts: { foldFrom?: number } = {}): Promise<void> {
    this.closed = true;
    for (const p of this.trees.values()) await (await p.catch(() => undefined))?.close(opts);
    await Promise.all(this.closing.values());
  }

  private tree(name: string): Promise<TreeFile> {
    if (this.closed) return Promise.reject(new StoreError('CLOSED', `The store at ${this.dir} is closed; its tree file ${name} is not opened again.`));
    const failed = this.broken.get(name);
    if (failed) return Promise.reject(failed);
    let p = this.trees.get(name);
    if (p) {
      this.trees.delete(name); // re-insert: Map order is the LRU order
      this.trees.set(name, p);
      return p;
    }
    // After an eviction's close (checkpoint, journal reset): two instances must never share the files.
    const closed = this.closing.get(name) ?? Promise.resolve();
    p = closed
      .then(() => TreeFile.open(path.join(this.dir, 'trees'), name, this.opts))
      .then(
        async (t) => {
          this.quarantined(t.quarantined);
          await this.opened(t);
          return t;
        },
        (err: unknown) => {
          this.trees.delete(name);
          if (err instanceof StoreError && err.code === 'CORRUPT') {
            this.broken.set(name, err);
            this.quarantined((err as StoreError & { quarantined?: Quarantine[] }).quarantined ?? []);
          }
          throw err;
        },
      );
    this.trees.set(name, p);
    return p;
  }

  /** Close least recently used trees not in use past the limit; reopening one waits for its close. */
  private evict(): void {
    const max = this.opts.maxOpenTrees ?? 16;
    for (const [name, p] of this.trees) {
      if (this.trees.size <= max) break;
      if (this.users.has(p)) continue;
      this.trees.delete(name);
      const done: Promise<void> = p
        .then((t) => t.close())
        .catch(() => undefined)
        .finally(() => {
          if (this.closing.get(name) === done) this.closing.delete(name);
        });
      this.closing.set(name, done);
    }
  }
}
