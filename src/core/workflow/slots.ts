/** Counting semaphore with FIFO hand-off: the run's concurrency slots for `agent()` calls. */
export class Slots {
  private free: number;
  private readonly waiting: Array<(ok: boolean) => void> = [];

  constructor(size: number) {
    this.free = size;
  }

  /** Resolves true with a slot, or false when the slots were closed while waiting. */
  acquire(): Promise<boolean> {
    if (this.free > 0) {
      this.free--;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => this.waiting.push(resolve));
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
