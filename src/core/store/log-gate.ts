// Who may write a session's log now, when no resident agent holds it (decision 0129). A resident
// agent is its log's one writer; a log no agent holds has many would-be writers — a message to a
// released child, a rewind's record, a policy switch, a worktree's state, the cold resume that
// makes it resident again — each reading the stored length and appending at it. They take turns
// here, one per session at a time, so none reads a length another is about to change. Becoming
// resident (a cold resume, a root opened) and leaving it (an agent's last writes flushed) hold
// the gate too: a writer that waited finds either the agent or a log no one else is writing.

const ignore = (): undefined => undefined;

/** One writer at a time per session log that no resident agent holds. The store keeps the one instance. */
export class LogGate {
  private readonly held = new Map<string, Promise<unknown>>();

  /** What holds `id`'s log now (a write, a cold resume, a release flushing), if anything. */
  pending(id: string): Promise<unknown> | undefined {
    return this.held.get(id);
  }

  /**
   * `p`, already under way, holds `id`'s log until it settles (with whatever held it before):
   * whoever asks after waits for both. Returned as is — not wrapped — so a caller awaiting it runs
   * on before one that waits on `pending(id)` (FIFO across the two, inbound.ts).
   */
  hold<T>(id: string, p: Promise<T>): Promise<T> {
    const before = this.held.get(id);
    const entry: Promise<unknown> = before ? Promise.allSettled([before, p]) : p;
    this.held.set(id, entry);
    void entry.catch(ignore).finally(() => {
      if (this.held.get(id) === entry) this.held.delete(id);
    });
    return p;
  }

  /**
   * `fn` once nothing holds `id`'s log, holding it until `fn`'s promise settles. `fn` decides,
   * inside, who writes: the agent if the session became resident meanwhile, else the stored log.
   */
  async run<T>(id: string, fn: () => Promise<T>): Promise<T> {
    for (let p = this.held.get(id); p; p = this.held.get(id)) await p.catch(ignore);
    return this.hold(id, fn());
  }

  /** Wait until no log is held (the host is closing). */
  async drain(): Promise<void> {
    while (this.held.size > 0) await Promise.allSettled([...this.held.values()]);
  }
}
