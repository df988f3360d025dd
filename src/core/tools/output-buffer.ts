/**
 * Keeps the first and the last bytes of a stream, up to `cap` in all: the head shows
 * what started, the tail shows how it ended (where errors usually are).
 */
export class OutputBuffer {
  private readonly head: Buffer[] = [];
  private headBytes = 0;
  private readonly tail: Buffer[] = [];
  private tailBytes = 0;
  /** Bytes seen, kept or not. */
  total = 0;

  constructor(private readonly cap: number) {}

  push(chunk: Buffer): void {
    this.total += chunk.length;
    const headCap = Math.floor(this.cap / 2);
    if (this.headBytes < headCap) {
      const take = Math.min(chunk.length, headCap - this.headBytes);
      this.head.push(chunk.subarray(0, take));
      this.headBytes += take;
      chunk = chunk.subarray(take);
    }
    if (chunk.length === 0) return;
    this.tail.push(chunk);
    this.tailBytes += chunk.length;
    const tailCap = this.cap - headCap;
    while (this.tailBytes > tailCap) {
      const excess = this.tailBytes - tailCap;
      const first = this.tail[0];
      if (first.length <= excess) {
        this.tail.shift();
        this.tailBytes -= first.length;
      } else {
        this.tail[0] = first.subarray(excess);
        this.tailBytes -= excess;
      }
    }
  }

  get truncated(): boolean {
    return this.total > this.headBytes + this.tailBytes;
  }

  /** The bytes kept, whole when nothing was cut (see `truncated`). */
  bytes(): Buffer {
    return Buffer.concat([...this.head, ...this.tail]);
  }

  toString(): string {
    const head = Buffer.concat(this.head).toString('utf8');
    const tail = Buffer.concat(this.tail).toString('utf8');
    if (!this.truncated) return head + tail;
    const omitted = this.total - this.headBytes - this.tailBytes;
    return `${head}\n[… ${omitted} bytes omitted (output is capped at ${this.cap} bytes: first and last halves kept) …]\n${tail}`;
  }
}
