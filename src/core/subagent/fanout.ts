import type { Admission } from '../agent/config';

/** The default bound on children running at once, harness-wide. */
export const DEFAULT_MAX_CONCURRENT_CHILDREN = 8;

interface Holder {
  /** Holds a slot now (false while lent to its own children). */
  slot: boolean;
}

interface Waiter {
  id: string;
  /** A turn that already ran and lent its slot: it goes ahead of children that never started. */
  resuming: boolean;
  grant: () => void;
}

/**
 * The harness-wide bound on children running at once (issue 10.9, decision 0024). A child's
 * turn takes a slot before its first model request and keeps it until the turn ends; the
 * others wait in FIFO order with their turn open and no request made ("queued"). A child
 * that waits on its own children (a `wait` delegation) lends its slot to them — otherwise a
 * full set of waiting parents would deadlock — and takes one again, ahead of the queue,
 * before its next request. Root conversations take no slot.
 */
export class FanoutLimiter {
  private max: number;
  private active = 0;
  private readonly holders = new Map<string, Holder>();
  private readonly waiters: Waiter[] = [];
  /** How many waiters each id has in `waiters` (`isQueued` without a scan: every status question asks it). */
  private readonly queuedCount = new Map<string, number>();
  /**
   * @param changed told when a child starts or stops waiting for a slot (the harness's change
   *   stream, decision 0054); must not throw.
   */
  constructor(
    limit: number = DEFAULT_MAX_CONCURRENT_CHILDREN,
    private readonly changed: (id: string) => void = () => undefined,
  ) {
    this.max = checkLimit(limit);
  }

  get limit(): number {
    return this.max;
  }
  /** A changed setting: a higher limit admits queued children at once; a lower one lets running ones finish. */
  set limit(n: number) {
    this.max = checkLimit(n);
    this.pump();
  }

  /** Children holding a slot now. */
  get running(): number {
    return this.active;
  }

  /** Children waiting for a slot, in the order they will get one. */
  queued(): string[] {
    return this.waiters.map((w) => w.id);
  }

  isQueued(id: string): boolean {
    return this.queuedCount.has(id);
  }

  /** The admission of one child session. */
  admission(id: string): Admission {
    return { enter: (signal) => this.enter(id, signal), leave: () => this.leave(id) };
  }

  enter(id: string, signal: AbortSignal): Promise<void> {
    const held = this.holders.get(id);
    if (held?.slot || signal.aborted) return Promise.resolve();
    if (this.active < this.max) {
      this.take(id, held);
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      const onAbort = () => {
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.dequeued(this.waiters.splice(i, 1)[0].id);
        this.emit(id);
        resolve(); // no slot: the turn sees its aborted signal and ends before any request
      };
      const waiter: Waiter = {
        id,
        resuming: held !== undefined,
        grant: () => {
          signal.removeEventListener('abort', onAbort);
          this.take(id, this.holders.get(id));
          resolve();
        },
      };
      // FIFO, except that turns which already ran (and lent their slot) go before new ones.
      const at = waiter.resuming ? this.waiters.findIndex((w) => !w.resuming) : -1;
      if (at < 0) this.waiters.push(waiter);
      else this.waiters.splice(at, 0, waiter);
      this.queuedCount.set(id, (this.queuedCount.get(id) ?? 0) + 1);
      signal.addEventListener('abort', onAbort, { once: true });
      this.emit(id);
    });
  }

  leave(id: string): void {
    const h = this.holders.get(id);
    this.holders.delete(id);
    if (h?.slot) {
      this.active--;
      this.pump();
    }
  }

  /**
   * While `waiting` runs, the child `id` waits on its own children: its slot serves them.
   * It takes a slot again at its next `enter` (before its next request), ahead of the queue.
   */
  lend<T>(id: string, waiting: Promise<T>): Promise<T> {
    const h = this.holders.get(id);
    // A root, or a child between turns, holds nothing to lend; parallel waits lend it once.
    if (h?.slot) {
      h.slot = false;
      this.active--;
      this.pump();
    }
    return waiting;
  }

  private take(id: string, held: Holder | undefined): void {
    this.active++;
    if (held) held.slot = true;
    else this.holders.set(id, { slot: true });
    this.emit(id);
  }

  private pump(): void {
    while (this.active < this.max && this.waiters.length > 0) {
      const w = this.waiters.shift()!;
      this.dequeued(w.id);
      w.grant();
    }
  }

  private dequeued(id: string): void {
    const n = (this.queuedCount.get(id) ?? 1) - 1;
    if (n > 0) this.queuedCount.set(id, n);
    else this.queuedCount.delete(id);
  }

  private emit(id: string): void {
    this.changed(id);
  }
}

function checkLimit(n: number): number {
  if (!Number.isSafeInteger(n) || n < 1) throw new RangeError(`The limit on children running at once must be a whole number of at least 1 (got ${n}).`);
  return n;
}
