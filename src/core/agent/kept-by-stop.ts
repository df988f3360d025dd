import type { SessionEvent } from '../session/events';
import { CRASHED_DURING_TURN } from './agent';
import { wakesPaused } from './scheduling';

/**
 * Whether a reopened conversation's queued messages wait for the human (decision 0011, amended in
 * sessions 48 and 49): a live Stop paused it — its last turn ended `interrupted` by that Stop (not
 * by a crash, whose recovery says so: `CRASHED_DURING_TURN`), or the Stop found no turn of its own
 * to end and left `inbox/paused` — and nothing that wakes a paused conversation (the human, a
 * parent's follow-up, a goal round) was accepted since. A child's notice accepted since waits with
 * the rest, as it does in process. A turn a closing host ended (`cancelled`) or a crash ended, or
 * one that completed, left its queue promised: it runs.
 */
export function keptByStop(events: readonly SessionEvent[], unclaimed: readonly string[]): boolean {
  if (unclaimed.length === 0) return false;
  const waiting = new Set(unclaimed);
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i];
    if (e.type === 'inbox/accepted' && waiting.has(e.messageId) && wakesPaused(e.source)) return false;
    if (e.type === 'inbox/paused') return true;
    if (e.type === 'turn/end') return e.stopReason === 'interrupted' && e.error !== CRASHED_DURING_TURN;
  }
  return false;
}
