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
  const fold = new SurfaceFold();
  for (const e of events) fold.apply(e);
  return fold.messages();
}

/**
 * The same fold one event at a time, so a session keeps its surface current as it grows
 * instead of refolding its whole log before every model request. A replacement waits for
 * its compaction to commit; the range it replaces lies before it, so applying it then
 * gives the same surface as applying it where it stands.
 */
export class SurfaceFold {
  private out: DerivedMessage[] = [];
  /**
   * Identifies the current run of appends: every surface handed out under one lineage is a
   * prefix of every later one under it (messages are only pushed, never changed). A committed
   * replacement rewrites the surface and starts a new lineage. A request builder keyed on it
   * serializes only the messages added since its last request (decision 0064).
   */
  private lineageToken: object = {};
  private pending = new Map<string, string>();
  private readonly replacements = new Map<string, { msg: DerivedMessage; fromSeq: number; toSeq: number }>();

  apply(e: SessionEvent): void {
    if (e.type === 'user/message') {
      const msg: DerivedMessage = { role: 'user', content: e.text, source: e.source, seq: e.seq };
      if (e.surfaceOp === 'replace' && e.replaces && e.compactionId) this.replacements.set(e.compactionId, { msg, ...e.replaces });
      else if (e.surfaceOp === undefined) this.out.push(msg);
    } else if (e.type === 'assistant/message') {
      const msg: DerivedMessage = { role: 'assistant', content: e.text, seq: e.seq };
      if (e.reasoning !== undefined) msg.reasoning = e.reasoning;
      if (e.toolCalls && e.toolCalls.length > 0) {
        msg.toolCalls = e.toolCalls;
        for (const c of e.toolCalls) this.pending.set(c.id, c.name);
      }
      this.out.push(msg);
    } else if (e.type === 'tool/result') {
      this.pending.delete(e.callId);
      this.out.push({ role: 'tool', toolCallId: e.callId, name: e.name, content: e.content, isError: e.isError, seq: e.seq });
    } else if (e.type === 'turn/end') {
      for (const [id, name] of this.pending) this.out.push({ role: 'tool', toolCallId: id, name, content: MISSING_RESULT, isError: true, seq: e.seq });
      this.pending = new Map();
    } else if (e.type === 'compaction/end') {
      const r = this.replacements.get(e.compactionId);
      this.replacements.delete(e.compactionId);
      if (r && e.outcome === 'committed') {
        this.out = replaceRange(this.out, r.fromSeq, r.toSeq, r.msg);
        this.lineageToken = {};
      }
    }
  }

  /** The current surface: a fresh array (its messages are shared with the fold: do not mutate). */
  messages(): DerivedMessage[] {
    return this.out.slice();
  }

  /**
   * The current surface without a copy (a step's request must not cost O(history)): the fold's
   * own array, which later folds under this lineage extend by pushing, never change in place
   * (a committed replacement folds into a new array under a new lineage). A holder that needs
   * this moment's surface after a later fold keeps its `length` now and reads that prefix, or
   * takes `messages()`. Do not mutate.
   */
  live(): readonly DerivedMessage[] {
    return this.out;
  }

  /** The current lineage (see `lineageToken`): equal tokens mean one surface extends the other. */
  get lineage(): object {
    return this.lineageToken;
  }
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
