import { boundedHttpFetch } from './http-fetch';
import { ReplyAnomaly } from './wire-chunk';

// Bounds on one streamed reply, so no server can hold a turn open forever or fill memory:
// the SDK's own timeout ends when the response head arrives, and it reads a body of any size.

/** Why our own controller aborted a stream: the model went quiet for longer than the timeout. */
export const STALLED = Symbol('stalled');

/**
 * Fires `onIdle` once no progress was reported for `ms`. Started when the response head has
 * arrived; each chunk that carries something (text, a call, usage, a finish) resets it, so a
 * silent stream and one that only drips empty deltas or keep-alives end alike.
 */
export class Watchdog {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly ms: number,
    private readonly onIdle: () => void,
  ) {}

  reset(): void {
    // refresh() re-arms the same timer: no allocation per chunk.
    if (this.timer) this.timer.refresh();
    else this.timer = setTimeout(this.onIdle, this.ms);
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}

const mib = (bytes: number): string => `${Math.round((bytes / (1024 * 1024)) * 10) / 10} MiB`;

/**
 * A fetch whose response bodies fail with a ReplyAnomaly past `maxBytes`: counted on the
 * wire, so a giant line (which the SSE reader would buffer whole) is cut as early as text is.
 */
export function byteLimitedFetch(maxBytes: number, base: typeof fetch = fetch): typeof fetch {
  return async (input, init) => {
    const res = await base(input, init);
    if (!res.body) return res;
    let seen = 0;
    const counted = res.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, ctl) {
          seen += chunk.byteLength;
          if (seen > maxBytes) ctl.error(tooBig(maxBytes));
          else ctl.enqueue(chunk);
        },
      }),
    );
    return new Response(counted, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}

const tooBig = (maxBytes: number) => new ReplyAnomaly(`a reply larger than ${mib(maxBytes)} (the limit for one reply)`, true);

/**
 * httpFetch with the same bound, counted in its own body stream: a reply's chunks pass one web
 * stream, not two joined by a pipe (a fan-out child's reply cost ~0.2 ms of CPU more through
 * the pipe, decision 0088). What httpFetch leaves to the global fetch is bounded as above.
 */
export function byteLimitedHttpFetch(maxBytes: number): typeof fetch {
  return boundedHttpFetch({ maxBytes, error: () => tooBig(maxBytes) }, byteLimitedFetch(maxBytes, fetch));
}
