import type { Agent } from '../agent/agent';
import { SessionWriter } from '../agent/session-writer';
import type { ApprovalPolicy, MessageSource, SandboxMode } from '../session/events';
import type { Store } from '../store/store';
import { mirrorRefusal } from './mirrors';
import { narrowingFor, type PolicyNow, policyNow } from './policy-snapshot';
import { type FollowupPath, SubagentError } from './types';
import { acceptUnder, Underway, type Work } from './underway';

// Follow-ups, wakes and runtime messages on their way into a continuable child, and a released
// child made resident again (`activate`). A resident child takes them in its inbox; a released
// one is cold-resumed first, one resume or log write per child at a time — the store's gate of its
// log, which every writer of a log no agent holds goes through (a rewind's record too, decision
// 0129). Which children are resident, and when they are released, is residency.ts's: this side
// reaches it through `ResidentsPort`.

/** A resident continuable child as this side sees it: its agent (its release timer is residency's). */
export interface Resident {
  readonly agent: Agent;
}

/** What the inbound side needs of residency (handed in, so this file does not import it). */
export interface ResidentsPort<R extends Resident> {
  store: Store;
  isOneShot(id: string): boolean;
  /** The child's activation while it is resident (not released). */
  live(id: string): R | undefined;
  /** Something arrived for it: its release timer, if armed, is disarmed. */
  disarm(r: R): void;
  /** Arm the release timer of a settled activation; disarm it if it woke. */
  armReleaseIfSettled(r: R): void;
  /** Rebuild a child from its own log and make it resident again. */
  coldResume(childId: string): Promise<R>;
  /** The policy a resident session (a message's sender) runs under now; undefined when it is not resident. */
  policyOf(id: string): PolicyNow | undefined;
  /** The deployment's defaults, for a child's policy now. */
  defaults(): { sandbox?: SandboxMode; approval: ApprovalPolicy };
  /**
   * Why the child can no longer work in its worktree (`isolation.ts` `closedWorktreeOf`), once a
   * change of it under way ended (bounded; `stopped` ends the wait). Contract: never rejects.
   */
  worktreeClosed?(childId: string, stopped: AbortSignal): Promise<string | undefined>;
}

/** The ways into a continuable child: its inbox when resident, a cold resume when released. */
export class Inbound<R extends Resident> {
  /** Follow-ups, wakes and runtime messages under way per child: `halt` marks them (decision 0100). */
  private readonly underway = new Underway();
  /** `close` has begun: nothing new is made resident or started (decision 0100). */
  private closing = false;

  constructor(private readonly residents: ResidentsPort<R>) {}

  /** Cold resumes and log writes under way per non-resident session: the store's one gate (decision 0129). */
  private get gate() {
    return this.residents.store.logGate;
  }

  followup(callerId: string | null, childId: string, text: string, signal?: AbortSignal, within?: Work): Promise<{ messageId: string; path: FollowupPath }> {
    // The sender's bounds as they are at the call (before any await): a parent's message carries
    // them, so a parent narrowed since the child started never gets its old width back through it
    // (decision 0125). A human's own message (no caller) is the user's: it narrows nothing.
    const bound = callerId !== null ? this.residents.policyOf(callerId) : undefined;
    // Under way from the call on (before any await): a Stop of the child's subtree from here halts it
    // (or from `within`'s start: the human's send, which first asked whether this is a subagent).
    return this.underway.run(childId, signal, (work) => this.followupAs(callerId, childId, text, work, bound), within);
  }

