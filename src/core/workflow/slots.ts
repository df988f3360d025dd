/** A place in the slots' FIFO queue, taken when `agent()` is called (decision 0102). */
export interface Ticket {
  /** A slot is this ticket's now. */
  readonly held: boolean;
  /** Resolves true once a slot is the ticket's, false when the slots were closed first (never rejects). */
  readonly granted: Promise<boolean>;
  /** Give the place up: a held slot goes to the next ticket, a queued place leaves the queue. Again is harmless. */
  drop(): void;
}

/** Counting semaphore with FIFO hand-off: the run's concurrency slots for `agent()` calls. */
export class Slots {
  private free: number;
  private readonly waiting: Array<(ok: boolean) => void> = [];

  constructor(size: number) {
    this.free = size;
  }

  /** A place in the queue now: held at once when a slot is free, else granted in the order tickets were taken. */
  ticket(): Ticket {
    let held = false;
    let dropped = false;
    let grant: ((ok: boolean) => void) | undefined;
    let granted: Promise<boolean>;
    if (this.free > 0) {
      this.free--;
      held = true;
      granted = Promise.resolve(true);
    } else {
      granted = new Promise<boolean>((resolve) => {
        grant = (ok) => {
          grant = undefined;
          held = ok;
          resolve(ok);
        };
        this.waiting.push(grant);
      });
    }
    return {
      get held() {
        return held;
      },
      granted,
      drop: () => {
        if (dropped) return;
        dropped = true;
        if (held) {
          held = false;
          this.release();
          return;
        }
        const at = grant ? this.waiting.indexOf(grant) : -1;
        if (at >= 0) {
          this.waiting.splice(at, 1);
          grant?.(false);
        }
      },
    };
  }

  release(): void {
    const next = this.waiting.shift();
    if (next) next(true);
    else this.free++;
  }

  /** Every waiter gets false (the run ended): nothing starts after this. */
  close(): void {
    for (const w of this.waiting.splice(0)) w(false);
    this.free = 0;
  }
}
