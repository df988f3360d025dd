import type { AcpErrorCode } from './errors';

// What `arbor acp` reads from its client, before the SDK parses it (decision 0037, amended): a
// line past the SDK's message limit made its reader fail and the connection close, silently; a
// message nested some thousands deep overflowed the stack where the SDK echoes an invalid one.
// Either ended every prompt under way. Such a line is dropped here instead — never buffered past
// the limit — and answered, with its request's id when its head names one.

/** The most one message (one line) may hold: the SDK's own default, passed to it too. */
export const MAX_MESSAGE_BYTES = 32 * 1024 * 1024;
/** The deepest nesting of objects and arrays a message may have (ACP's own go a dozen deep). */
export const MAX_DEPTH = 256;
/** How much of a refused line is kept to find its id and method. */
const HEAD_BYTES = 4096;

const NEWLINE = 0x0a;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;

export interface Refusal {
  code: Extract<AcpErrorCode, 'MESSAGE_TOO_LARGE' | 'MESSAGE_TOO_DEEP'>;
  /** The line's length in bytes (without its newline). */
  bytes: number;
  /** The request's id, when the line's head names one (a number or a string). */
  id?: number | string;
  method?: string;
}

export interface GuardLimits {
  maxBytes: number;
  maxDepth: number;
}

/**
 * The client's bytes as whole lines the SDK may read: each line within the limits goes on as it
 * came; one past them is dropped and `refused` is told. Work is one pass over the bytes.
 */
export function guardInput(
  input: ReadableStream<Uint8Array>,
  refused: (r: Refusal) => void,
  limits: GuardLimits = { maxBytes: MAX_MESSAGE_BYTES, maxDepth: MAX_DEPTH },
): ReadableStream<Uint8Array> {
  const lines = new LineGuard(limits, refused);
  return input.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform: (chunk, controller) => lines.push(chunk, (b) => controller.enqueue(b)),
      flush: (controller) => lines.end((b) => controller.enqueue(b)),
    }),
  );
}

/** Splits bytes into lines, following strings and nesting across chunks; a line is passed on only once it is whole and within the limits. */
export class LineGuard {
  private parts: Uint8Array[] = [];
  private size = 0;
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** Set once the line is past a limit: its bytes are no longer kept (only its head). */
  private over: Refusal['code'] | undefined;
  private head: Uint8Array | undefined;

  constructor(
    private readonly limits: GuardLimits,
    private readonly refused: (r: Refusal) => void,
  ) {}

  push(chunk: Uint8Array, out: (bytes: Uint8Array) => void): void {
    let start = 0;
    while (start <= chunk.byteLength) {
      const nl = chunk.indexOf(NEWLINE, start);
      const end = nl === -1 ? chunk.byteLength : nl;
      this.take(chunk, start, end);
      if (nl === -1) return;
      this.lineEnd(out, true);
      start = nl + 1;
    }
  }

  /** The input ended: a last line without a newline goes on as it is. */
  end(out: (bytes: Uint8Array) => void): void {
    if (this.size > 0 || this.over) this.lineEnd(out, false);
  }

  private take(chunk: Uint8Array, from: number, to: number): void {
    if (to <= from) return;
    if (!this.over) {
      this.scan(chunk, from, to);
      if (!this.over && this.size + (to - from) > this.limits.maxBytes) this.refuse('MESSAGE_TOO_LARGE', chunk.subarray(from, to));
    }
    if (!this.over) this.parts.push(chunk.subarray(from, to));
    this.size += to - from;
  }

  /** Follows strings and nesting over the line's next bytes; past the depth limit the line is refused. */
  private scan(chunk: Uint8Array, from: number, to: number): void {
    let { depth, inString, escaped } = this;
    for (let i = from; i < to; i++) {
      const b = chunk[i];
      if (inString) {
        if (escaped) escaped = false;
        else if (b === BACKSLASH) escaped = true;
        else if (b === QUOTE) inString = false;
      } else if (b === QUOTE) inString = true;
      else if (b === OPEN_BRACE || b === OPEN_BRACKET) {
        if (++depth > this.limits.maxDepth) {
          this.refuse('MESSAGE_TOO_DEEP', chunk.subarray(from, to));
          return;
        }
      } else if (b === CLOSE_BRACE || b === CLOSE_BRACKET) depth--;
    }
    this.depth = depth;
    this.inString = inString;
    this.escaped = escaped;
  }

