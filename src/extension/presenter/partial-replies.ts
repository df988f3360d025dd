import type { SessionEvent } from '../../core/session/events';
import type { PartialReply } from '../../protocol';

/** Per kind, the most a partial keeps: the newest characters, so a late view sees what is being said now. */
export const PARTIAL_LIMIT = 64 * 1024;
const ELLIPSIS = '…';

/**
 * The reply each session is streaming, as far as it has got (decision 0010). Deltas live only
 * in memory until the `assistant/message` that holds them lands; a view that connects or
 * selects mid-stream gets this in its `transcript/reset`, then continues with deltas.
 * Bounded per session and dropped when the message lands or the turn ends.
 */
export class PartialReplies {
  private readonly bySession = new Map<string, { text: string; reasoning: string; clipped: { text: boolean; reasoning: boolean } }>();

  constructor(private readonly limit = PARTIAL_LIMIT) {}

  push(sessionId: string, kind: 'text' | 'reasoning', delta: string): void {
    let p = this.bySession.get(sessionId);
    if (!p) this.bySession.set(sessionId, (p = { text: '', reasoning: '', clipped: { text: false, reasoning: false } }));
    let next = p[kind] + delta;
    if (next.length > this.limit) {
      next = next.slice(next.length - this.limit);
      p.clipped[kind] = true;
    }
    p[kind] = next;
  }

  /** Events that supersede the stream: its message landed, a new step or turn began, the turn ended. */
  apply(sessionId: string, e: SessionEvent): void {
    if (e.type === 'assistant/message' || e.type === 'turn/end' || e.type === 'turn/start' || e.type === 'request/header') this.bySession.delete(sessionId);
  }

  /** What the session has streamed so far; a clipped head is marked with an ellipsis. */
  get(sessionId: string): PartialReply | undefined {
    const p = this.bySession.get(sessionId);
    if (!p || (p.text === '' && p.reasoning === '')) return undefined;
    return { text: (p.clipped.text ? ELLIPSIS : '') + p.text, reasoning: (p.clipped.reasoning ? ELLIPSIS : '') + p.reasoning };
  }

  forget(sessionId: string): void {
    this.bySession.delete(sessionId);
  }

  get size(): number {
    return this.bySession.size;
  }
}
