import type { Agent } from '../agent/agent';
import { type SessionLog, SessionWriter } from '../agent/session-writer';
import type { GoalBlockCode, GoalOperation, GoalSnapshot, SessionEvent } from '../session/events';
import type { Session } from '../session/session';
import type { Store } from '../store/store';
import { blockMessage, checkMaxRounds, checkObjective, emptyGoalFold, foldGoalEvent, GOAL_LIMITS, GoalError, type GoalFold } from './snapshot';

/** What the goal service needs of the harness (kept narrow: it is wired in `wire.ts`). */
export interface GoalHost {
  readonly store: Store;
  resident(id: string): Agent | undefined;
  openSession(id: string): Promise<Agent>;
  isSubagent(id: string): Promise<boolean>;
  /** A goal change was written here (the harness's change stream, decision 0054): views and the round driver hear it. */
  report(id: string, what: 'goal'): void;
}

/** A goal as readers see it: the durable snapshot plus this process's activation. */
export interface GoalState {
  goal: GoalSnapshot | null;
  /** May run rounds by itself in this process (never durable: a restart or a fork starts disarmed). */
  armed: boolean;
}

/** The in-memory view of one resident session: its goal fold and its activation (DSH's cache). */
interface Live {
  fold: GoalFold;
  /** Events folded so far. */
  observed: number;
  armed: boolean;
  /** The activation the service meant for the `goal/change` it is appending at this seq. */
  pending?: { seq: number; armed: boolean };
}

/**
 * Goals (seed 002, decision 0029): every durable fact is a `goal/change` snapshot in the
 * session's own log; activation (armed / disarmed) lives here only. A session's cache is keyed
 * by its Session object, so a cold fold (an open, a restart, a fork: a new Session) starts
 * disarmed, and after each `goal/change` an activation survives only when this service wrote
 * that very seq with that intent. Only the human operations here arm: set and resume.
 */
export class GoalService {
  private readonly live = new WeakMap<Session, Live>();
  /** Per session, the tail of its serialized goal operations (read-modify-write never interleaves). */
  private readonly chains = new Map<string, Promise<unknown>>();
  private readonly inflight = new Set<Promise<unknown>>();
  private closingFlag = false;

  constructor(
    readonly host: GoalHost,
    public defaultMaxRounds = 10,
  ) {}

  get closing(): boolean {
    return this.closingFlag;
  }

  /** The goal and its activation; a session not resident is read from the store (disarmed). */
  async state(id: string): Promise<GoalState> {
    const agent = this.host.resident(id);
    if (agent) {
      const c = this.sync(agent.session);
      return { goal: c.fold.goal, armed: c.armed };
    }
    const s = await this.host.store.inspect(id);
    return { goal: fold(s.events).goal, armed: false };
  }

  /** The resident session's goal and activation, synced to its log (synchronous; for the driver and views). */
  liveState(agent: Agent): GoalState {
    const c = this.sync(agent.session);
    return { goal: c.fold.goal, armed: c.armed };
  }

  /** Its goal is armed here, synced to its log (every status question asks this alone: no state object). */
  isArmed(agent: Agent): boolean {
    return this.sync(agent.session).armed;
  }

  // ── the human's operations (panel, commands, CLI) ─────────────────────────

  /** Set (or replace) the goal, active and armed: rounds start as soon as the agent is idle. */
  async set(id: string, objective: unknown, maxRounds: unknown = this.defaultMaxRounds): Promise<GoalSnapshot> {
    const text = checkObjective(objective);
    const max = checkMaxRounds(maxRounds);
    return this.human(id, { open: true, needGoal: false }, async (agent) => {
      const c = this.sync(agent!.session);
      return this.write(
        agent!,
        { objective: text, phase: 'active', maxGoalRounds: max, roundsStarted: 0, revision: c.fold.revision + 1, operation: 'set' },
        true,
      );
    });
  }

  /** Active (or blocked) → paused, disarmed. */
  pause(id: string): Promise<GoalSnapshot> {
    return this.human(id, { open: false, needGoal: true }, async (agent, g, writer) => {
      if (g.phase !== 'active' && g.phase !== 'blocked')
        throw new GoalError('BAD_PHASE', `The goal is ${g.phase}; only an active or blocked goal can be paused.`);
      return this.write(agent, next(g, 'pause', { phase: 'paused' }), false, writer);
    });
  }

