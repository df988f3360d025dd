import type { Agent, TurnReport } from '../agent/agent';
import type { InboxAcceptedEvent, MessageSourceKind } from '../session/events';
import { capitalised, SOURCE_WORDS } from '../session/message-source';
import { blocked, type GoalService, next } from './service';
import { roundText, startsRun } from './snapshot';

/** Rounds in a row that ended in a model error before the goal blocks with `round-error`. */
export const ROUND_ERROR_STREAK = 3;

/** A round the driver decided to start: its `goal/change` seq once appended (-1 before). */
interface Plan {
  seq: number;
  revision: number;
  round: number;
}

/**
 * The round driver (seed 002, decision 0029): when an armed, active goal's agent goes idle it
 * starts the next round — a `goal/change` with `roundsStarted + 1`, then the round's message
 * (source `goal`) in the inbox. The decision and the mark "planned" are synchronous in the
 * idle callback; the queued round is checked again by the agent's admit hook when its turn
 * opens (the tick after its accept was staged), and any other message that came meanwhile wins
 * (the goal blocks as `prompt-rejected`). One that comes after the round's turn opened waits
 * behind it, as behind any running turn (decision 0083).
 */
export class GoalDriver {
  private readonly planned = new Map<string, Plan>();
  /** Consecutive rounds that ended in error, per session. */
  private readonly errorStreak = new Map<string, number>();

  constructor(private readonly goals: GoalService) {}

  /**
   * Start the next round if everything holds: the harness open, the agent resident, not
   * disposed, idle, not paused (an interrupt's kept queue is the human's), its inbox empty, no
   * round already planned, the goal active and armed. At the limit, block with `round-limit`.
   */
  kick(id: string): void {
    if (this.goals.closing || this.planned.has(id)) return;
    const agent = this.goals.host.resident(id);
    if (!agent || !this.ready(agent)) return;
    const { goal, armed } = this.goals.liveState(agent);
    if (goal?.phase !== 'active' || !armed) return;
    const plan: Plan = { seq: -1, revision: goal.revision, round: goal.roundsStarted };
    this.planned.set(id, plan);
    const work = this.goals.exclusive(id, async () => {
      // Checked again in order with every other goal operation: a pause or a block asked for
      // before this point wins.
      const now = this.goals.liveState(agent);
      const g = now.goal;
      if (this.goals.closing || !g || g.phase !== 'active' || !now.armed || g.revision !== plan.revision || !this.ready(agent)) return false;
      if (g.roundsStarted >= g.maxGoalRounds) {
        await this.goals.writeFor(agent, blocked(g, 'round-limit'), false);
        return false;
      }
      const round = next(g, 'round', { roundsStarted: g.roundsStarted + 1 });
      plan.seq = agent.session.length;
      plan.revision = round.revision;
      plan.round = round.roundsStarted;
      // Both appends are issued at once, and the round's turn opens on the next tick behind them:
      // the goal/change, the accept and the turn's first facts are one group commit (decision
      // 0083). The store keeps their order, so the round's message is never durable without the
      // goal/change before it, and the model hears the round only once all of them are on disk.
      const written = this.goals.writeFor(agent, round, true);
      const accepted = agent.accept(roundText(round, startsRun(g)), { kind: 'goal', revision: round.revision, round: round.roundsStarted });
      await Promise.all([written, accepted]);
      return true;
    });
    // Until the round is admitted (or the planning gave up) no second round is planned.
    const cleared = work.then(
      (queued) => {
        if (!queued && this.planned.get(id) === plan) this.planned.delete(id);
      },
      () => {
        if (this.planned.get(id) === plan) this.planned.delete(id);
      },
    );
    this.goals.track(cleared);
  }

  /**
   * The agent's admit hook (contract in `AgentConfig.admit`: never throws), asked as the
   * message's turn opens; it reads the log as staged, durable or not (decision 0083: nothing it
   * decides reaches the model before the round's facts are on disk). Every message but
   * a goal round passes at once. A round passes only when it is the one planned in this
   * process (revision and round number), the goal is still active and armed, the harness is
   * open and no competing message came since it was planned. Any non-goal enqueue competes
   * (seed 002 追问四): a human prompt, and equally a runtime one — a child's settlement notice,
   * a background result, a wakeup report. A round refused because one came blocks the goal
   * (`prompt-rejected`: fail closed, its message naming what came); any other stale round (from
   * before a restart, or superseded) is dropped and the goal is left as it is.
   */
  admit(id: string, msg: InboxAcceptedEvent): boolean | Promise<boolean> {
    if (msg.source.kind !== 'goal') return true;
    const plan = this.planned.get(id);
    const agent = this.goals.host.resident(id);
    if (plan) this.planned.delete(id);
    if (!agent) return false;
    const { goal, armed } = this.goals.liveState(agent);
    const live = !this.goals.closing && !!goal && goal.phase === 'active' && armed;
    const current = !!plan && plan.seq >= 0 && msg.source.revision === plan.revision && msg.source.round === plan.round && goal?.revision === plan.revision;
    const rival = plan && plan.seq >= 0 ? competingSince(agent, plan.seq) : undefined;
    if (live && current && !rival) {
      this.watch(id, agent, msg.messageId);
      return true;
    }
    // Dropped without a trace on the goal; when the agent goes idle the driver plans afresh if it still may.
    if (!(live && rival)) return false;
    return this.goals
      .exclusive(id, async () => {
        const now = this.goals.liveState(agent);
        if (now.goal && now.goal.phase === 'active' && now.armed && !this.goals.closing)
          await this.goals.writeFor(agent, blocked(now.goal, 'prompt-rejected', rejectedBy(rival)), false);
        return false;
      })
      .catch(() => false);
  }

