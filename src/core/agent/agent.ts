import { randomUUID } from 'node:crypto';
import type { EventDraft, MessageSource, SessionEvent } from '../session/events';
import { type QueuedMessage, queuedMessages } from '../session/folds';
import { type CompactionResult, compact } from './compaction';
import { Compactions } from './compactions';
import type { AgentConfig, ToolProgress } from './config';
import { CountedApprovals } from './counted-approvals';
import { TurnScheduler } from './scheduling';
import type { SessionLog } from './session-writer';
import { InterruptReason } from './turn';
import { TurnLoop, type TurnReport } from './turn-loop';
import { withdrawQueued } from './withdraw';

export type { TurnReport } from './turn-loop';

/** Whether an agent's loop is working (a turn runs or is starting); a session's status is `SessionStatus` (session/status.ts). */
export type AgentActivity = 'idle' | 'running';

/** Why a turn a crash left open ends `interrupted` (turn/end.error). */
export const CRASHED_DURING_TURN = 'The process ended during this turn.';

/**
 * One session, one FIFO inbox, at most one running turn (DESIGN §4). Messages are accepted
 * durably and claimed in order; `cancel` ends the running turn and keeps (or drops) the rest.
 * The loop that runs the turns is `turn-loop.ts`'s.
 */
export class Agent implements SessionLog {
  /** Compactions under way (the automatic one, those asked for): a cancel ends them. */
  private readonly compactions = new Compactions();
  private disposed = false;
  /** When turns start: the one rule of decision 0075 (scheduling.ts). */
  private readonly turnsAt = new TurnScheduler({
    inboxSize: () => this.inboxSize,
    disposed: () => this.disposed,
    loop: () => this.turnLoop.run(),
    becameIdle: () => this.toldIdle(),
  });
  /** Works through the inbox, one turn at a time; holds what a Stop ends. */
  private readonly turnLoop: TurnLoop;
  private readonly turnListeners = new Set<(r: TurnReport) => void>();
  private readonly idleListeners = new Set<() => void>();
  private readonly progressListeners = new Set<(p: ToolProgress) => void>();
  /** The configured approval port, counting the questions under way (`awaitingApproval`). */
  private readonly approvals: CountedApprovals | undefined;

  constructor(private readonly cfg: AgentConfig) {
    this.approvals = cfg.approval ? new CountedApprovals(cfg.approval, () => cfg.onApprovalChange?.()) : undefined;
    this.turnLoop = new TurnLoop({
      cfg,
      turnsAt: this.turnsAt,
      compactions: this.compactions,
      disposed: () => this.disposed,
      turnConfig: () => this.turnConfig(),
      turnEnded: (r) => {
        for (const fn of this.turnListeners) fn(r);
      },
    });
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
    return this.turnsAt.running || this.turnLoop.running ? 'running' : 'idle';
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
    return this.turnLoop.lastTurn;
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
  inject(text: string, source: MessageSource): Promise<void> {
    return this.turnLoop.inject(text, source);
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
    this.turnLoop.stop(reason);
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

  /** Tell the `onIdle` listeners: a turn ended with nothing left to run, or an asked compaction ended. */
  private toldIdle(): void {
    for (const fn of this.idleListeners) fn();
  }

  /** Called each time the agent stops working (its loop ended and nothing restarted it). */
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
    this.turnLoop.abortAll();
    await this.idle();
    await this.cfg.writer.flush();
    this.turnListeners.clear();
    this.idleListeners.clear();
    this.progressListeners.clear();
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
}