  /** Paused / blocked / active-but-disarmed → active and armed; refused while every round is used. */
  resume(id: string): Promise<GoalSnapshot> {
    return this.human(id, { open: true, needGoal: true }, async (agent, g) => {
      if (g.phase === 'complete') throw new GoalError('BAD_PHASE', 'The goal is complete; set a new goal to go on.');
      if (g.roundsStarted >= g.maxGoalRounds)
        throw new GoalError(
          'ROUNDS_EXHAUSTED',
          `All ${g.maxGoalRounds} rounds of this goal have started; raise the limit above ${g.roundsStarted} first, then resume.`,
        );
      // An interrupt left the agent paused: with nothing kept in its inbox, the resume wakes it
      // (a kept queue stays the human's to send; rounds wait until it is empty).
      if (agent!.isPaused && agent!.inboxSize === 0) agent!.resume();
      return this.write(agent!, next(g, 'resume', { phase: 'active' }), true);
    });
  }

  /** The tombstone: the goal is gone (its history stays in the log). */
  clear(id: string): Promise<null> {
    return this.human(id, { open: false, needGoal: true }, async (agent, _g, writer) => {
      await this.append(agent, writer, null, false);
      return null;
    });
  }

  /** A new round limit (>= the rounds already started); phase and activation stay as they are. */
  async limit(id: string, maxRounds: unknown): Promise<GoalSnapshot> {
    const max = checkMaxRounds(maxRounds);
    return this.human(id, { open: false, needGoal: true }, async (agent, g, writer) => {
      if (max < g.roundsStarted) throw new GoalError('BAD_MAX_ROUNDS', `${g.roundsStarted} rounds have already started; the limit cannot go below that.`);
      const armed = agent ? this.sync(agent.session).armed : false;
      return this.write(agent, next(g, 'limit', { maxGoalRounds: max }), armed, writer);
    });
  }

  // ── the model's operations (the `goal` tool): never arm ──────────────────

  /** Note progress; the activation is kept as it is (an armed goal keeps running). */
  progress(id: string, note: string): Promise<GoalSnapshot> {
    return this.model(id, (agent, g, armed) => {
      if (g.phase === 'complete') throw new GoalError('BAD_PHASE', 'The goal is already complete.');
      return this.write(agent, next(g, 'progress', { note: clip(note, GOAL_LIMITS.noteChars) }), armed);
    });
  }

  complete(id: string, note?: string): Promise<GoalSnapshot> {
    return this.model(id, (agent, g) => {
      if (g.phase === 'complete') throw new GoalError('BAD_PHASE', 'The goal is already complete.');
      return this.write(agent, next(g, 'complete', { phase: 'complete', ...(note ? { note: clip(note, GOAL_LIMITS.noteChars) } : {}) }), false);
    });
  }

  block(id: string, reason: string): Promise<GoalSnapshot> {
    return this.model(id, (agent, g) => {
      if (g.phase !== 'active' && g.phase !== 'paused')
        throw new GoalError('BAD_PHASE', `The goal is ${g.phase}; only an active or paused goal can be blocked.`);
      return this.write(
        agent,
        next(g, 'block', { phase: 'blocked', blocked: { code: 'model', message: clip(reason, GOAL_LIMITS.messageChars) || blockMessage('model', g) } }),
        false,
      );
    });
  }

  // ── for the round driver (same package) ───────────────────────────────────

  /**
   * Run `fn` after every earlier goal operation of the session, tracked for `whenQuiet`.
   * Enqueued synchronously: an operation asked for first is applied first.
   */
  exclusive<T>(id: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.chains.get(id) ?? Promise.resolve();
    const p = prev.then(fn, fn);
    const tail = p.catch(() => undefined);
    this.chains.set(id, tail);
    this.inflight.add(tail);
    void tail.finally(() => {
      this.inflight.delete(tail);
      if (this.chains.get(id) === tail) this.chains.delete(id);
    });
    return p;
  }

  /** Append a driver snapshot (a round, a block, a pause) with the activation meant for it. */
  writeFor(agent: Agent, snapshot: GoalSnapshot, armed: boolean): Promise<GoalSnapshot> {
    return this.write(agent, snapshot, armed);
  }

  /** Track a promise of goal work for `whenQuiet` (the driver's planning). */
  track(p: Promise<unknown>): void {
    const t = p.catch(() => undefined);
    this.inflight.add(t);
    void t.finally(() => this.inflight.delete(t));
  }

  /** The agent's goal may run rounds by itself (active and armed), or goal work of it is under way. */
  holds(agent: Agent): boolean {
    if (this.chains.has(agent.id)) return true;
    const { goal, armed } = this.liveState(agent);
    return armed && goal?.phase === 'active';
  }

  /** No goal work under way (a write, a planned round on its way into the inbox). */
  get isQuiet(): boolean {
    return this.inflight.size === 0;
  }

