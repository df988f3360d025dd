import * as path from 'node:path';
import type { SessionHeader } from '../session/events';
import type { Catalog } from './catalog';
import { reconcileTrees } from './reconcile';
import type { TreeFile } from './tree';

// Sessions a tree file holds but the catalog does not list (decision 0018: the catalog write is
// the commit point): the ones being created right now, which are not strays; the strays, dropped
// when their tree is opened; and, while an open reconciles, the trees' unlisted sessions kept.

export class Strays {
  /** Sessions between their tree write and their catalog write (id → tree): not strays, whatever a tree says. */
  private readonly creating = new Map<string, string>();
  /** While open() rebuilds a catalog from the tree files, a tree's unlisted sessions are kept. */
  private recovering = false;

  constructor(private readonly catalog: Catalog) {}

  /** A creation writes `id` to `tree` now; its catalog write follows. */
  beginCreating(id: string, tree: string): void {
    this.creating.set(id, tree);
  }

  /** The creation of `id` is over (listed, or failed). */
  endCreating(id: string): void {
    this.creating.delete(id);
  }

  /** Whether a creation is writing to `tree` now (its files must stay). */
  isCreatingIn(tree: string): boolean {
    return [...this.creating.values()].includes(tree);
  }

  /**
   * Sessions a tree file holds but the catalog does not list, in a tree the catalog knows:
   * a creation whose catalog write never happened (a crash between the two writes; it was
   * never acknowledged) or a deletion whose tree write never happened. Either way they do
   * not exist; dropping them keeps them from blocking a new session with the same id.
   */
  async drop(tree: TreeFile): Promise<void> {
    if (this.recovering || !this.catalog.trees().has(tree.name)) return;
    const strays = tree
      .headers()
      .map((h) => h.id)
      .filter((id) => this.catalog.get(id)?.tree !== tree.name && !this.creating.has(id));
    if (strays.length > 0) await tree.write(strays.map((session) => ({ op: 'delete' as const, session })));
  }

  /** Index tree files the catalog does not know (a crash between the two writes, or a lost catalog). */
  async reconcile(dir: string, all: boolean, headersOf: (tree: string) => Promise<SessionHeader[]>, remove: (tree: string) => Promise<void>): Promise<void> {
    this.recovering = true;
    try {
      await reconcileTrees(path.join(dir, 'trees'), this.catalog, all, headersOf, remove);
    } finally {
      this.recovering = false;
    }
  }
}
