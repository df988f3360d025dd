// The wire between the host and `arbor-zygote` (native/zygote.c, decision 0103): requests as
// bytes, and a decoder that turns the zygote's stream back into whole frames, however its
// bytes are split across reads. Little-endian, like the C side; the frame layouts are written
// there, at the top of the file.

/** What the zygote says, one whole frame each. */
export type ZygoteFrame =
  | { type: 'hello'; error: string }
  | { type: 'started'; id: number }
  | { type: 'failed'; id: number; message: string }
  | { type: 'output'; id: number; stream: 1 | 2; data: Buffer }
  | { type: 'ended'; id: number; code: number | null; signal: number | null };

/** A request to run `argv` in `cwd` with `env` (each `NAME=value`), with an empty read-only stand-in over each of `shadows`. */
export function runRequest(id: number, cwd: string, argv: readonly string[], env: readonly string[], shadows: readonly string[]): Buffer {
  const strings = [cwd, ...argv, ...env, ...shadows].map((s) => Buffer.from(s, 'utf8'));
  const head = Buffer.alloc(17);
  head.write('R', 0, 'latin1');
  head.writeUInt32LE(id, 1);
  head.writeUInt32LE(argv.length, 5);
  head.writeUInt32LE(env.length, 9);
  head.writeUInt32LE(shadows.length, 13);
  const parts: Buffer[] = [head];
  for (const s of strings) {
    const len = Buffer.alloc(4);
    len.writeUInt32LE(s.length, 0);
    parts.push(len, s);
  }
  return Buffer.concat(parts);
}

/** A request to kill command `id`'s namespaces (the zygote can only SIGKILL a namespace's first process). */
export function killRequest(id: number): Buffer {
  const b = Buffer.alloc(9);
  b.write('K', 0, 'latin1');
  b.writeUInt32LE(id, 1);
  b.writeUInt32LE(9, 5);
  return b;
}

/** Bytes needed after the type byte before a frame's length is known: fixed part, and where its length field sits (if any). */
const LAYOUT: Record<string, { fixed: number; lengthAt?: number }> = {
  H: { fixed: 8, lengthAt: 4 },
  S: { fixed: 8 },
  E: { fixed: 8, lengthAt: 4 },
  O: { fixed: 9, lengthAt: 5 },
  X: { fixed: 12 },
};

const DECODE: Record<string, (body: Buffer) => ZygoteFrame> = {
  H: (b) => ({ type: 'hello', error: b.toString('utf8', 8) }),
  S: (b) => ({ type: 'started', id: b.readUInt32LE(0) }),
  E: (b) => ({ type: 'failed', id: b.readUInt32LE(0), message: b.toString('utf8', 8) }),
  O: (b) => ({ type: 'output', id: b.readUInt32LE(0), stream: b[4] === 2 ? 2 : 1, data: b.subarray(9) }),
  X: (b) => {
    const signaled = b.readUInt32LE(4) === 1;
    const value = b.readUInt32LE(8);
    return { type: 'ended', id: b.readUInt32LE(0), code: signaled ? null : value, signal: signaled ? value : null };
  },
};

/** Turns the zygote's byte stream into frames; `push` each chunk as it is read. Throws on a byte that starts no frame. */
export class FrameDecoder {
  private pending: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): ZygoteFrame[] {
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    const out: ZygoteFrame[] = [];
    let at = 0;
    for (;;) {
      if (this.pending.length - at < 1) break;
      const type = String.fromCharCode(this.pending[at]);
      const layout = LAYOUT[type];
      if (!layout) throw new Error(`the sandbox's zygote sent a frame of unknown type ${this.pending[at]}`);
      if (this.pending.length - at - 1 < layout.fixed) break;
      const extra = layout.lengthAt === undefined ? 0 : this.pending.readUInt32LE(at + 1 + layout.lengthAt);
      const total = 1 + layout.fixed + extra;
      if (this.pending.length - at < total) break;
      // A copy for output (it outlives this chunk in the command's stream), a view for the rest.
      const body = type === 'O' ? Buffer.from(this.pending.subarray(at + 1, at + total)) : this.pending.subarray(at + 1, at + total);
      out.push(DECODE[type](body));
      at += total;
    }
    this.pending = this.pending.subarray(at);
    return out;
  }
}
