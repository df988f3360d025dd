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
