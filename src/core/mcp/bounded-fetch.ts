import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';

// The streamable HTTP transport reads a JSON answer whole (`response.json()`) and a server-sent
// event until its blank line, with no bound: a server that answered a call with 300 MB put all
// of it, and its decoded string, in the host's memory. This fetch hands the transport a body that
// errors once one message passes `max` bytes — for a JSON body, the body; for an event stream,
// the bytes since the last blank line (a stream that carries many small events for hours is
// fine) — and says so to `over`, which ends the connection.

export function boundedFetch(max: number, over: (why: string) => void, base: FetchLike = fetch): FetchLike {
  return async (url, init) => {
    const res = await base(url, init);
    if (!res.body || (res.status >= 300 && res.status < 400)) return res;
    const events = (res.headers.get('content-type') ?? '').includes('text/event-stream');
    let run = 0;
    let afterNewline = false;
    const why = `it sent a message over ${Math.round(max / (1024 * 1024))} MB (the most one message may take)`;
    const counted = res.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, out) {
          if (!events) run += chunk.length;
          else
            for (const b of chunk) {
              if (b === 13) continue; // "\r\n\r\n" ends an event as "\n\n" does
              if (b === 10 && afterNewline) run = 0;
              else run++;
              afterNewline = b === 10;
            }
          if (run > max) {
            over(why);
            out.error(new Error(`the server's answer was cut off: ${why}`));
            return;
          }
          out.enqueue(chunk);
        },
      }),
    );
    return new Response(counted, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}
