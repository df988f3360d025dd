// Server-sent events, as the chat-completions stream sends them (the WHATWG format): lines
// ending in LF, CRLF or CR; `data:` lines of one event joined with LF; a blank line ends the
// event; `:` lines are comments (keep-alives); other fields are kept only for `event`. An event
// the stream ends inside (no blank line after it) is never dispatched, as browsers and the
// openai SDK drop it: a reply cut mid-chunk ends `cut`, not with half a chunk parsed.

export interface SseEvent {
  /** The `event:` field, or null when the event had none (every chat-completions chunk). */
  event: string | null;
  data: string;
}

/** Splits text as it arrives into whole events; `push` returns those that completed. */
export class SseReader {
  private rest = '';
  private data: string[] = [];
  private event: string | null = null;
  /** The last piece ended in CR: an LF that starts the next one belongs to it. */
  private afterCr = false;

  push(text: string): SseEvent[] {
    const out: SseEvent[] = [];
    let s = this.rest + text;
    if (this.afterCr && s.startsWith('\n')) s = s.slice(1);
    this.afterCr = false;
    let start = 0;
    for (;;) {
      const lf = s.indexOf('\n', start);
      const cr = s.indexOf('\r', start);
      const end = lf < 0 ? cr : cr < 0 ? lf : Math.min(lf, cr);
      if (end < 0) break;
      this.line(s.slice(start, end), out);
      if (s.charCodeAt(end) === 13) {
        if (end + 1 === s.length) this.afterCr = true;
        else if (s.charCodeAt(end + 1) === 10) {
          start = end + 2;
          continue;
        }
      }
      start = end + 1;
    }
    this.rest = s.slice(start);
    return out;
  }

  private line(line: string, out: SseEvent[]): void {
    if (line === '') {
      if (this.data.length > 0) out.push({ event: this.event, data: this.data.join('\n') });
      this.data = [];
      this.event = null;
      return;
    }
    if (line.charCodeAt(0) === 58) return; // ':' a comment
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.event = value;
  }
}
