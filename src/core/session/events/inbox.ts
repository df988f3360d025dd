import type { Base } from './base';
import type { MessageSource } from './message';

// The durable inbox (FIFO): a message accepted, claimed by a turn, or withdrawn. Not model history.

export interface InboxAcceptedEvent extends Base<'inbox/accepted'> {
  messageId: string;
  text: string;
  source: MessageSource;
}

export interface InboxClaimedEvent extends Base<'inbox/claimed'> {
  messageId: string;
}

/** The user cancelled a queued message before it was claimed: it never runs (decision 0011). */
export interface InboxWithdrawnEvent extends Base<'inbox/withdrawn'> {
  messageId: string;
}

/**
 * A Stop paused the conversation with no turn of its own to end (it waited on children it
 * stopped, or held queued messages): what waits in its inbox, and the notices that reach it
 * after, wait for the human across a restart too (decision 0011, amended in s49). A turn that
 * ends later supersedes it.
 */
export interface InboxPausedEvent extends Base<'inbox/paused'> {}
