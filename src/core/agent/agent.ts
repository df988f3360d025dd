import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { describeError } from '../errors';
import type { EventDraft, InboxAcceptedEvent, MessageSource, SessionEvent } from '../session/events';
import { type QueuedMessage, queuedMessages } from '../session/folds';
import { type CompactionResult, compact, compactIfNeeded } from './compaction';
import { Compactions } from './compactions';
import type { AgentConfig, ToolProgress, TurnOutcome } from './config';
import { CountedApprovals } from './counted-approvals';
import { TurnScheduler } from './scheduling';
import type { SessionLog } from './session-writer';
import { aborted, InterruptReason, runTurn } from './turn';
import { withdrawQueued } from './withdraw';

/** Whether an agent's loop is working (a turn runs or is starting); a session's status is `SessionStatus` (session/status.ts). */
export type AgentActivity = 'idle' | 'running';

/** Why a turn a crash left open ends `interrupted` (turn/end.error). */
export const CRASHED_DURING_TURN = 'The process ended during this turn.';

export interface TurnReport extends TurnOutcome {
  messageId: string;
}

/**
 * One session, one FIFO inbox, at most one running turn (DESIGN §4). Messages are accepted
 * durably and claimed in order; `cancel` ends the running turn and keeps (or drops) the rest.
 */
export class Agent implements SessionLog {
  /** The loop has started (set synchronously, before the scheduler's `running` is assigned). */
  private looping = false;
  private controller: AbortController | null = null;
  /** A cancel that came while the loop was starting a turn (no controller yet): applied as soon as there is one. */
  private cancelPending: 'cancelled' | InterruptReason | 'interrupted' | undefined;
  /** The admit hook's judgement under way (an async answer): a cancel aborts it (decision 0099). */
  private judging: AbortController | null = null;
  /** Compactions under way (the automatic one, those asked for): a cancel ends them. */
  private readonly compactions = new Compactions();
  private disposed = false;
  /** When turns start: the one rule of decision 0075 (scheduling.ts). */
  private readonly turnsAt = new TurnScheduler({
    inboxSize: () => this.inboxSize,
    disposed: () => this.disposed,
    loop: () => this.loop(),
    becameIdle: () => this.toldIdle(),
  });
  /** Quiet messages waiting for the running turn's next safe point. */
  private injections: { text: string; source: MessageSource }[] = [];
  private readonly turnListeners = new Set<(r: TurnReport) => void>();
  private readonly idleListeners = new Set<() => void>();
  private readonly progressListeners = new Set<(p: ToolProgress) => void>();
  private lastOutcome: TurnReport | undefined;
  /** The configured approval port, counting the questions under way (`awaitingApproval`). */
  private readonly approvals: CountedApprovals | undefined;

  constructor(private readonly cfg: AgentConfig) {
    this.approvals = cfg.approval ? new CountedApprovals(cfg.approval, () => cfg.onApprovalChange?.()) : undefined;
  }

  get id(): string {
    return this.cfg.writer.id;
  }
  get session() {
    return this.cfg.writer.session;
  }
  /**
   * Append a control event (a policy switch, a withdrawal, a grant, a goal or workflow fact)
   * through this agent's own writer, so it stays in order with its turn's events and its
   * in-memory log stays current. Resolves once the event is durable.
   */
  append(draft: EventDraft): Promise<SessionEvent> {
    return this.cfg.writer.append(draft);
  }
  /** Resolves once every event of this session issued so far is on disk. */
  flush(): Promise<void> {
    return this.cfg.writer.flush();
  }
  get activity(): AgentActivity {
    return this.turnsAt.running || this.looping ? 'running' : 'idle';
  }
  /** Its turn is blocked on a human's answer to an approval (the status fold's `approval`). */
  get awaitingApproval(): boolean {
    return this.approvals?.waiting ?? false;
  }
  /** The names of the tools this agent sees now (a child started from an agent file never gets more, decision 0056). */
  toolNames(): string[] {
    return this.cfg.tools().map((t) => t.name);
  }
  /** The real paths its file tools and confined commands may write (a worktree child's: only its worktree). */
  get roots(): readonly string[] {
    return this.cfg.roots;
  }
  /** The model this agent's next request uses (children inherit it at delegation). */
  get modelName(): string {
    return this.cfg.modelName;
  }
  /** Who serves this agent's model requests (its client's provider; a descriptor's `modelProvider`). */
  get modelProvider(): string {
    return this.cfg.model.provider;
  }
  get lastTurn(): TurnReport | undefined {
    return this.lastOutcome;
  }
  get inboxSize(): number {
    return this.session.unclaimedInbox.length;
  }

