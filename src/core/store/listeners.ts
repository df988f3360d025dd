import type { SessionEvent } from '../session/events';

// Who hears of the store's writes: `onStaged` as each writer stages an event, `onAppended`
// once a session's events are durable. A listener's throw is its own: the write goes on.

type Staged = (id: string, event: SessionEvent) => void;
type Appended = (id: string, events: readonly SessionEvent[]) => void;

export class StoreListeners {
  private readonly stagedFns = new Set<Staged>();
  private readonly appendedFns = new Set<Appended>();

  onStaged(fn: Staged): () => void {
    this.stagedFns.add(fn);
    return () => this.stagedFns.delete(fn);
  }

  onAppended(fn: Appended): () => void {
    this.appendedFns.add(fn);
    return () => this.appendedFns.delete(fn);
  }

  staged(id: string, event: SessionEvent): void {
    for (const fn of this.stagedFns) call(() => fn(id, event));
  }

  appended(id: string, events: readonly SessionEvent[]): void {
    for (const fn of this.appendedFns) call(() => fn(id, events));
  }
}

function call(fn: () => void): void {
  try {
    fn();
  } catch {
    // a view's or a reader's failure is its own; the write is under way or already durable
  }
}
