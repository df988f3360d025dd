import * as fs from 'node:fs';
import * as path from 'node:path';
import { describeError } from '../errors';
import { Catalog } from './catalog';
import { type Quarantine, StoreError } from './errors';
import { makeDirs } from './fsutil';
import type { JournaledDbOptions } from './journaled-db';
import { acquireLock } from './lock';

// A store's folder as `Store.open` finds it: whether a store is there, the folder made, its
// one-writer lock taken, and its catalog opened (a damaged one moved aside and begun anew, for
// the open to rebuild from the tree files).

/** Whether `dir` holds a store: its catalog (database or journal) is there. */
export async function storeExists(dir: string): Promise<boolean> {
  for (const name of ['catalog.db', 'catalog.wal']) {
    try {
      if ((await fs.promises.stat(path.join(dir, name))).isFile()) return true;
    } catch {
      // Not this one.
    }
  }
  return false;
}

/** A folder opened for one writer: its catalog, the lock's release, what was moved aside, and whether the catalog must be rebuilt. */
export interface OpenedFolder {
  catalog: Catalog;
  unlock: () => void;
  problems: Quarantine[];
  rebuild: boolean;
}

/**
 * Make the folder (or, with `mustExist`, refuse one without a store: NO_STORE), take its lock,
 * open its catalog. The lock is released again when the catalog cannot be opened.
 */
export async function openStoreFolder(dir: string, mustExist: boolean, catalogOpts: JournaledDbOptions): Promise<OpenedFolder> {
  if (mustExist && !(await storeExists(dir))) {
    throw new StoreError(
      'NO_STORE',
      `No Arbor session store at ${dir} (no catalog.db there); give the store with --store or $ARBOR_STORE, or start one with 'arbor run'.`,
      dir,
    );
  }
  try {
    await makeDirs(path.join(dir, 'trees'));
  } catch (err) {
    throw new StoreError(
      'IO',
      `The session store ${dir} cannot be made (${describeError(err)}): its folder takes no new folders (as /proc) or is not writable. Keep the store in a writable folder (--store or $ARBOR_STORE; for arbor acp, a session cwd in a writable folder).`,
      dir,
      err,
    );
  }
  const unlock = await acquireLock(dir);
  try {
    const problems: Quarantine[] = [];
    let catalog: Catalog;
    let rebuild = false;
    try {
      catalog = await Catalog.open(dir, catalogOpts);
    } catch (err) {
      if (!(err instanceof StoreError) || err.code !== 'CORRUPT') throw err;
      problems.push(...((err as StoreError & { quarantined?: Quarantine[] }).quarantined ?? []));
      catalog = await Catalog.open(dir, catalogOpts);
      rebuild = true;
    }
    return { catalog, unlock, problems, rebuild };
  } catch (err) {
    unlock();
    throw err;
  }
}
