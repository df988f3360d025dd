/** Why a queued message could not be withdrawn or run; stable codes the UI and tests branch on. */
export type InboxErrorCode = 'ALREADY_CLAIMED' | 'ALREADY_WITHDRAWN' | 'UNKNOWN_MESSAGE' | 'NOT_WAITING';

export class InboxError extends Error {
  override readonly name = 'InboxError';
  constructor(
    readonly code: InboxErrorCode,
    message: string,
  ) {
    super(message);
  }
}
