/**
 * Coalesces streamed deltas per session and kind into one message per interval, so a fast
 * stream costs one postMessage per frame, not one per token.
 */
export class StreamThrottle {
  private readonly pending = new Map<string, { sessionId: string; kind: 'text' | 'reasoning'; text: string }>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly emit: (sessionId: string, kind: 'text' | 'reasoning', delta: string) => void,
    private readonly intervalMs = 32,
  ) {}

  push(sessionId: string, kind: 'text' | 'reasoning', delta: string): void {
    const key = `${sessionId}\u0000${kind}`;
    const cur = this.pending.get(key);
    if (cur) cur.text += delta;
    else this.pending.set(key, { sessionId, kind, text: delta });
    this.timer ??= setTimeout(() => this.flush(), this.intervalMs);
  }

  /** Send what is pending now (before an event that supersedes the stream is posted). */
  flush(sessionId?: string): void {
    for (const [key, p] of this.pending) {
      if (sessionId !== undefined && p.sessionId !== sessionId) continue;
      this.pending.delete(key);
      this.emit(p.sessionId, p.kind, p.text);
    }
    if (this.pending.size === 0 && this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.pending.clear();
  }
}
