import type { MessageSource, SessionEvent, ToolCall } from './events';

/** A message as the model sees it, tagged with the seq it was folded from. */
export type DerivedMessage =
  | { role: 'user'; content: string; source: MessageSource; seq: number }
  | { role: 'assistant'; content: string; reasoning?: string; toolCalls?: ToolCall[]; seq: number }
  | { role: 'tool'; toolCallId: string; name: string; content: string; isError: boolean; seq: number };

/** Stands in for the result of a call whose turn ended before it answered (chat APIs need one per call). */
export const MISSING_RESULT = 'No result: the turn ended before this tool call finished.';

/**
 * Fold the log's surface into model messages. Runtime events (turns, policy, inbox,
 * request headers) are not history. A committed compaction's replacing `user/message`
 * takes the place of the range it replaces; an aborted or unfinished one changes nothing.
 */
export function deriveMessages(events: readonly SessionEvent[]): DerivedMessage[] {
  const committed = new Set<string>();
  for (const e of events) if (e.type === 'compaction/end' && e.outcome === 'committed') committed.add(e.compactionId);

  let out: DerivedMessage[] = [];
  let pending = new Map<string, string>();
  for (const e of events) {
    if (e.type === 'user/message') {
      const msg: DerivedMessage = { role: 'user', content: e.text, source: e.source, seq: e.seq };
      if (e.surfaceOp === 'replace' && e.replaces && e.compactionId && committed.has(e.compactionId)) {
        out = replaceRange(out, e.replaces.fromSeq, e.replaces.toSeq, msg);
      } else if (e.surfaceOp === undefined) {
        out.push(msg);
      }
    } else if (e.type === 'assistant/message') {
      const msg: DerivedMessage = { role: 'assistant', content: e.text, seq: e.seq };
      if (e.reasoning !== undefined) msg.reasoning = e.reasoning;
      if (e.toolCalls && e.toolCalls.length > 0) {
        msg.toolCalls = e.toolCalls;
        for (const c of e.toolCalls) pending.set(c.id, c.name);
      }
      out.push(msg);
    } else if (e.type === 'tool/result') {
      pending.delete(e.callId);
      out.push({ role: 'tool', toolCallId: e.callId, name: e.name, content: e.content, isError: e.isError, seq: e.seq });
    } else if (e.type === 'turn/end') {
      for (const [id, name] of pending) out.push({ role: 'tool', toolCallId: id, name, content: MISSING_RESULT, isError: true, seq: e.seq });
      pending = new Map();
    }
  }
  return out;
}

/**
 * Messages folded from seqs in [from, to] give way to `msg`, which lands where the first of
 * them was. `msgs` is not in seq order once an earlier replacement kept a tail (the summary
 * carries its own, later seq), so position, not seq, says where the range was.
 */
function replaceRange(msgs: DerivedMessage[], from: number, to: number, msg: DerivedMessage): DerivedMessage[] {
  const inRange = (m: DerivedMessage): boolean => m.seq >= from && m.seq <= to;
  let at = msgs.findIndex(inRange);
  if (at < 0) at = msgs.findIndex((m) => m.seq > to);
  if (at < 0) at = msgs.length;
  return [...msgs.slice(0, at).filter((m) => !inRange(m)), msg, ...msgs.slice(at).filter((m) => !inRange(m))];
}
