/**
 * The compactions of one agent under way, each a model request of its own that a Stop ends
 * (decision 0099, amended): the automatic one before a turn, and those a user asked for.
 */
export class Compactions {
  private auto: AbortController | null = null;
  private readonly asked = new Set<AbortController>();

  /** A compaction the user asked for is under way (not a turn: the Stop counts it as running). */
  get askedRunning(): boolean {
    return this.asked.size > 0;
  }

  /** The automatic compaction is under way. */
  get autoRunning(): boolean {
    return this.auto !== null;
  }

  /** Runs the automatic compaction under a signal `abortAuto` or `abortAll` ends; true when it was stopped. */
  async runAuto(fn: (signal: AbortSignal) => Promise<unknown>): Promise<boolean> {
    const c = new AbortController();
    this.auto = c;
    try {
      await fn(c.signal);
    } finally {
      this.auto = null;
    }
    return c.signal.aborted;
  }

  /** Runs a compaction the user asked for, under way from this call on (before any wait it makes). */
  async runAsked<T>(fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const c = new AbortController();
    this.asked.add(c);
    try {
      return await fn(c.signal);
    } finally {
      this.asked.delete(c);
    }
  }

  /** Ends every compaction the user asked for. */
  abortAsked(reason: unknown): void {
    for (const c of this.asked) c.abort(reason);
  }

  /** Ends the automatic compaction, if one runs. */
  abortAuto(reason: unknown): void {
    this.auto?.abort(reason);
  }
}
