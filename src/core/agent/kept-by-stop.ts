import type { SessionEvent } from '../session/events';
import { CRASHED_DURING_TURN } from './agent';

/**
 * Whether a reopened conversation's queued messages wait for the human (decision 0011, amended in
 * session 48): its last turn ended `interrupted` by a live Stop — not by a crash, whose recovery
 * says so (`CRASHED_DURING_TURN`) — and every message still queued was accepted before that end (the ones a
 * Stop kept). A message accepted after it was sent to a waiting agent, which runs the queue; a
 * turn a closing host ended (`cancelled`) or a crash ended left its queue promised: both run.
 */
export function keptByStop(events: readonly SessionEvent[], unclaimed: readonly string[]): boolean {
  if (unclaimed.length === 0) return false;
  const waiting = new Set(unclaimed);
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i];
    if (e.type === 'inbox/accepted' && waiting.has(e.messageId)) return false;
    if (e.type === 'turn/end') return e.stopReason === 'interrupted' && e.error !== CRASHED_DURING_TURN;
  }
  return false;
}
