import * as fs from 'node:fs';
import * as path from 'node:path';
import { fsyncDir } from './fsutil';
import type { StoreCounters } from './stats';

// The store's clean-close marker: a file a harness leaves when it closed with every turn ended,
// so the next open need not read every log for a turn a crash cut (`Store.closedCleanly`).
// Written and removed durably (its folder synced); each sync counted in the store's stats.

/** Left by a harness that closed with every turn ended (see `Store.closedCleanly`). */
export const CLEAN_MARKER = 'closed-cleanly';

export function hasCleanMarker(dir: string): boolean {
  return fs.existsSync(path.join(dir, CLEAN_MARKER));
}

/** Leave the marker, durably. */
export async function leaveCleanMarker(dir: string, counters: StoreCounters): Promise<void> {
  await fs.promises.writeFile(path.join(dir, CLEAN_MARKER), `${new Date().toISOString()}\n`);
  counters.syncs++;
  await fsyncDir(dir);
}

/** Remove the marker, durably; no marker (a new store, or after a crash) is already what the disk says, and costs no sync. */
export async function removeCleanMarker(dir: string, counters: StoreCounters): Promise<void> {
  try {
    await fs.promises.unlink(path.join(dir, CLEAN_MARKER));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  counters.syncs++;
  await fsyncDir(dir);
}