  /** Messages accepted and not yet claimed, in the order they will run. */
  get queue(): QueuedMessage[] {
    return queuedMessages(this.session.events, this.session.unclaimedInbox);
  }

  /**
   * The last turn was interrupted: queued messages stay until a waking message or `resume()`.
   * Nothing automatic (a goal round) may start then, or it would replay what the human kept.
   */
  get isPaused(): boolean {
    return this.turnsAt.paused;
  }

  /**
   * True when queued messages wait for a human (the last turn was interrupted with its inbox
   * kept): nothing runs until `resume()` or a new message. False while they are merely queued
   * behind a running turn.
   */
  get isWaiting(): boolean {
    return !this.turnsAt.running && this.turnsAt.paused && this.inboxSize > 0;
  }

  /** Cancel a queued message before it runs (durable); a claimed one refuses with InboxError ALREADY_CLAIMED. */
  withdraw(messageId: string): Promise<void> {
    return withdrawQueued(this.cfg.writer, messageId);
  }

  /**
   * A crash can leave a turn open in the log. Close it as interrupted before anything
   * else, so the log stays whole and the model sees a result for every call.
   */
  async recover(): Promise<void> {
    const open = this.session.openTurnId;
    if (open) await this.cfg.writer.append({ type: 'turn/end', turnId: open, stopReason: 'interrupted', error: CRASHED_DURING_TURN });
    const compaction = this.session.openCompactionId;
    if (compaction) await this.cfg.writer.append({ type: 'compaction/end', compactionId: compaction, outcome: 'aborted' });
  }

  /** Accept a message into the inbox; resolves once `inbox/accepted` is on disk. Starts a turn if idle. */
  async accept(text: string, source: MessageSource = { kind: 'user' }): Promise<string> {
    if (this.disposed) throw new Error(`Agent ${this.id} is disposed; open the session again to send it messages.`);
    const messageId = randomUUID();
    const appended = this.cfg.writer.append({ type: 'inbox/accepted', messageId, text, source });
    // Staged (the log took it; a refused event throws inside `append` and is not in the inbox):
    // its turn is scheduled now, opens behind it and answers us first (decision 0075).
    await this.turnsAt.accepted(appended, this.session.unclaimedInbox.includes(messageId), source);
    return messageId;
  }

  /**
   * Add a message to the history without starting a turn (a quiet report): now when idle,
   * else at the running turn's next safe point (before its next model request, or when it ends).
   */
  async inject(text: string, source: MessageSource): Promise<void> {
    if (!this.turnsAt.running) {
      await this.cfg.writer.append({ type: 'user/message', text, source });
      return;
    }
    this.injections.push({ text, source });
  }

  private async drainInjections(): Promise<void> {
    while (this.injections.length > 0) {
      const m = this.injections.shift()!;
      await this.cfg.writer.append({ type: 'user/message', text: m.text, source: m.source });
    }
  }

  /** Start working through the inbox if idle (e.g. after a cold resume found queued messages). */
  pump(): void {
    this.turnsAt.pump();
  }

  /** True when nothing runs and nothing will run without a new message: the inbox is empty or paused. */
  get isSettled(): boolean {
    return !this.turnsAt.running && (this.turnsAt.paused || this.inboxSize === 0);
  }

  /**
   * Stop as an interrupt would, without a turn to end: the agent is paused, so a runtime notice
   * (a child settled, a report) waits in its inbox until someone decides (issue 21.2: Stop on a
   * conversation that waits on its children). A running turn is ended with `cancel` instead.
   */
  pause(): void {
    this.turnsAt.paused = true;
  }

