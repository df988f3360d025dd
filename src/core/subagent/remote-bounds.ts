/**
 * What one remote turn may stream and keep (decision 0044): a remote program is not trusted to
 * bound its own output, so every driver's stream goes through a sink that keeps at most these,
 * says in the transcript what it dropped, and hands the parent a bounded answer. Generous for
 * real work (a long answer, a few hundred commands with their output); a flood is cut.
 */
export const REMOTE_BOUNDS = {
  /** Bytes of text, reasoning, tool call arguments and tool results one remote turn keeps in its log (its sub-sessions' included). */
  turnBytes: 4 * 1024 * 1024,
  /** Bytes streamed live to the views in one turn (not kept; the panel's streaming text). */
  streamBytes: 4 * 1024 * 1024,
  /** Bytes of one tool call's arguments or one tool result. */
  itemBytes: 256 * 1024,
  /** Tool calls one remote turn keeps (later ones, and their results, are dropped). */
  toolCalls: 1000,
  /** Tool calls announced and not finished at once (ACP: each holds its input and output until it ends). */
  openCalls: 64,
  /** Bytes of the error a remote turn ends with (the program's own message, its stderr tail). */
  errorBytes: 16 * 1024,
  /** Permission questions of an ACP agent open at once in one turn (asked one at a time, the rest waiting); more are refused at once. */
  questions: 16,
  /** Characters of what a permission question shows the human (the call's title and what it would run). */
  questionChars: 1000,
  /** Sub-sessions an ACP agent may announce in one turn (decision 0041); later ones are not shown. */
  subSessions: 64,
  /** Characters of a sub-session's id (an ACP session id is a name: a longer one is no announcement Arbor takes). */
  idChars: 200,
  /** Turns one sub-session may open in one turn of the child (each a turn/start and turn/end in its log); later work is counted. */
  subTurns: 50,
  /** Times one sub-session may be renamed in one turn of the child (each a descriptor in its log). */
  relabels: 20,
  /** Characters of a sub-session's title (its label in the tree). */
  titleChars: 200,
  /** Bytes of a child's answer in its parent's tool result or notice (its head and its tail are kept). */
  answerBytes: 256 * 1024,
  /** Kinds of skipped lines and events counted apart (the program names them: `unknown:<type>`); the rest count as `other`. */
  skippedKinds: 100,
} as const;

/** Count one skipped line or event by kind, in a table of bounded size (kinds a program names are cut to 100 characters). */
export function countSkipped(counts: Record<string, number>, kind: string): void {
  // A kind seen before is an own data property: assigning it never reaches a setter (not even `__proto__`'s).
  if (kind.length <= 100 && Object.hasOwn(counts, kind)) {
    counts[kind]++;
    return;
  }
  let k = kind.length > 100 ? `${kind.slice(0, 100)}…` : kind;
  if (!Object.hasOwn(counts, k) && Object.keys(counts).length >= REMOTE_BOUNDS.skippedKinds) k = 'other';
  // Defined, not assigned: a kind named `__proto__` is a count like any other, never the prototype.
  Object.defineProperty(counts, k, { value: (Object.hasOwn(counts, k) ? counts[k] : 0) + 1, enumerable: true, writable: true, configurable: true });
}

/** How much of the turn's budget is left, what was dropped: shared by the child's sink and its sub-sessions' sinks. */
export class TurnBounds {
  private kept = 0;
  private calls = 0;

  /** Bytes the turn may still keep. */
  room(): number {
    return Math.max(0, REMOTE_BOUNDS.turnBytes - this.kept);
  }

  /** Keep what fits of `text` (at most `max` bytes and the room left), and charge it. */
  take(text: string, max: number = REMOTE_BOUNDS.turnBytes): { kept: string; dropped: number } {
    const bytes = Buffer.byteLength(text);
    const limit = Math.min(max, this.room());
    const kept = bytes <= limit ? text : cutBytes(text, limit);
    const keptBytes = kept === text ? bytes : Buffer.byteLength(kept);
    this.kept += keptBytes;
    return { kept, dropped: bytes - keptBytes };
  }

  /** One more tool call, if the turn may keep it. */
  call(): boolean {
    if (this.calls >= REMOTE_BOUNDS.toolCalls) return false;
    this.calls++;
    return true;
  }
}

/**
 * A cut of `text` as a string of its own: V8 keeps a slice of a long string as a view that holds
 * the whole of it alive, so a 200-character name cut from an 8 MB line would keep the 8 MB for
 * as long as the name is kept (a map key, an event in the log).
 */
export function cutOf(text: string, end: number): string {
  if (end >= text.length) return text;
  return Buffer.from(text.slice(0, end), 'utf16le').toString('utf16le');
}

/** The longest head of `text` that is at most `max` bytes in UTF-8 (never half a surrogate pair), a string of its own. */
export function cutBytes(text: string, max: number): string {
  if (max <= 0) return '';
  if (Buffer.byteLength(text) <= max) return text;
  let lo = 0;
  let hi = Math.min(text.length, max);
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (Buffer.byteLength(text.slice(0, mid)) <= max) lo = mid;
    else hi = mid - 1;
  }
  const code = text.charCodeAt(lo - 1);
  return cutOf(text, code >= 0xd800 && code <= 0xdbff ? lo - 1 : lo);
}

/** The longest tail of `text` that is at most `max` bytes (never half a surrogate pair). */
function tailBytes(text: string, max: number): string {
  let lo = Math.max(0, text.length - max);
  let hi = text.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (Buffer.byteLength(text.slice(mid)) <= max) hi = mid;
    else lo = mid + 1;
  }
  const code = text.charCodeAt(lo);
  return text.slice(code >= 0xdc00 && code <= 0xdfff ? lo + 1 : lo);
}

/** `1.5 MiB`, `640 KiB`, `12 bytes`. */
export function sizeOf(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
  if (bytes >= 1024) return `${Math.round(bytes / 1024)} KiB`;
  return `${bytes} bytes`;
}

/**
 * A child's answer for its parent, at most `max` bytes (plus the note): its head and its end
 * (where a remote turn's truncation note is), with what was left out in between said.
 */
export function boundAnswer(text: string, max: number = REMOTE_BOUNDS.answerBytes): string {
  const bytes = Buffer.byteLength(text);
  if (bytes <= max) return text;
  const tail = tailBytes(text, Math.floor(max / 8));
  const head = cutBytes(text, max - Buffer.byteLength(tail));
  const gone = bytes - Buffer.byteLength(head) - Buffer.byteLength(tail);
  return `${head}\n\n[… Arbor left out ${sizeOf(gone)} of this ${sizeOf(bytes)} answer here (a child's answer is kept to ${sizeOf(max)}); its session's log has what was kept of its turn …]\n\n${tail}`;
}
