import { ReplyAnomaly } from './wire-chunk';

// Bounds on one streamed reply, so no server can hold a turn open forever or fill memory: the
// head's timeout (http-post.ts) ends when the response head arrives; these cover the body.

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

/** A reply past the byte limit: refused whole (nothing of it kept), counted on the wire as it arrives, so a giant line is cut as early as text is. */
export const tooBig = (maxBytes: number) => new ReplyAnomaly(`a reply larger than ${mib(maxBytes)} (the limit for one reply)`, true);