  /**
   * A human Stop reached these sessions (`FeatureHooks.stopped`, in the Stop's tick): an active
   * goal of a resident one pauses (operation `interrupt`, disarmed), as when a Stop ends a running
   * round — also when it lands between two rounds, with no round's turn to end: after one ended,
   * while the next is planned, or queued before its turn opens (decision 0127, amended s59).
   * Enqueued now, so a round planned before it finds the goal paused in its check, and a round
   * already queued is refused by `admit`. Never rejects.
   */
  stopped(ids: readonly string[]): Promise<void> {
    const paused = ids.flatMap((id) => {
      const agent = this.goals.host.resident(id);
      if (!agent) return [];
      return [
        this.goals.exclusive(id, async () => {
          const { goal } = this.goals.liveState(agent);
          if (this.goals.closing || goal?.phase !== 'active') return;
          this.errorStreak.delete(id);
          await this.goals.writeFor(agent, next(goal, 'interrupt', { phase: 'paused' }), false);
        }),
      ];
    });
    return Promise.allSettled(paused).then(() => undefined);
  }

  /** The agent may take a round now. */
  private ready(agent: Agent): boolean {
    return !agent.isDisposed && agent.activity === 'idle' && agent.inboxSize === 0 && !agent.isPaused;
  }

  /** After an admitted round: a human interrupt (or a budget stop) pauses the goal; rounds that keep failing block it. */
  private watch(id: string, agent: Agent, messageId: string): void {
    const off = agent.onTurnEnd((r: TurnReport) => {
      if (r.messageId !== messageId) return;
      off();
      // Enqueued synchronously, before the idle callback's kick: the kick's re-check sees it.
      this.goals.track(this.goals.exclusive(id, () => this.ended(id, agent, r)));
    });
  }

  private async ended(id: string, agent: Agent, r: TurnReport): Promise<void> {
    if (this.goals.closing) return;
    const { goal } = this.goals.liveState(agent);
    if (goal?.phase !== 'active') return;
    // A budget stop is a stop (decision 0034): the next round would run into the same budget, so
    // the goal pauses as for a human interrupt; once the budget is raised, a resume goes on.
    if (r.stopReason === 'interrupted' || r.stopReason === 'cancelled' || r.stopReason === 'budget') {
      this.errorStreak.delete(id);
      await this.goals.writeFor(agent, next(goal, 'interrupt', { phase: 'paused' }), false);
      return;
    }
    const streak = r.stopReason === 'error' ? (this.errorStreak.get(id) ?? 0) + 1 : 0;
    if (streak === 0) this.errorStreak.delete(id);
    else this.errorStreak.set(id, streak);
    if (streak >= ROUND_ERROR_STREAK) {
      this.errorStreak.delete(id);
      await this.goals.writeFor(
        agent,
        blocked(
          goal,
          'round-error',
          `${streak} goal rounds in a row ended in an error (last: ${(r.error ?? 'unknown').slice(0, 300)}); check the model, then resume.`,
        ),
        false,
      );
    }
  }
}

/** The block reason of a round a competing message beat (the human's case keeps the default wording). */
function rejectedBy(kind: Exclude<MessageSourceKind, 'goal'>): string | undefined {
  if (kind === 'user') return undefined;
  return `${capitalised(SOURCE_WORDS[kind])} came before the planned goal round; the round was dropped so it is answered first. Resume the goal to go on.`;
}

/**
 * The first message other than a goal round accepted after `seq` (the round's plan): any
 * non-goal enqueue is a competing prompt (seed 002 追问四), a runtime notice as much as a
 * human's message. Quiet reports are history, not enqueued: they compete with nothing.
 */
function competingSince(agent: Agent, seq: number): Exclude<MessageSourceKind, 'goal'> | undefined {
  const events = agent.session.events;
  for (let i = seq + 1; i < events.length; i++) {
    const e = events[i];
    if (e.type === 'inbox/accepted' && e.source.kind !== 'goal') return e.source.kind;
  }
  return undefined;
}
