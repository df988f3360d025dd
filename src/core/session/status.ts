import type { SessionEvent, SessionHeader, StopReason } from './events';

/** What a session's own log says about it, when no process is running it. */
export type StoredStatus = 'idle' | 'settled' | 'interrupted' | 'error';

/**
 * The status a stored (non-resident) session reads as, from its log alone. A turn left open
 * means the process that ran it is gone: `interrupted`, never `settled`. Only events the
 * session produced itself count (a fork's seed is its parent's history).
 */
export function storedStatus(header: SessionHeader, events: readonly SessionEvent[]): { status: StoredStatus; lastStopReason?: StopReason } {
  const from = header.seedLength === undefined ? 0 : header.seedLength + 1;
  let open = false;
  let last: StopReason | undefined;
  let subagent = header.origin === 'subagent';
  for (let i = from; i < events.length; i++) {
    const e = events[i];
    if (e.type === 'turn/start') open = true;
    else if (e.type === 'turn/end') {
      open = false;
      last = e.stopReason;
    } else if (e.type === 'subagent/descriptor') subagent = true;
  }
  if (open) return { status: 'interrupted', ...(last ? { lastStopReason: last } : {}) };
  if (last === 'interrupted' || last === 'cancelled') return { status: 'interrupted', lastStopReason: last };
  if (last === 'error') return { status: 'error', lastStopReason: last };
  if (!last) return { status: 'idle' };
  return { status: subagent ? 'settled' : 'idle', lastStopReason: last };
}
