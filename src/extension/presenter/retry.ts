import type { SessionEvent } from '../../core/session/events';
import { SOURCE_WORDS } from '../../core/session/message-source';

/**
 * The text to send again for "Retry" on the failed turn that ends at `seq`: the user's
 * message that started it. Throws in words when there is nothing to retry.
 */
export function retryText(events: readonly SessionEvent[], seq: number): string {
  const end = events[seq];
  if (end?.type !== 'turn/end') throw new Error(`Event ${seq} is not the end of a turn; there is nothing to retry there.`);
  if (end.stopReason !== 'error') throw new Error(`That turn ended ${end.stopReason}, not with an error; send a new message instead.`);
  let start = seq - 1;
  while (start >= 0 && events[start].type !== 'turn/start') start--;
  for (let i = start + 1; i < seq; i++) {
    const e = events[i];
    if (e.type !== 'user/message') continue;
    if (e.source.kind !== 'user' && e.source.kind !== 'followup')
      throw new Error(`That turn was started by ${SOURCE_WORDS[e.source.kind]}, not by you; send a message to continue.`);
    return e.text;
  }
  throw new Error('That turn has no message of yours to send again; send a new message instead.');
}
