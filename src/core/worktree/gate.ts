import type { WorktreeEvent } from '../session/events';

// One hold per worktree (decision 0126, amended in s60). Applying, discarding or keeping a
// worktree is many awaits of git (commit, merge, record, remove); a turn of a session working in
// it that started in between wrote into a folder already committed, and lost it when the folder
// went. So the change and a turn's start both go through here: the change holds its worktree
// from before its check that nothing works there until it ended, and a turn of a session working
// there does not open while it is held — it waits (bounded; a Stop ends the wait at once), and
// does not open at all once the worktree is closed.

/** What a session's summary keeps of the worktree it works in. */
export type WorktreeMark = Pick<WorktreeEvent, 'state' | 'branch' | 'owner'>;

/** How long a turn or a message waits for a change of its worktree before it is kept instead (a change's gits are bounded at 120 s each). */
export const CHANGE_WAIT_MS = 10 * 60_000;

/** How a wait for a change ended: it settled, a Stop ended the wait, or the bound did. */
export type Waited = 'settled' | 'stopped' | 'timeout';

export interface GateDeps {
  /** A session's worktree mark as its summary keeps it, without reading its log (undefined: none, or not known now). */
  markOf(id: string): WorktreeMark | undefined;
  /** The session exists (an owner deleted took its worktree with it). */
  has(id: string): boolean;
}

/** The owner of the worktree a session with mark `m` works in: itself for a worktree child, else the one it inherits from. */
export function ownerOf(id: string, m: WorktreeMark | undefined): string | undefined {
  if (!m) return undefined;
  return m.owner ?? (m.state === 'inherited' ? undefined : id);
}

/** The one owner of the worktree holds (decision 0126, amended in s60): `WorktreeService`'s changes and every agent's turn start go through it. */
export class WorktreeGate {
  /** Per owner, the change of its worktree under way (settles, never rejects, when it ended). */
  private readonly changes = new Map<string, Promise<void>>();

  constructor(
    private readonly deps: GateDeps,
    private readonly waitMs = CHANGE_WAIT_MS,
  ) {}

  /**
   * Runs `fn`, a change of `owner`'s worktree, holding it: the hold is taken in this call's own
   * tick (before any await), so `fn`'s check that no session works there (a running one is
   * refused) and the turns that start after it cannot cross — a turn opening meanwhile waits for
   * the change to end. Changes of one worktree run one after another.
   */
  async change<T>(owner: string, fn: () => Promise<T>): Promise<T> {
    const before = this.changes.get(owner);
    const run = before ? before.then(fn) : fn();
    const ended = run.then(
      () => undefined,
      () => undefined,
    );
    this.changes.set(owner, ended);
    try {
      return await run;
    } finally {
      if (this.changes.get(owner) === ended) this.changes.delete(owner);
    }
  }

  /** A change of `owner`'s worktree is under way. */
  held(owner: string): boolean {
    return this.changes.has(owner);
  }

  /**
   * Undefined when no change of `owner`'s worktree is under way (the caller goes on with no
   * await); else resolves once none is (`settled`), when `signal` aborts (`stopped`), or after
   * the bound (`timeout`). Never rejects.
   */
  waitFor(owner: string | undefined, signal?: AbortSignal): Promise<Waited> | undefined {
    if (owner === undefined || !this.changes.has(owner)) return undefined;
    if (signal?.aborted) return Promise.resolve('stopped');
    return new Promise<Waited>((resolve) => {
      const done = (w: Waited) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', stop);
        resolve(w);
      };
      const stop = () => done('stopped');
      const timer = setTimeout(() => done('timeout'), this.waitMs);
      signal?.addEventListener('abort', stop, { once: true });
      const next = (): void => {
        const c = this.changes.get(owner);
        if (!c) return done('settled');
        // A change that ends may be followed by another of the same worktree: wait for that one too.
        void c.then(() => setImmediate(next));
      };
      next();
    });
  }

  /** The worktree `owner` owns is closed (applied, discarded, kept, or gone with its deleted owner), as the summaries know now. */
  closed(owner: string, ownMark?: WorktreeMark): boolean {
    if (!this.deps.has(owner)) return true;
    const state = (ownMark && !ownMark.owner ? ownMark : this.deps.markOf(owner))?.state;
    return state === 'applied' || state === 'discarded' || state === 'kept';
  }

  /**
   * The agent's `beforeTurnOpen` for session `id` (`agent/config.ts`): undefined — no await —
   * when it works in no worktree, or in one open and not being changed; else whether its turn
   * may open once the change under way ended: not when the worktree was closed (the message is
   * kept queued and the agent paused; never run in a missing folder), nor when the wait was
   * stopped or timed out (kept the same way).
   */
  turnMayOpen(id: string, signal: AbortSignal): Promise<boolean> | undefined {
    const mark = this.deps.markOf(id);
    const owner = ownerOf(id, mark);
    if (owner === undefined) return undefined;
    const waiting = this.waitFor(owner, signal);
    if (!waiting) return this.closed(owner, owner === id ? mark : undefined) ? Promise.resolve(false) : undefined;
    return waiting.then((w) => w === 'settled' && !this.closed(owner, owner === id ? this.deps.markOf(id) : undefined));
  }
}
