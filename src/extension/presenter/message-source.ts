import type { MessageSource } from '../../core/session/events';
import { fromSessionOf } from '../../core/session/message-source';
import type { MessageSourceKind } from '../../protocol';

/**
 * Who a message is from, as the panel says it (issue 21.6): a follow-up the human sent to a
 * child (the runtime records it as a follow-up from `user`) is the user's own message, not
 * the parent's; every other source is shown as recorded.
 */
export function shownSource(source: MessageSource): { source: MessageSourceKind; fromSession?: string } {
  if (source.kind === 'followup' && source.fromSession === 'user') return { source: 'user' };
  const fromSession = fromSessionOf(source);
  return { source: source.kind, ...(fromSession !== undefined ? { fromSession } : {}) };
}
