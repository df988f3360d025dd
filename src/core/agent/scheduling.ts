import type { MessageSource } from '../session/events';

/** Message sources that never wake an interrupted (paused) agent. */
const RUNTIME_NOTICES: ReadonlySet<MessageSource['kind']> = new Set(['subagent-settled', 'subagent-result', 'subagent-report']);

/** Whether a message of this source wakes a conversation a Stop paused (the human, a parent's follow-up, a goal round), or waits with the rest (a child's notice). */
export function wakesPaused(source: MessageSource): boolean {
  return !RUNTIME_NOTICES.has(source.kind);
}

/**
 * A first request that must fold and serialize more history than this (events not in the
 * agent's last request: a cold resume's, a reopened log's) answers its sender first. Folding
 * and serializing cost ~10–15 µs an event and the fdatasync the wait adds ~1–3 ms, so below a
 * few hundred events the wait would cost the turn more than it saves the sender (decision 0075).
 */
export const ANSWER_FIRST_BACKLOG = 256;

/** What the scheduler drives: the agent's inbox, its turn loop and its idle listeners. */
export interface SchedulerHost {
  /** Messages accepted and not yet claimed. */
  inboxSize(): number;
  /** The agent takes no more work. */
  disposed(): boolean;
  /** Works through the inbox until it is empty or paused; the scheduler starts one at a time. */
  loop(): Promise<void>;
  /** Nothing runs and nothing restarted it. */
  becameIdle(): void;
}

/**
 * When an agent's turns start (decision 0075, which unifies 0063's early start and 0064's
 * next-tick start into one rule):
 *
 * **A turn is scheduled when its message is staged, opens on the next tick behind it, and
 * answers the sender before any work not bounded by the turn itself.**
 *
 * - Scheduled when staged: the log took the message, so the agent reads `running` at once
 *   (`idle()` waits for it, nothing reads it as settled).
 * - Opens on the next tick (`setImmediate`): the turn's first facts (claim, start, message,
 *   its first request header) are staged behind the accept and share its group commit — a
 *   plain turn is two fdatasyncs (0063). A cancel in between opens it at once (`startNow`),
 *   so the turn it interrupts is in the log; a pause or dispose in between opens nothing.
 * - The turn acts only on durable facts (the request waits for what it staged; every accept
 *   is in the same file's queue before them).
 * - Answers the sender first (`answered()`: every accept in flight durable, then one tick, so
 *   the caller's continuation has run) before work whose cost is not the turn's own: a first
 *   request over a backlog of history (`ANSWER_FIRST_BACKLOG`: a cold resume's whole log folded
 *   and serialized, 0064). That turn's header then takes the next commit.
 * - Every message, a goal round included, is judged by the admit hook when its turn opens
 *   (decision 0083): a round's verdict reads only what the log has staged, so it needs no wait,
 *   and the round's goal/change and accept share its turn's first commit.
 */
export class TurnScheduler {
  /** The loop, from the moment a turn is scheduled until nothing runs. */
  running: Promise<void> | null = null;
  /** After an interrupt, queued messages wait for a waking message instead of running on. */
  paused = false;
  /** Opens a turn `pump` scheduled for the next tick now (a cancel came first). */
  private startNow: (() => void) | undefined;
  /** Accepted messages already in the log but not yet durable (`idle` waits for them too). */
  private readonly accepting = new Set<Promise<unknown>>();
  /** The log's length when this agent last built a request (0: it has built none). */
  private builtThrough = 0;

  constructor(private readonly host: SchedulerHost) {}

  /**
   * An accept: `staged` says whether the log took the message (it is in the unclaimed inbox);
   * resolves when `appended` is durable. The message's turn is scheduled at once.
   */
  async accepted(appended: Promise<unknown>, staged: boolean, source: MessageSource): Promise<void> {
    if (staged) {
      // After an interrupt, only someone deciding (the human, a parent's follow-up) wakes the
      // agent; a runtime notice waits in the inbox with the rest, so nothing resurrects on its own.
      if (wakesPaused(source)) this.paused = false;
      this.pump();
    }
    this.accepting.add(appended);
    try {
      await appended;
    } finally {
      this.accepting.delete(appended);
    }
  }

  /** Schedule the loop if idle and there is work (e.g. after a cold resume found queued messages). */
  pump(): void {
    const host = this.host;
    if (this.running || host.disposed() || this.paused || host.inboxSize() === 0) return;
    let begun!: () => void;
    const started = new Promise<void>((resolve) => (begun = resolve));
    let loop: Promise<void> | undefined;
    const start = (): void => {
      if (loop) return;
      this.startNow = undefined;
      loop = this.paused || host.disposed() ? Promise.resolve() : host.loop();
      begun();
    };
    this.startNow = start;
    setImmediate(start);
    this.running = started
      .then(() => loop)
      .finally(() => {
        this.running = null;
        this.pump(); // a message accepted while the last turn was ending
        if (!this.running) host.becameIdle();
      });
  }

  /** A cancel: a turn scheduled but not yet open opens now, so it is the one interrupted. */
  openScheduled(): void {
    this.startNow?.();
  }

  /** Every accept in flight is durable and its caller's continuation has run (one tick later). */
  async answered(): Promise<void> {
    if (this.accepting.size === 0) return;
    await Promise.allSettled([...this.accepting]);
    await new Promise<void>((resolve) => setImmediate(resolve));
  }

  /**
   * Before a step builds its request from a log of `length` events: a first request over a
   * backlog answers the sender first (see the class comment).
   */
  beforeBuild(length: number): Promise<void> | undefined {
    const backlog = length - this.builtThrough;
    this.builtThrough = length;
    return backlog > ANSWER_FIRST_BACKLOG ? this.answered() : undefined;
  }

  /** Resolves when no turn runs (and none will start without a new message). */
  async idle(): Promise<void> {
    // An accept still on its way to disk is a turn about to start: wait for it too, or a
    // caller (settle) sees "not settled" yet nothing to wait for, and spins.
    while (this.running || this.accepting.size > 0) {
      if (this.running) await this.running;
      else await Promise.allSettled([...this.accepting]);
    }
  }
}
