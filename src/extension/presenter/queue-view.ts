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
  // An idle agent that is not waiting is about to claim what it was just sent: that message
  // is "sending", not queued, and flashing a queue for every message would be noise.
  const starting = agent !== undefined && agent.activity === 'idle' && !agent.isWaiting && !agent.isDisposed;
  const messages = starting
    ? []
    : queuedMessages(session.events, session.unclaimedInbox).map((m) => ({
        messageId: m.messageId,
        text: m.text,
        source: shownSource(m.source).source,
        at: m.at,
      }));
  return { type: 'queue/changed', sessionId: session.id, state, messages };
}
