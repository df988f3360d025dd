import { setMaxListeners } from 'node:events';
import { describeError } from '../errors';
import type { InboxAcceptedEvent, MessageSource } from '../session/events';
import { compactIfNeeded } from './compaction';
import type { Compactions } from './compactions';
import type { AgentConfig, TurnOutcome } from './config';
import type { TurnScheduler } from './scheduling';
import { aborted, type InterruptReason, runTurn } from './turn';

// An agent's loop (agent.ts owns the session, its inbox and listeners): it works through the
// inbox one turn at a time — the automatic compaction before a turn, the admit hook's judgement
// as it opens, the turn with its safe points — and holds what a Stop ends while it runs.

export interface TurnReport extends TurnOutcome {
  messageId: string;
}

/** What the loop needs of its agent. */
export interface TurnLoopHost {
  cfg: AgentConfig;
  /** When turns start (scheduling.ts): the loop reads `running`, sets `paused` and waits in `beforeBuild`. */
  turnsAt: Pick<TurnScheduler, 'running' | 'paused' | 'beforeBuild'>;
  /** The agent's compactions under way: the automatic one runs here; a Stop ends them all. */
  compactions: Compactions;
  disposed(): boolean;
  /** The config a turn runs with (approvals counted, progress fanned out). */
  turnConfig(): AgentConfig;
  /** A turn ended: its report, for the agent's listeners. */
  turnEnded(r: TurnReport): void;
}

/** One agent's turn loop: at most one turn at a time, in inbox order. */
export class TurnLoop {
  /** The loop has started (set synchronously, before the scheduler's `running` is assigned). */
  private looping = false;
  private controller: AbortController | null = null;
  /** A cancel that came while the loop was starting a turn (no controller yet): applied as soon as there is one. */
  private cancelPending: 'cancelled' | InterruptReason | 'interrupted' | undefined;
  /** The admit hook's judgement under way (an async answer): a cancel aborts it (decision 0099). */
  private judging: AbortController | null = null;
  /** Quiet messages waiting for the running turn's next safe point. */
  private injections: { text: string; source: MessageSource }[] = [];
  private lastOutcome: TurnReport | undefined;

  constructor(private readonly host: TurnLoopHost) {}

  /** The loop runs (a turn runs or is starting). */
  get running(): boolean {
    return this.looping;
  }

  get lastTurn(): TurnReport | undefined {
    return this.lastOutcome;
  }

  /**
   * Add a message to the history without starting a turn (a quiet report): now when idle,
   * else at the running turn's next safe point (before its next model request, or when it ends).
   */
  async inject(text: string, source: MessageSource): Promise<void> {
    if (!this.host.turnsAt.running) {
      await this.host.cfg.writer.append({ type: 'user/message', text, source });
      return;
    }
    this.injections.push({ text, source });
  }

  private async drainInjections(): Promise<void> {
    while (this.injections.length > 0) {
      const m = this.injections.shift()!;
      await this.host.cfg.writer.append({ type: 'user/message', text: m.text, source: m.source });
    }
  }

  /** A Stop (`Agent.cancel`): ends the compaction asked for, and the running turn, the automatic compaction or the judgement. */
  stop(reason: 'cancelled' | InterruptReason | 'interrupted'): void {
    const { compactions } = this.host;
    compactions.abortAsked(reason); // a compaction asked for ends too
    if (this.controller) this.controller.abort(reason);
    else if (compactions.autoRunning) compactions.abortAuto(reason);
    else if (this.judging) this.judging.abort(reason);
    // Only a loop that runs takes a pending cancel: a scheduled turn that a pause kept from
    // opening (a Stop in the message's own tick) has none, and a cancel left pending would end
    // the next turn — the kept message's, on "Send now" — at once, unheard.
    else if (this.looping) this.cancelPending = reason;
  }

  /** The agent is disposed: everything under way ends as `cancelled`. */
  abortAll(): void {
    this.controller?.abort('cancelled');
    this.host.compactions.abortAuto('cancelled');
    this.host.compactions.abortAsked('cancelled');
    this.judging?.abort('cancelled');
  }

  /** Works through the inbox until it is empty or paused (the scheduler starts one loop at a time). */
  async run(): Promise<void> {
    // A turn's first events are emitted synchronously, before `running` is assigned: their
    // listeners (the tree, the fan-out queue) must already see the agent running.
    this.looping = true;
    try {
      await this.turns();
    } finally {
      this.looping = false;
      // A cancel that came as the loop ended (its last turn over, a pause returning it) has no turn left to end.
      this.cancelPending = undefined;
    }
  }

