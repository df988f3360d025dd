import type { FileHandle } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';

/** Bytes read from the file at once. */
const CHUNK_BYTES = 256 * 1024;
/** A returned line's characters are counted (by decoding) only up to this many bytes; longer lines report bytes. */
const COUNTED_BYTES = 1024 * 1024;

/** Why reading stopped short of a line: the end of the file, the scan budget, or an abort. */
export type Stop = 'eof' | 'limit' | 'aborted';

export interface Line {
  /** The first characters of the line (at least `keepChars` of them when the line is longer), without its `\r\n`/`\n`. */
  text: string;
  /** The line's length in characters (UTF-16 units, like `string.length`); undefined past `COUNTED_BYTES` (decoding is the slow part). */
  chars?: number;
  /** The line's length in bytes, without its line break; a lower bound when `!complete`. */
  bytes: number;
  /** False when the scan budget ran out inside the line. */
  complete: boolean;
}

/**
 * Reads a file line by line from a handle, one chunk at a time, so no line and no file is
 * ever held whole: a skipped line costs a byte search, a returned one keeps only its first
 * `keepChars` characters (and its length: characters up to 1 MB, bytes beyond). Reading
 * stops after `maxScanBytes` bytes, so a file of any size (a sparse 100 GB file, one line
 * of 1.5 GB) is read for a bounded time. Lines end at `\n`; a `\r` before it is dropped.
 */
export class LineReader {
  private buf: Buffer = Buffer.alloc(0);
  private off = 0;
  private position = 0;
  private atEof = false;
  /** Bytes read from the file so far. */
  scanned = 0;
  /** Lines read or skipped so far (the number of the last one). */
  lines = 0;

  constructor(
    private readonly fh: FileHandle,
    private readonly maxScanBytes: number,
    private readonly signal: AbortSignal,
  ) {}

  /** Skip one line; `true` when there was one. */
  async skipLine(): Promise<true | Stop> {
    let any = false;
    for (;;) {
      if (this.off >= this.buf.length) {
        const s = await this.fill();
        if (s === 'eof' && any) return this.counted(true);
        if (s !== true) return s;
      }
      any = true;
      const nl = this.buf.indexOf(10, this.off);
      if (nl >= 0) {
        this.off = nl + 1;
        return this.counted(true);
      }
      this.off = this.buf.length;
    }
  }

  /** Read one line, keeping its first `keepChars` characters. */
  async readLine(keepChars: number): Promise<Line | Stop> {
    // 4 bytes per UTF-16 unit is more than any UTF-8 sequence needs, so the kept bytes decode to ≥ keepChars characters.
    const keepBytes = keepChars * 4 + 4;
    const kept: Buffer[] = [];
    let keptBytes = 0;
    const counter = new StringDecoder('utf8');
    let chars = 0;
    let bytes = 0;
    let any = false;
    let lastByte = -1;
    const take = (piece: Buffer): void => {
      if (piece.length === 0) return;
      any = true;
      lastByte = piece[piece.length - 1];
      if (bytes + piece.length <= COUNTED_BYTES) chars += counter.write(piece).length;
      bytes += piece.length;
      if (keptBytes < keepBytes) {
        const part = piece.subarray(0, keepBytes - keptBytes);
        kept.push(Buffer.from(part));
        keptBytes += part.length;
      }
    };
    const finish = (complete: boolean): Line => {
      const counted = bytes <= COUNTED_BYTES;
      if (counted) chars += counter.end().length;
      let text = Buffer.concat(kept).toString('utf8');
      if (complete && lastByte === 13) {
        chars--;
        bytes--;
        if (text.endsWith('\r')) text = text.slice(0, -1);
      }
      this.lines++;
      return { text, ...(counted ? { chars } : {}), bytes, complete };
    };
    for (;;) {
      if (this.off >= this.buf.length) {
        const s = await this.fill();
        if (s === 'eof') return any ? finish(true) : 'eof';
        if (s === 'limit') return any ? finish(false) : 'limit';
        if (s !== true) return s;
      }
      const nl = this.buf.indexOf(10, this.off);
      if (nl >= 0) {
        take(this.buf.subarray(this.off, nl));
        this.off = nl + 1;
        return finish(true);
      }
      take(this.buf.subarray(this.off));
      this.off = this.buf.length;
    }
  }

  private counted(v: true): true {
    this.lines++;
    return v;
  }

  private async fill(): Promise<true | Stop> {
    if (this.signal.aborted) return 'aborted';
    if (this.atEof) return 'eof';
    if (this.scanned >= this.maxScanBytes) return 'limit';
    const want = Math.min(CHUNK_BYTES, this.maxScanBytes - this.scanned);
    const chunk = Buffer.allocUnsafe(want);
    const { bytesRead } = await this.fh.read(chunk, 0, want, this.position);
    if (bytesRead === 0) {
      this.atEof = true;
      return 'eof';
    }
    this.position += bytesRead;
    this.scanned += bytesRead;
    this.buf = chunk.subarray(0, bytesRead);
    this.off = 0;
    return true;
  }
}
