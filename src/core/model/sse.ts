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

/**
 * Splits text as it arrives into whole events; `push` returns those that completed. Linear in
 * what arrives: a line still open is kept as its pieces (joined once it ends), and each piece is
 * scanned once for line ends — a server sending one giant line costs no more than its bytes.
 */
export class SseReader {
  private open: string[] = [];
  private data: string[] = [];
  private event: string | null = null;
  /** The last piece ended in CR: an LF that starts the next one belongs to it. */
  private afterCr = false;

  push(text: string): SseEvent[] {
    const out: SseEvent[] = [];
    let start = 0;
    if (this.afterCr) {
      this.afterCr = false;
      if (text.charCodeAt(0) === 10) start = 1;
    }
    // The next LF and CR at or after `start`; -1 once there is none left in this piece.
    let lf = -2;
    let cr = -2;
    for (;;) {
      if (lf !== -1 && lf < start) lf = text.indexOf('\n', start);
      if (cr !== -1 && cr < start) cr = text.indexOf('\r', start);
      const end = lf < 0 ? cr : cr < 0 ? lf : Math.min(lf, cr);
      if (end < 0) break;
      let line = text.slice(start, end);
      if (this.open.length > 0) {
        this.open.push(line);
        line = this.open.join('');
        this.open = [];
      }
      this.line(line, out);
      start = end + 1;
      if (end === cr) {
        if (end + 1 === text.length) this.afterCr = true;
        else if (end + 1 === lf) start = end + 2;
      }
    }
    if (start < text.length) this.open.push(start === 0 ? text : text.slice(start));
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
