import { type Quarantine, StoreError } from './errors';
import { moveAside } from './fsutil';

// A store file that cannot be read: its database and journal moved aside, and the CORRUPT
// error that says where (the rest of the store stays usable).

export async function quarantineAll(dbFile: string, walFile: string, reason: string, cause?: unknown): Promise<StoreError> {
  const movedDb = await moveAside(dbFile);
  const movedWal = await moveAside(walFile);
  const moved = [movedDb, movedWal].filter(Boolean).join(' and ');
  const err = new StoreError(
    'CORRUPT',
    `Arbor could not read ${dbFile}: ${reason}. It was moved aside${moved ? ` to ${moved}` : ''}; the sessions it held are unavailable, the rest of the store is usable.`,
    dbFile,
    cause,
  );
  (err as StoreError & { quarantined: Quarantine[] }).quarantined = [
    ...(movedDb ? [{ file: dbFile, movedTo: movedDb, reason, at: new Date().toISOString() }] : []),
    ...(movedWal ? [{ file: walFile, movedTo: movedWal, reason, at: new Date().toISOString() }] : []),
  ];
  return err;
}
