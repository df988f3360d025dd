import { StoreError } from './errors';

/**
 * The operations under way on one store (decision 0098). `close()` refuses new ones at once and
 * waits for these to settle before it closes a single file or releases the lock: a write that
 * resumed after the lock was gone could reopen a tree file with nobody holding the folder, and
 * race another process's writes there. An operation re-checks `assertOpen()` after each await
 * before its first durable write, so one that had not written when the close began is refused
 * whole (CLOSED); one that had written finishes (its commit point still under the lock).
 */
export class Operations {
  private readonly running = new Set<Promise<unknown>>();
  private closing = false;

  constructor(private readonly dir: string) {}

  get closed(): boolean {
    return this.closing;
  }

  /** Run `op` as an operation of this store; refused when the store is closed or closing. */
  run<T>(op: () => Promise<T>): Promise<T> {
    if (this.closing) return Promise.reject(this.refusal());
    const p = op();
    this.running.add(p);
    const done = () => this.running.delete(p);
    p.then(done, done);
    return p;
  }

  /** CLOSED if the store's close has begun: call after every await that precedes an operation's first write. */
  assertOpen(): void {
    if (this.closing) throw this.refusal();
  }

  /** No operation starts from now on; resolves once every one under way has settled. */
  async close(): Promise<void> {
    this.closing = true;
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  private refusal(): StoreError {
    return new StoreError(
      'CLOSED',
      `The store at ${this.dir} is closed (or closing); this call was refused and nothing of it was written. Open the store again (reload the window or rerun the command) to retry.`,
    );
  }
}
