import type { Agent } from '../../core/agent/agent';
import { queuedMessages } from '../../core/session/folds';
import type { Session } from '../../core/session/session';
import type { HostToWebview } from '../../protocol';
import { shownSource } from './message-source';

export type QueueChanged = Extract<HostToWebview, { type: 'queue/changed' }>;

/**
 * What the panel shows of a session's inbox (decision 0011). Behind a running (or starting)
 * turn the messages are `queued`: they run on their own. After an interrupt they are
 * `waiting` for the human; so are the messages of a session not loaded (they run when it is
 * opened or sent to).
 */
export function queueView(session: Session, agent: Agent | undefined): QueueChanged {
  const state = agent && !agent.isWaiting ? 'queued' : 'waiting';
  // With no turn open, the head of a working agent's inbox is the message its next turn opens
  // with (being judged, or after a compaction): "sending", not queued behind a turn. The agent
  // reads `running` from the accept on (decision 0075), so its activity cannot tell this: by it,
  // every message to an idle conversation showed "Queued (1) — Runs after the current turn".
  const opening = agent !== undefined && !agent.isWaiting && !agent.isDisposed && !session.openTurnId;
  const queued = queuedMessages(session.events, session.unclaimedInbox);
  const messages = (opening ? queued.slice(1) : queued).map((m) => ({
    messageId: m.messageId,
    text: m.text,
    source: shownSource(m.source).source,
    at: m.at,
  }));
  return { type: 'queue/changed', sessionId: session.id, state, messages };
}