  /** The line is past a limit: keep only its head (to name the request), drop what was kept. */
  private refuse(code: Refusal['code'], next: Uint8Array): void {
    this.over = code;
    const head = new Uint8Array(HEAD_BYTES);
    let n = 0;
    for (const p of [...this.parts, next]) {
      if (n >= HEAD_BYTES) break;
      const part = p.subarray(0, HEAD_BYTES - n);
      head.set(part, n);
      n += part.byteLength;
    }
    this.head = head.subarray(0, n);
    this.parts = [];
  }

  private lineEnd(out: (bytes: Uint8Array) => void, newline: boolean): void {
    if (this.over) {
      const named = headOf(new TextDecoder().decode(this.head));
      this.refused({ code: this.over, bytes: this.size, ...named });
    } else if (this.size > 0) {
      const parts = newline ? [...this.parts, NEWLINE_BYTES] : this.parts;
      out(parts.length === 1 ? parts[0] : concat(parts, this.size + (newline ? 1 : 0)));
    }
    this.parts = [];
    this.size = 0;
    this.depth = 0;
    this.inString = this.escaped = false;
    this.over = undefined;
    this.head = undefined;
  }
}

const NEWLINE_BYTES = new Uint8Array([NEWLINE]);

function concat(parts: Uint8Array[], size: number): Uint8Array {
  const all = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    all.set(p, at);
    at += p.byteLength;
  }
  return all;
}

/**
 * The `id` and `method` a JSON-RPC message's head names at its top level (clients write them
 * before `params`). Whatever cannot be read within the head is left out.
 */
export function headOf(text: string): { id?: number | string; method?: string } {
  const out: { id?: number | string; method?: string } = {};
  let i = 0;
  const ws = () => {
    while (i < text.length && /\s/.test(text[i])) i++;
  };
  const str = (): string | undefined => {
    const m = /^"(?:[^"\\]|\\.)*"/.exec(text.slice(i, i + 1024));
    if (!m) return undefined;
    i += m[0].length;
    try {
      return JSON.parse(m[0]) as string;
    } catch {
      return undefined;
    }
  };
  /** Skips one value; false when it runs past the head. */
  const skip = (): boolean => {
    ws();
    if (text[i] === '"') return str() !== undefined;
    if (text[i] === '{' || text[i] === '[') {
      let depth = 0;
      for (; i < text.length; i++) {
        const c = text[i];
        if (c === '"') {
          if (str() === undefined) return false;
          i--;
        } else if (c === '{' || c === '[') depth++;
        else if (c === '}' || c === ']') {
          if (--depth === 0) {
            i++;
            return true;
          }
        }
      }
      return false;
    }
    const m = /^[^,}\]\s]+/.exec(text.slice(i, i + 64));
    if (!m) return false;
    i += m[0].length;
    return true;
  };
  ws();
  if (text[i++] !== '{') return out;
  for (;;) {
    ws();
    const key = str();
    if (key === undefined) return out;
    ws();
    if (text[i++] !== ':') return out;
    ws();
    if (key === 'method' && text[i] === '"') {
      const method = str();
      if (method === undefined) return out;
      out.method = method;
    } else if (key === 'id') {
      const quoted = text[i] === '"';
      const id = quoted ? str() : /^-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?(?=[\s,}])/.exec(text.slice(i, i + 64))?.[0];
      if (id === undefined) return out;
      if (quoted) out.id = id;
      else {
        out.id = Number(id);
        i += id.length;
      }
    } else if (!skip()) return out;
    ws();
    if (text[i++] !== ',') return out;
  }
}

/** What a refused line is told (and the stderr line says), what happened and what to do. */
export function refusalText(r: Refusal, limits: GuardLimits = { maxBytes: MAX_MESSAGE_BYTES, maxDepth: MAX_DEPTH }): string {
  if (r.code === 'MESSAGE_TOO_DEEP')
    return `the message nests objects and arrays more than ${limits.maxDepth} deep; nothing of it was read. Send it flatter (_meta included).`;
  const mib = (n: number) => `${Math.round((n / 1024 / 1024) * 10) / 10} MiB`;
  return (
    `the message is ${mib(r.bytes)}, past the ${mib(limits.maxBytes)} one ACP message may hold; nothing of it was read. ` +
    'Put large content in a file in the workspace and send a resource_link to it, or send it in parts.'
  );
}

/**
 * The JSON-RPC answer to a refused line: an invalid request with its id (null when its head named
 * none, as for a parse error); undefined for a notification, which gets no answer.
 */
export function refusalAnswer(r: Refusal, text: string): object | undefined {
  if (r.id === undefined && r.method !== undefined) return undefined;
  return { jsonrpc: '2.0', id: r.id ?? null, error: { code: -32600, message: `Invalid request: ${text}`, data: { code: r.code, message: text } } };
}
