import type { ChildProcess } from 'node:child_process';

// The host's end of a script process's IPC pipe (decision 0045, amended in session 49). Node's
// own channel trusts the other end, and the other end may be an escaped script, which holds
// the process's `process` and the pipe's fd. Unguarded, three moves reached the host:
//
// - a frame that is not JSON (`fs.writeSync(process.channel.fd, '{x\n')`): Node's parser
//   throws out of the channel's read callback, an uncaught exception in the host (`arbor run`
//   died of it);
// - a line with no end: Node keeps it in one string, without bound (the host's memory);
// - a handle (`process.send(m, server)`, SCM_RIGHTS): Node turns it into a live object in the
//   host; a listening server kept the host's event loop alive for ever.
//
// The guard wraps the read callback (a throw, or more than `maxFrameBytes` since the last line
// end, is a breach) and takes Node's handling of internal messages (`NODE_*`, what carries
// handles) away: the host sends no handle and expects none, so any such message is a breach
// and its handle is closed at once. On a breach the read callback stops passing data on and
// `onBreach` is told (once); the caller ends the process.

/** The longest message a script process may send (its own side cuts what a script can make far below this). */
export const MAX_FRAME_BYTES = 64 * 1024 * 1024;

type ReadCallback = (this: unknown, buf?: ArrayBuffer, ...rest: unknown[]) => unknown;
type Closable = { close?: () => void; destroy?: () => void };

/** Node's pipe handle under `proc.channel` (a symbol-keyed own property of the ChildProcess, `kChannelHandle`). */
function channelHandle(proc: ChildProcess): { onread?: ReadCallback } | undefined {
  for (const s of Object.getOwnPropertySymbols(proc)) {
    if (s.description !== 'kChannelHandle') continue;
    const h = (proc as unknown as Record<symbol, unknown>)[s];
    if (typeof h === 'object' && h !== null) return h as { onread?: ReadCallback };
  }
  return undefined;
}

const close = (h: unknown) => {
  try {
    const c = h as Closable | null | undefined;
    if (typeof c?.destroy === 'function') c.destroy();
    else if (typeof c?.close === 'function') c.close();
  } catch {
    // already closed
  }
};

/**
 * Guards the host's end of `proc`'s IPC channel (see above). Returns false when this Node's
 * channel is not the shape the guard knows (its read callback not found): the internal-message
 * part still holds, the frame checks do not.
 */
export function guardChannel(proc: ChildProcess, onBreach: () => void, maxFrameBytes = MAX_FRAME_BYTES): boolean {
  let breached = false;
  const breach = () => {
    if (breached) return;
    breached = true;
    onBreach();
  };
  // Node's listener turns NODE_HANDLE into a live server or socket; ours refuses every internal message.
  proc.removeAllListeners('internalMessage');
  proc.on('internalMessage', (_m: unknown, handle: unknown) => {
    close(handle);
    breach();
  });
  // A handle that reached the user's 'message' event anyway is closed too.
  proc.prependListener('message', (_m: unknown, handle: unknown) => {
    if (handle === undefined || handle === null) return;
    close(handle);
    breach();
  });
  const h = channelHandle(proc);
  const read = h?.onread;
  if (!h || typeof read !== 'function') return false;
  let sinceLineEnd = 0;
  const guarded: ReadCallback = function (this: unknown, buf, ...rest) {
    if (buf instanceof ArrayBuffer) {
      // After a breach no data is parsed (the end of the pipe still is: Node then closes its handle).
      if (breached) return undefined;
      // The read's bytes are the whole buffer (Node hands the callback a buffer cut to the read).
      const bytes = new Uint8Array(buf);
      const end = bytes.indexOf(0x0a);
      const longest = end < 0 ? sinceLineEnd + bytes.length : Math.max(sinceLineEnd + end, bytes.length - bytes.lastIndexOf(0x0a) - 1);
      sinceLineEnd = end < 0 ? longest : bytes.length - bytes.lastIndexOf(0x0a) - 1;
      if (longest > maxFrameBytes) return breach();
    }
    try {
      return read.call(this, buf, ...rest);
    } catch {
      breach();
      return undefined;
    }
  };
  h.onread = guarded;
  return h.onread === guarded;
}