  private async followupAs(
    callerId: string | null,
    childId: string,
    text: string,
    work: Work,
    bound: PolicyNow | undefined,
  ): Promise<{ messageId: string; path: FollowupPath }> {
    const store = this.residents.store;
    const header = store.header(childId);
    if (!header) throw new SubagentError('UNKNOWN_CHILD', `No agent ${childId}; list_agents shows the ids you can message.`);
    if (callerId !== null && header.parentSession !== callerId)
      throw new SubagentError('NOT_PARENT', `Only the direct parent of ${childId} can message it, and that is not ${callerId}.`);
    if (this.residents.isOneShot(childId))
      throw new SubagentError('NOT_CONTINUABLE', `${childId} is a one-shot subagent: it takes no follow-ups. Start a continuable one.`);
    const mirror = mirrorRefusal(childId, await store.summary(childId).catch(() => undefined), 'message');
    if (mirror) throw mirror;
    // Its worktree being applied now: the message waits for the apply, and is refused if it closed the folder (decision 0126, amended in s60).
    const closed = await this.residents.worktreeClosed?.(childId, work.stopped);
    if (closed) throw new SubagentError('WORKTREE_CLOSED', closed);
    return this.enqueue(childId, text, { kind: 'followup', fromSession: callerId ?? 'user' }, work, bound);
  }

  /**
   * A Stop of these sessions (a subtree, `interruptSubtree`): follow-ups, wakes and runtime
   * messages under way to them land paused — a cold resume in progress lands paused, a message
   * is kept queued and starts nothing (decision 0100). The Stop pauses what is resident itself.
   */
  halt(ids: readonly string[]): void {
    this.underway.halt(ids);
  }

  /** Runs `fn` as work under way to `id` (registered before its first await): a Stop of `id`'s subtree marks it halted. */
  under<T>(id: string, fn: (work: Work) => Promise<T>): Promise<T> {
    return this.underway.run(id, undefined, fn);
  }

  /** The host is closing: a new message or wake is refused before anything is written or resumed. */
  private refuseIfClosing(childId: string): void {
    if (this.closing)
      throw new SubagentError(
        'CLOSING',
        `Arbor is closing (the window is reloading or closing); nothing was sent to ${childId}. Send it again once Arbor has reopened.`,
      );
  }

  /** The sending turn was interrupted (Stop) before the message was written: nothing is sent (as a start, seed 002). */
  private refuseIfCancelled(childId: string, work: Work): void {
    if (work.signal?.aborted) throw new SubagentError('CANCELLED', `The sending turn was interrupted before the message reached ${childId}; nothing was sent.`);
  }

  /**
   * Accept into a resident activation. A message a Stop overtook is kept (durably queued) and
   * starts nothing: the pause comes in the same tick as the accept, before the turn it
   * scheduled opens (the next tick, decision 0075). A Stop during the write is the Stop's own.
   */
  private async accept(a: R, text: string, source: MessageSource, work: Work, bound?: PolicyNow): Promise<string> {
    // The sender's narrower bounds go in first: the child's next tool call, and the turn this message starts, run under them.
    if (bound) for (const draft of narrowingFor(bound, policyNow(a.agent.session.events, this.residents.defaults()))) await a.agent.append(draft);
    const messageId = await acceptUnder(a.agent, text, source, work);
    if (work.halted) this.residents.armReleaseIfSettled(a);
    return messageId;
  }

  /** Paused (a kept queue waits for a human) and released when settled. */
  private keepPaused(a: R): void {
    a.agent.pause();
    this.residents.armReleaseIfSettled(a);
  }

  /** Into a continuable child's inbox: running → inbox, waiting → wake, not resident → cold resume. */
  private async enqueue(
    childId: string,
    text: string,
    source: MessageSource,
    work: Work,
    bound?: PolicyNow,
  ): Promise<{ messageId: string; path: FollowupPath }> {
    // Checked after every await (each call, the retry below included) and before the accept.
    this.refuseIfClosing(childId);
    this.refuseIfCancelled(childId, work);
    const live = this.residents.live(childId);
    if (live) {
      // Later FIFO turns: never joins a running turn, never calls the provider again.
      const path: FollowupPath = work.halted ? 'kept' : live.agent.activity === 'running' ? 'inbox' : 'wake';
      this.residents.disarm(live);
      const messageId = await this.accept(live, text, source, work, bound);
      return { messageId, path };
    }
    // One resume (or log write) per child at a time: concurrent follow-ups (parallel tool
    // calls) must not build two Agents on one log, nor a rewind's record land under a resume.
    const pending = this.gate.pending(childId);
    if (pending) {
      await pending.catch(() => undefined);
      return this.enqueue(childId, text, source, work, bound);
    }
    const a = await this.resumeOnce(childId);
    // Closing: `close` waited for this resume and residency releases it.
    this.refuseIfClosing(childId);
    if (work.signal?.aborted) this.keepPaused(a);
    this.refuseIfCancelled(childId, work);
    const messageId = await this.accept(a, text, source, work, bound);
    return { messageId, path: work.halted ? 'kept' : 'cold-resume' };
  }