  private async turns(): Promise<void> {
    const { cfg, turnsAt } = this.host;
    const session = cfg.writer.session;
    while (!this.host.disposed()) {
      let next = this.nextMessage();
      if (!next) return;
      // Held while the folder it works in is being changed (decision 0126, amended in s60): not opened, or kept.
      const held = this.held();
      if (held) {
        if (!(await this.waitOpen(held))) {
          this.cancelPending = undefined;
          turnsAt.paused = true;
          return;
        }
        continue; // the queue's head may have changed meanwhile (withdrawn, claimed): take it again
      }
      // A cancel already pending opens the turn it interrupts at once: no compaction before it.
      if (cfg.compaction && !this.cancelPending) {
        // A Stop while the compaction runs ends its request (and its PreCompact hook): nothing
        // streams into the log after it, and the message stays queued, paused, unclaimed.
        const compaction = cfg.compaction;
        if (await this.host.compactions.runAuto((signal) => compactIfNeeded(cfg, compaction, signal))) {
          this.cancelPending = undefined;
          turnsAt.paused = true;
          return;
        }
        // The message may have been withdrawn while compaction ran: take the queue's head again.
        next = this.nextMessage();
        if (!next) return;
      }
      if (cfg.admit) {
        // Judged as the turn opens, a goal round too (decision 0083): a synchronous answer adds no
        // await, so the turn claims its message at once and its first facts join the accept's commit.
        const judging = new AbortController();
        const verdict = this.admitted(next, judging.signal);
        let admitted: boolean;
        if (typeof verdict === 'boolean') admitted = verdict;
        else {
          // A Stop while a hook judges (a slow UserPromptSubmit) is not held by it (decision 0099):
          // the answer is not awaited, the message stays queued unjudged, and nothing runs.
          this.judging = judging;
          const answer = await Promise.race([verdict, aborted(judging.signal)]);
          this.judging = null;
          if (answer === undefined) {
            this.cancelPending = undefined;
            turnsAt.paused = true;
            return;
          }
          admitted = answer;
        }
        // Withdrawn or claimed (a cancel without keepInbox) while an async answer was awaited: take the head again.
        if (session.unclaimedInbox[0] !== next.messageId) continue;
        if (!admitted) {
          // Refused just before it ran (a stale goal round): claimed, no turn.
          await cfg.writer.append({ type: 'inbox/claimed', messageId: next.messageId });
          continue;
        }
      }
      this.controller = new AbortController();
      if (this.cancelPending) {
        this.controller.abort(this.cancelPending);
        this.cancelPending = undefined;
      }
      const signal = this.controller.signal;
      // Every tool call of a step may listen (300 `subagent` calls in one message): not a leak.
      setMaxListeners(0, signal);
      // A safe point before each request: a child first waits for its slot (the fan-out limit),
      // then for tools still starting (MCP servers after an open), then quiet messages (reports) join the history.
      const beforeStep = async () => {
        await cfg.admission?.enter(signal);
        const starting = cfg.toolsReady?.(signal);
        if (starting) await starting.catch(() => undefined);
        await this.drainInjections();
        await turnsAt.beforeBuild(session.length); // a backlog's build answers the sender first
      };
      let outcome: TurnOutcome;
      try {
        outcome = await (cfg.runTurn ?? runTurn)(
          this.host.turnConfig(),
          { messageId: next.messageId, text: next.text, source: next.source },
          signal,
          beforeStep,
        );
      } catch (err) {
        // Only claiming or opening the turn can throw here (the store): runTurn closes a turn it opened.
        outcome = { stopReason: 'error', error: describeError(err) };
      } finally {
        cfg.admission?.leave();
      }
      this.controller = null;
      await this.drainInjections().catch(() => undefined);
      this.lastOutcome = { ...outcome, messageId: next.messageId };
      if (outcome.stopReason === 'interrupted' || outcome.stopReason === 'cancelled') turnsAt.paused = true;
      this.host.turnEnded(this.lastOutcome);
      if (turnsAt.paused) return;
    }
  }

  /** The `beforeTurnOpen` hook's hold, if any; a throw counts as a refusal (fail closed). */
  private held(): { answer: Promise<boolean>; judging: AbortController } | undefined {
    const hook = this.host.cfg.beforeTurnOpen;
    if (!hook) return undefined;
    const judging = new AbortController();
    try {
      const r = hook(judging.signal);
      return r === undefined
        ? undefined
        : {
            answer: Promise.resolve(r).then(
              (v) => v === true,
              () => false,
            ),
            judging,
          };
    } catch {
      return { answer: Promise.resolve(false), judging };
    }
  }

  /** Waits for a hold to let the turn open; a Stop meanwhile (it aborts `judging`) ends the wait at once: not opened. */
  private async waitOpen(held: { answer: Promise<boolean>; judging: AbortController }): Promise<boolean> {
    this.judging = held.judging;
    const open = await Promise.race([held.answer, aborted(held.judging.signal)]);
    this.judging = null;
    return open === true && !held.judging.signal.aborted;
  }

  /** The admit hook's answer; a throw or a rejection counts as a refusal (fail closed). */
  private admitted(msg: InboxAcceptedEvent, signal: AbortSignal): boolean | Promise<boolean> {
    try {
      const r = this.host.cfg.admit!(msg, signal);
      return typeof r === 'boolean'
        ? r
        : Promise.resolve(r).then(
            (v) => v === true,
            () => false,
          );
    } catch {
      return false;
    }
  }

  private nextMessage(): InboxAcceptedEvent | undefined {
    const session = this.host.cfg.writer.session;
    const id = session.unclaimedInbox[0];
    if (!id) return undefined;
    for (let i = session.length - 1; i >= 0; i--) {
      const e = session.events[i];
      if (e.type === 'inbox/accepted' && e.messageId === id) return e;
    }
    return undefined;
  }
}
