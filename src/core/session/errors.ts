/** Why an event or header was refused; stable codes that tests and callers branch on. */
export type SessionErrorCode =
  | 'BAD_HEADER'
  | 'BAD_EVENT'
  | 'UNKNOWN_TYPE'
  | 'MISSING_FIELD'
  | 'BAD_FIELD'
  | 'SEQ_GAP'
  | 'TURN_NOT_OPEN'
  | 'TURN_ALREADY_OPEN'
  | 'TURN_MISMATCH'
  | 'UNKNOWN_CALL'
  | 'DUPLICATE_RESULT'
  | 'PENDING_CALLS'
  | 'COMPACTION_STATE'
  | 'INBOX_STATE'
  | 'BAD_SEED';

/**
 * A refused append or construction. Names the field and the seq so a user (or a
 * store replay) can tell exactly which record is wrong; the session is unchanged.
 */
export class SessionValidationError extends Error {
  override readonly name = 'SessionValidationError';
  constructor(
    readonly code: SessionErrorCode,
    message: string,
    readonly field?: string,
    readonly seq?: number,
  ) {
    super(
      `${message}${field ? ` (field '${field}'` : ''}${field && seq !== undefined ? `, seq ${seq})` : field ? ')' : seq !== undefined ? ` (seq ${seq})` : ''}`,
    );
  }
}