  /**
   * The one cold resume of a released child, holding its log's gate while under way (`close`
   * waits for it), from its read of the log until it is resident. Returned as is, not through an
   * async wrapper: the resuming caller's accept then runs before a concurrent follow-up's that
   * waits on `pending(…).catch()` (FIFO, cold-resume.test).
   */
  private resumeOnce(childId: string): Promise<R> {
    return this.gate.hold(childId, this.residents.coldResume(childId));
  }

  /**
   * "Send now" for a continuable child's kept queue (after an interrupt): a resident child
   * resumes; a released one is cold-resumed from its log and works through its queue.
   */
  wake(childId: string): Promise<void> {
    return this.underway.run(childId, undefined, (work) => this.wakeAs(childId, work));
  }

  private async wakeAs(childId: string, work: Work): Promise<void> {
    this.refuseIfClosing(childId);
    const live = this.residents.live(childId);
    if (live) {
      // A Stop that overtook this wake (it waited for a resume below): the queue waits on.
      if (work.halted) return;
      this.residents.disarm(live);
      live.agent.resume();
      return;
    }
    const pending = this.gate.pending(childId);
    if (pending) {
      await pending.catch(() => undefined);
      return this.wakeAs(childId, work);
    }
    const a = await this.resumeOnce(childId);
    this.refuseIfClosing(childId);
    // Stopped while it was being resumed: it lands paused, its queue kept (decision 0100).
    if (work.halted) return this.keepPaused(a);
    a.agent.resume();
  }

  /**
   * A runtime message (settlement notice, report) to a subagent that is not resident. It is
   * never reopened as a root: a continuable one wakes through its own composition, like a
   * follow-up; a quiet message, or one to a one-shot (which takes no more turns), is only
   * recorded in its log.
   */
  async deliverToReleased(id: string, text: string, source: MessageSource, quiet: boolean, mode: 'one-shot' | 'continuable'): Promise<void> {
    // Closing: nothing is resumed; the message is recorded as history, as the host's own notices are.
    if (!quiet && mode === 'continuable' && !this.closing) {
      await this.underway.run(id, undefined, (work) => this.enqueue(id, text, source, work));
      return;
    }
    const live = this.residents.live(id);
    if (live) return live.agent.inject(text, source);
    // Its log's turn (a rewind's record, a resume of it, another message may hold it): written
    // only if it is still not resident then — resident meanwhile, it goes through its agent.
    const { store } = this.residents;
    const written = await this.gate.run(id, async () => {
      if (this.residents.live(id)) return false;
      await new SessionWriter(await store.inspect(id), store).append({ type: 'user/message', text, source });
      return true;
    });
    if (!written) return this.deliverToReleased(id, text, source, quiet, mode);
  }

  /**
   * A released continuable child resident again as itself (its descriptor's tools, role and
   * roots), running nothing: the caller of a human's task for that node (a placement). Its
   * queue stays as it was; with nothing to do it is released again after the delay.
   */
  async activate(childId: string): Promise<Agent> {
    this.refuseIfClosing(childId);
    const live = this.residents.live(childId);
    if (live) return live.agent;
    const pending = this.gate.pending(childId);
    if (pending) {
      await pending.catch(() => undefined);
      return this.activate(childId);
    }
    const a = await this.resumeOnce(childId);
    this.refuseIfClosing(childId);
    this.residents.armReleaseIfSettled(a);
    return a.agent;
  }

  /** The host is closing: from here a follow-up or wake is refused, and a runtime message is history (decision 0100). */
  close(): void {
    this.closing = true;
  }

  /** Wait until no cold resume or log write is under way (of any log the gate holds). */
  drain(): Promise<void> {
    return this.gate.drain();
  }
}
