import { describeError } from '../errors';

export type StoreErrorCode =
  | 'CORRUPT'
  | 'LOCKED'
  | 'NO_STORE'
  | 'UNKNOWN_SESSION'
  | 'DUPLICATE_SESSION'
  | 'UNKNOWN_PARENT'
  | 'SEQ_GAP'
  | 'BAD_EVENT'
  | 'SCHEMA_TOO_NEW'
  | 'MISSING_DATA'
  | 'CLOSED'
  /** One write past the journal's record limit: refused whole; append in smaller batches. */
  | 'TOO_LARGE'
  | 'IO';

/** A store failure a user can act on: the message says what happened, where, and what to do. */
export class StoreError extends Error {
  override readonly name = 'StoreError';
  constructor(
    readonly code: StoreErrorCode,
    message: string,
    /** The file concerned, when there is one. */
    readonly file?: string,
    override readonly cause?: unknown,
  ) {
    super(message);
  }
}

/** A file moved aside because it could not be read; the rest of the store stays usable. */
export interface Quarantine {
  file: string;
  movedTo: string;
  reason: string;
  at: string;
}

/** UNKNOWN_SESSION: the store does not list `id`. */
export function unknownSession(id: string, dir: string): StoreError {
  return new StoreError('UNKNOWN_SESSION', `No session ${id} in the store at ${dir}; list sessions to see the ids.`);
}

/** MISSING_DATA: `id` is listed, but its tree file holds none of its events. */
export function missingData(id: string, file: string): StoreError {
  return new StoreError(
    'MISSING_DATA',
    `Session ${id} is listed but its events are missing from ${file}; if that file was quarantined, they are in its *.corrupt-* copy.`,
    file,
  );
}

/** A read of `file` that failed other than with a StoreError is CORRUPT: move the file aside. */
export function guardRead<T>(file: string, read: () => T): T {
  try {
    return read();
  } catch (err) {
    if (err instanceof StoreError) throw err; // already says what happened and what to do
    throw new StoreError(
      'CORRUPT',
      `Reading ${file} failed: ${describeError(err)}. Close Arbor, move that file aside and reopen; other trees are unaffected.`,
      file,
      err,
    );
  }
}