  /** Wake a paused agent so it works through the queued messages. */
  resume(): void {
    this.turnsAt.paused = false;
    this.turnsAt.pump();
  }

  /** Resolves when no turn runs (and none will start without a new message). */
  idle(): Promise<void> {
    return this.turnsAt.idle();
  }

  /**
   * End the running turn as `interrupted` (or `cancelled`). Interrupt is not dispose: the
   * agent stays. With keepInbox (the default) queued messages stay and wait for the next
   * waking message (or `resume()`); without it they are claimed and dropped.
   */
  async cancel(cause: 'interrupted' | 'cancelled' = 'interrupted', opts: { keepInbox?: boolean; why?: string } = {}): Promise<void> {
    this.turnsAt.openScheduled(); // a turn scheduled but not open yet is the one interrupted
    if (!(opts.keepInbox ?? true)) {
      for (const id of this.session.unclaimedInbox) await this.cfg.writer.append({ type: 'inbox/claimed', messageId: id });
    }
    // An interrupt that says why ends the turn with that text (turn/end.error).
    const reason = cause === 'interrupted' && opts.why ? new InterruptReason(opts.why) : cause;
    this.compactions.abortAsked(reason); // a compaction asked for ends too
    if (this.controller) this.controller.abort(reason);
    else if (this.compactions.autoRunning) this.compactions.abortAuto(reason);
    else if (this.judging) this.judging.abort(reason);
    // Only a loop that runs takes a pending cancel: a scheduled turn that a pause kept from
    // opening (a Stop in the message's own tick) has none, and a cancel left pending would end
    // the next turn — the kept message's, on "Send now" — at once, unheard.
    else if (this.looping) this.cancelPending = reason;
  }

  /**
   * Compact now (the user asked): waits for the running turn, then summarises everything
   * before the last `keepTurns` turns. The raw log keeps every event.
   */
  async compact(keepTurns = 1): Promise<CompactionResult> {
    try {
      // Under way from the call on: a Stop while it waits for the running turn ends it too.
      return await this.compactions.runAsked(async (signal) => {
        await this.idle();
        if (signal.aborted) return { outcome: 'aborted', error: 'Stopped before the compaction started.' };
        return compact(this.cfg, 'manual', keepTurns, signal);
      });
    } finally {
      // The status counts it as running (`compactingAsked`): its end is the agent going idle, told as a turn's end is.
      if (!this.compactions.askedRunning && this.activity === 'idle' && !this.disposed) this.toldIdle();
    }
  }

  /** A compaction the user asked for is under way (a model request of its own, not a turn): a Stop ends it (`cancel`). */
  get compactingAsked(): boolean {
    return this.compactions.askedRunning;
  }

  onTurnEnd(fn: (r: TurnReport) => void): () => void {
    this.turnListeners.add(fn);
    return () => this.turnListeners.delete(fn);
  }

  /**
   * A running tool's progress note (`ToolContext.progress`): for views, not in the log nor
   * shown to the model. Listeners must not throw (a throw is dropped).
   */
  onProgress(fn: (p: ToolProgress) => void): () => void {
    this.progressListeners.add(fn);
    return () => this.progressListeners.delete(fn);
  }

  /** Called each time the agent stops working (its loop ended and nothing restarted it). */
  /** Tell the `onIdle` listeners: a turn ended with nothing left to run, or an asked compaction ended. */
  private toldIdle(): void {
    for (const fn of this.idleListeners) fn();
  }

  onIdle(fn: () => void): () => void {
    this.idleListeners.add(fn);
    return () => this.idleListeners.delete(fn);
  }

  get isDisposed(): boolean {
    return this.disposed;
  }

  onEvent(fn: (e: SessionEvent) => void): () => void {
    return this.cfg.writer.onEvent((e) => fn(e));
  }

