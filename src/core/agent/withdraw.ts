import { inboxFate } from '../session/folds';
import { InboxError } from './inbox-error';
import type { SessionLog } from './session-writer';

/**
 * Cancel a queued message before it runs: appends `inbox/withdrawn`, resolved once durable,
 * so neither a restart nor a cold resume runs it (decision 0011). The check and the append
 * are one synchronous step (the session validates before the first await), so a turn
 * cannot claim the message in between.
 */
export async function withdrawQueued(writer: SessionLog, messageId: string): Promise<void> {
  const s = writer.session;
  if (!s.unclaimedInbox.includes(messageId)) {
    const fate = inboxFate(s.events, messageId);
    if (fate === 'claimed') throw new InboxError('ALREADY_CLAIMED', `Message ${messageId} has already started running in ${s.id}; interrupt the turn instead.`);
    if (fate === 'withdrawn') throw new InboxError('ALREADY_WITHDRAWN', `Message ${messageId} was already cancelled.`);
    throw new InboxError('UNKNOWN_MESSAGE', `No message ${messageId} was queued in ${s.id}.`);
  }
  await writer.append({ type: 'inbox/withdrawn', messageId });
}
