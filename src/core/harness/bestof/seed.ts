import type { SessionEvent } from '../../session/events';
import { forkPoint, throughCompaction } from '../../session/fork';

// Where a way of "Try N ways" forks (decision 0061). On the human's own message, each way
// re-runs that message from just before it: the seed ends at the last finished turn before the
// message (nothing of the message's turn, which may still be running). On any other message,
// the seed ends with the turn holding it (as a fork does) and the human gives the prompt.

export type WaySeed = { ok: true; end: number; prompt: string } | { ok: false; code: 'NO_SUCH_EVENT' | 'TURN_NOT_ENDED' | 'PROMPT_REQUIRED'; message: string };

/** The seed's length (events `[0, end)`; 0: none) and the prompt each way runs, for a group started at `seq`. */
export function waySeed(events: readonly SessionEvent[], seq: number, prompt?: string): WaySeed {
  if (!Number.isSafeInteger(seq) || seq < 0 || seq >= events.length)
    return { ok: false, code: 'NO_SUCH_EVENT', message: `That conversation has no message ${seq}.` };
  const at = events[seq];
  const given = prompt?.trim();
  if (at.type === 'user/message' && at.source.kind === 'user' && !at.source.compacted) {
    let end = -1;
    // A compaction made before the message's turn is the surface that turn's requests started with.
    for (let i = seq - 1; i >= 0 && end < 0; i--) if (events[i].type === 'turn/end') end = Math.min(throughCompaction(events, i), seq - 1) + 1;
    // No finished turn before it: nothing is seeded (a seed holds whole turns only).
    if (end < 0) end = 0;
    return { ok: true, end, prompt: given || at.text };
  }
  if (!given)
    return {
      ok: false,
      code: 'PROMPT_REQUIRED',
      message: 'Trying several ways from a reply needs the prompt each way should run; type one, or start from one of your own messages.',
    };
  const end = forkPoint(events, seq);
  if (end < 0) return { ok: false, code: 'TURN_NOT_ENDED', message: 'That message is in a turn that has not finished yet; try several ways after it ends.' };
  return { ok: true, end: end + 1, prompt: given };
}