  /** Resolves once no goal work is under way (`Harness.settle` waits for it: never between two rounds). */
  async whenQuiet(): Promise<void> {
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
  }

  /** The harness is closing: nothing more is written, no round starts, queued rounds are refused. */
  async close(): Promise<void> {
    this.closingFlag = true;
    await this.whenQuiet();
  }

  // ── internals ─────────────────────────────────────────────────────────────

  private sync(session: Session): Live {
    let c = this.live.get(session);
    if (!c) {
      c = { fold: emptyGoalFold(), observed: 0, armed: false };
      this.live.set(session, c);
    }
    const events = session.events;
    for (let i = c.observed; i < events.length; i++) {
      const e = events[i];
      if (!foldGoalEvent(c.fold, e)) continue;
      c.armed = c.pending?.seq === e.seq ? c.pending.armed : false;
      if (c.pending && c.pending.seq <= e.seq) delete c.pending;
    }
    c.observed = events.length;
    return c;
  }

  /**
   * A human operation: refused for subagents; set and resume open the session (they arm, and
   * rounds need the agent resident); every operation but set needs a goal.
   */
  private async human<T>(
    id: string,
    opts: { open: boolean; needGoal: boolean },
    fn: (agent: Agent | undefined, g: GoalSnapshot, writer: SessionLog) => Promise<T>,
  ): Promise<T> {
    if (this.closingFlag) throw new GoalError('CLOSED', 'Arbor is closing; change the goal after it starts again.');
    if (!this.host.store.header(id) && !this.host.resident(id)) throw new GoalError('NO_GOAL', `No session ${id}.`);
    if (await this.host.isSubagent(id))
      throw new GoalError('NOT_ROOT', 'Goals belong to conversations you own; a subagent cannot hold one. Set the goal on a root conversation.');
    const opened = opts.open ? await this.host.openSession(id) : undefined;
    return this.exclusive(id, async () => {
      const on = async (agent: Agent | undefined) => {
        const writer = agent ?? new SessionWriter(await this.host.store.inspect(id), this.host.store);
        const g = agent ? this.sync(agent.session).fold.goal : fold(writer.session.events).goal;
        if (!g && opts.needGoal) throw new GoalError('NO_GOAL', 'This conversation has no goal; set one first.');
        return fn(agent, g as GoalSnapshot, writer);
      };
      // Not resident: in its log's turn at the store's gate, as every writer of a log no agent holds (decision 0129).
      return opened ? on(opened) : this.host.store.logGate.run(id, () => on(this.host.resident(id)));
    });
  }

  private async model<T>(id: string, fn: (agent: Agent, g: GoalSnapshot, armed: boolean) => Promise<T>): Promise<T> {
    const agent = this.host.resident(id);
    if (!agent) throw new GoalError('NO_GOAL', `Session ${id} is not running here.`);
    return this.exclusive(id, async () => {
      const c = this.sync(agent.session);
      if (!c.fold.goal) throw new GoalError('NO_GOAL', 'This conversation has no goal; only the human sets one.');
      return fn(agent, c.fold.goal, c.armed);
    });
  }

  private async write(agent: Agent | undefined, snapshot: GoalSnapshot, armed: boolean, writer?: SessionLog): Promise<GoalSnapshot> {
    await this.append(agent, writer ?? agent!, snapshot, armed);
    return snapshot;
  }

  private async append(agent: Agent | undefined, writer: SessionLog, goal: GoalSnapshot | null, armed: boolean): Promise<void> {
    if (agent) {
      // The intent is recorded against the seq this append takes (appends assign it synchronously).
      const c = this.sync(agent.session);
      c.pending = { seq: agent.session.length, armed };
    }
    await writer.append({ type: 'goal/change', goal });
    if (agent) this.sync(agent.session);
    this.host.report(writer.id, 'goal');
  }
}

function fold(events: readonly SessionEvent[]): GoalFold {
  const f = emptyGoalFold();
  for (const e of events) foldGoalEvent(f, e);
  return f;
}

/** The next snapshot: one revision on, the operation named, `blocked` kept only while blocked. */
export function next(g: GoalSnapshot, operation: GoalOperation, patch: Partial<GoalSnapshot>): GoalSnapshot {
  const out: GoalSnapshot = { ...g, ...patch, revision: g.revision + 1, operation };
  if (out.phase !== 'blocked') delete out.blocked;
  return out;
}

export function blocked(g: GoalSnapshot, code: GoalBlockCode, message?: string): GoalSnapshot {
  return next(g, 'block', { phase: 'blocked', blocked: { code, message: message ?? blockMessage(code, g) } });
}

const clip = (s: string, max: number): string => (s.length > max ? `${s.slice(0, max - 1)}…` : s).trim();
