import * as fs from 'node:fs';
import type { SessionHeader } from '../session/events';
import type { Catalog, CatalogOp } from './catalog';

// Tree files the catalog does not list (a crash between a tree write and its catalog write, or
// a lost catalog): their sessions are listed again from the headers each tree holds. The files
// of a tree whose last session was deleted (a crash before they were removed), or of an unknown
// tree that holds no session, are removed instead: no later open reads them (decision 0098).

/**
 * Index the sessions of tree files in `treesDir` the catalog lacks (`all`: every tree, not only
 * the ones it does not know). A tree that cannot be read is skipped (`headersOf` quarantined it).
 */
export async function reconcileTrees(
  treesDir: string,
  catalog: Catalog,
  all: boolean,
  headersOf: (tree: string) => Promise<SessionHeader[]>,
  remove: (tree: string) => Promise<void>,
): Promise<void> {
  const known = catalog.trees();
  const names = new Set<string>();
  for (const f of await fs.promises.readdir(treesDir)) {
    const m = /^(.+)\.(db|wal)$/.exec(f);
    if (m) names.add(m[1]);
  }
  for (const name of names) {
    if (!all && known.has(name)) continue;
    if (!known.has(name) && catalog.dropped(name)) {
      await remove(name); // its deletion is durable: these files are what a crash left
      continue;
    }
    let headers: SessionHeader[];
    try {
      headers = await headersOf(name);
    } catch {
      continue; // quarantined and recorded in problems
    }
    if (headers.length === 0 && !known.has(name)) {
      await remove(name); // nothing to index (a tree emptied by deletions before 0098): nothing to read again
      continue;
    }
    const ops: Extract<CatalogOp, { op: 'session' }>[] = headers.filter((h) => !catalog.get(h.id)).map((header) => ({ op: 'session', header, tree: name }));
    // Parents before children, so children() links stay whole.
    ops.sort((a, b) => (a.header.delegationDepth ?? 0) - (b.header.delegationDepth ?? 0));
    if (ops.length > 0) await catalog.add(ops);
  }
}
