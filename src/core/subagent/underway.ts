import type { MessageSource } from '../session/events';

// Follow-ups, "Send now" wakes and runtime messages on their way to a child (decision 0100).
// Each is registered before its first await; a Stop of the child's subtree (`halt`) marks the
// ones under way, so whatever lands — a cold resume, the message — lands paused.

/** One piece of work on its way to a child. `signal`: the sending turn's; once aborted, nothing is sent. */
export interface Work {
  halted: boolean;
  signal?: AbortSignal;
  /** Aborted when a Stop halts it: a wait on its way (a worktree being applied, decision 0126 amended in s60) ends at once. */
  readonly stopped: AbortSignal;
}

export class Underway {
  private readonly byChild = new Map<string, Set<Work>>();
  /** Each work's own Stop (its `stopped`). */
  private readonly stops = new WeakMap<Work, AbortController>();

  /**
   * Runs `fn` as work under way to `childId` from this call on (before any await), or from the
   * start of `within` (the caller's work under way to the same child, still registered): a Stop
   * that halted it already halts this.
   */
  async run<T>(childId: string, signal: AbortSignal | undefined, fn: (work: Work) => Promise<T>, within?: Work): Promise<T> {
    const stop = new AbortController();
    if (within?.halted) stop.abort();
    const work: Work = { halted: within?.halted ?? false, ...(signal ? { signal } : {}), stopped: stop.signal };
    this.stops.set(work, stop);
    const set = this.byChild.get(childId) ?? new Set<Work>();
    set.add(work);
    this.byChild.set(childId, set);
    try {
      return await fn(work);
    } finally {
      set.delete(work);
      if (set.size === 0 && this.byChild.get(childId) === set) this.byChild.delete(childId);
    }
  }

  /** A Stop of these sessions: the work under way to them lands paused. */
  halt(ids: readonly string[]): void {
    for (const id of ids)
      for (const w of this.byChild.get(id) ?? []) {
        w.halted = true;
        this.stops.get(w)?.abort();
      }
  }
}

/**
 * Accept a message as work under way: when a Stop halted it meanwhile, the agent is paused in
 * the accept's own tick, before the turn it scheduled opens (the next tick, decision 0075), so
 * the message is kept queued and starts nothing.
 */
export async function acceptUnder(
  agent: { accept(text: string, source: MessageSource): Promise<string>; pause(): void },
  text: string,
  source: MessageSource,
  work: Pick<Work, 'halted'>,
): Promise<string> {
  const accepted = agent.accept(text, source);
  if (work.halted) agent.pause();
  const messageId = await accepted;
  if (work.halted) agent.pause();
  return messageId;
}
