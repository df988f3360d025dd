import * as path from 'node:path';
import { type Quarantine, StoreError } from './errors';
import type { JournaledDbOptions } from './journaled-db';
import { TreeFile } from './tree';

export interface TreeCacheOptions extends JournaledDbOptions {
  /** Tree files kept in memory at once; the least recently used idle one is closed past this. */
  maxOpenTrees?: number;
}

/**
 * The store's open tree files: opened on first use, kept in LRU order, closed past
 * `maxOpenTrees` when no operation uses them (a reopen waits for that close, so two
 * instances never share the files), and a file found corrupt stays refused.
 */
export class TreeCache {
  private readonly trees = new Map<string, Promise<TreeFile>>();
  /** Operations under way per tree: an evicted tree is one no operation is using. */
  private readonly users = new Map<string, number>();
  /** Evicted trees still closing (folding their journal): reopening waits for it. */
  private readonly closing = new Map<string, Promise<void>>();
  private readonly broken = new Map<string, StoreError>();

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
    this.users.set(name, (this.users.get(name) ?? 0) + 1);
    try {
      return await fn(await this.tree(name));
    } finally {
      const left = this.users.get(name)! - 1;
      if (left > 0) this.users.set(name, left);
      else this.users.delete(name);
      this.evict(); // a tree kept open past the limit because it was in use may go now
    }
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
    for (const p of this.trees.values()) await (await p.catch(() => undefined))?.close(opts);
    await Promise.all(this.closing.values());
  }

  private tree(name: string): Promise<TreeFile> {
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
    this.evict();
    return p;
  }

  /** Close least recently used trees not in use past the limit; reopening one waits for its close. */
  private evict(): void {
    const max = this.opts.maxOpenTrees ?? 16;
    for (const [name, p] of this.trees) {
      if (this.trees.size <= max) break;
      if (this.users.has(name)) continue;
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