  /** Stop taking work; cancels the running turn. The session stays durable. */
  async dispose(): Promise<void> {
    this.disposed = true;
    this.controller?.abort('cancelled');
    this.compactions.abortAuto('cancelled');
    this.compactions.abortAsked('cancelled');
    this.judging?.abort('cancelled');
    await this.idle();
    await this.cfg.writer.flush();
    this.turnListeners.clear();
    this.idleListeners.clear();
    this.progressListeners.clear();
  }

  private async loop(): Promise<void> {
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
    while (!this.disposed) {
      let next = this.nextMessage();
      if (!next) return;
      // A cancel already pending opens the turn it interrupts at once: no compaction before it.
      if (this.cfg.compaction && !this.cancelPending) {
        // A Stop while the compaction runs ends its request (and its PreCompact hook): nothing
        // streams into the log after it, and the message stays queued, paused, unclaimed.
        const compaction = this.cfg.compaction;
        if (await this.compactions.runAuto((signal) => compactIfNeeded(this.cfg, compaction, signal))) {
          this.cancelPending = undefined;
          this.turnsAt.paused = true;
          return;
        }
        // The message may have been withdrawn while compaction ran: take the queue's head again.
        next = this.nextMessage();
        if (!next) return;
      }
      if (this.cfg.admit) {
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
            this.turnsAt.paused = true;
            return;
          }
          admitted = answer;
        }
        // Withdrawn or claimed (a cancel without keepInbox) while an async answer was awaited: take the head again.
        if (this.session.unclaimedInbox[0] !== next.messageId) continue;
        if (!admitted) {
          // Refused just before it ran (a stale goal round): claimed, no turn.
          await this.cfg.writer.append({ type: 'inbox/claimed', messageId: next.messageId });
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
        await this.cfg.admission?.enter(signal);
        const starting = this.cfg.toolsReady?.(signal);
        if (starting) await starting.catch(() => undefined);
        await this.drainInjections();
        await this.turnsAt.beforeBuild(this.session.length); // a backlog's build answers the sender first
      };
      let outcome: TurnOutcome;
      try {
        outcome = await (this.cfg.runTurn ?? runTurn)(
          this.turnConfig(),
          { messageId: next.messageId, text: next.text, source: next.source },
          signal,
          beforeStep,
        );
      } catch (err) {
        // Only claiming or opening the turn can throw here (the store): runTurn closes a turn it opened.
        outcome = { stopReason: 'error', error: describeError(err) };
      } finally {
        this.cfg.admission?.leave();
      }
      this.controller = null;
      await this.drainInjections().catch(() => undefined);
      this.lastOutcome = { ...outcome, messageId: next.messageId };
      if (outcome.stopReason === 'interrupted' || outcome.stopReason === 'cancelled') this.turnsAt.paused = true;
      for (const fn of this.turnListeners) fn(this.lastOutcome);
      if (this.turnsAt.paused) return;
    }
  }

  /**
   * The config a turn runs with: approvals counted (`awaitingApproval`), progress fanned out
   * to listeners. The configured object stays its prototype, so its live getters (a model name
   * changed in settings) still answer at each step.
   */
  private turnConfig(): AgentConfig {
    const onProgress = (p: ToolProgress): void => {
      for (const fn of [this.cfg.onProgress, ...this.progressListeners]) {
        try {
          fn?.(p);
        } catch {
          // a view's bug is not the tool's failure
        }
      }
    };
    return Object.create(this.cfg, {
      onProgress: { value: onProgress },
      ...(this.approvals ? { approval: { value: this.approvals.port } } : {}),
    }) as AgentConfig;
  }

  /** The admit hook's answer; a throw or a rejection counts as a refusal (fail closed). */
  private admitted(msg: InboxAcceptedEvent, signal: AbortSignal): boolean | Promise<boolean> {
    try {
      const r = this.cfg.admit!(msg, signal);
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
    const id = this.session.unclaimedInbox[0];
    if (!id) return undefined;
    for (let i = this.session.length - 1; i >= 0; i--) {
      const e = this.session.events[i];
      if (e.type === 'inbox/accepted' && e.messageId === id) return e;
    }
    return undefined;
  }
}
