import type { Agent } from '../agent/agent';
import { SessionWriter } from '../agent/session-writer';
import type { MessageSource, StopReason } from '../session/events';
import { descriptorOf, lastTurnText } from '../session/folds';
import { refusalSentence, refusedActions } from '../session/refusals';
import { type ResumePort, rebuildFromLog } from './cold-resume';
import { mirrorRefusal } from './mirrors';
import { type FollowupPath, SubagentError } from './types';
import { acceptUnder, Underway, type Work } from './underway';

/** What residency needs of its runtime (handed in, so neither file imports the other). */
export interface ResidencyPort extends ResumePort {
  /** Read each time an Activation settles: a settings change reaches the next release. */
  releaseDelayMs: () => number;
  deliver(parentId: string, text: string, source: MessageSource, quiet: boolean): Promise<void>;
}

/** A continuable child's process-local residency: its Agent, inbox and owned children. */
interface Activation {
  id: string;
  parentId: string;
  agent: Agent;
  release: () => void;
  offIdle: () => void;
  timer?: NodeJS.Timeout;
  released: boolean;
  lastStop?: StopReason;
  /** The first seq of this activation: refusals before it were reported by an earlier notice. */
  fromSeq: number;
  /** Built by a cold resume: until it runs a turn it has nothing to settle (its parent heard of its last work). */
  resumed?: boolean;
}

interface OneShot {
  id: string;
  parentId: string;
  agent: Agent;
  release: () => void;
}

/**
 * Owns which children are resident. An Activation is released once settled (idle, inbox
 * empty or paused, no live owned children) for `releaseDelayMs`; its direct parent then gets
 * exactly one settlement notice. The session stays; a follow-up cold-resumes it.
 */
export class Residency {
  private readonly activations = new Map<string, Activation>();
  private readonly oneShots = new Map<string, OneShot>();
  /** Per parent, its resident children: activations not released, and one-shots (`ownsLive`). */
  private readonly owned = new Map<string, Set<string>>();
  private readonly depths = new Map<string, number>();
  /** Cold resumes and log writes under way per non-resident child. */
  private readonly busy = new Map<string, Promise<unknown>>();
  /** Follow-ups, wakes and runtime messages under way per child: `halt` marks them (decision 0100). */
  private readonly underway = new Underway();
  /** `disposeAll` has begun: nothing new is made resident or started (decision 0100). */
  private closing = false;
  private background = 0;
  private readonly quietWaiters = new Set<() => void>();

  constructor(private readonly rt: ResidencyPort) {}

  depthOf(id: string): number {
    return this.depths.get(id) ?? 0;
  }
  setDepth(id: string, depth: number): void {
    // Depth never decreases after resume: the larger of what we knew and what the log says.
    this.depths.set(id, Math.max(depth, this.depths.get(id) ?? 0));
  }

  isActive(id: string): boolean {
    const a = this.activations.get(id);
    return !!a && !a.released;
  }
  isOneShot(id: string): boolean {
    return this.oneShots.has(id);
  }

  /** Counts for leak checks: resident children, armed release timers, pending background results. */
  stats(): { activations: number; oneShots: number; timers: number; background: number } {
    return {
      activations: this.activations.size,
      oneShots: this.oneShots.size,
      timers: [...this.activations.values()].filter((a) => a.timer).length,
      background: this.background,
    };
  }

  addActivation(id: string, parentId: string, agent: Agent, release: () => void): Activation {
    const a: Activation = { id, parentId, agent, release, released: false, offIdle: () => undefined, fromSeq: agent.session.events.length };
    a.offIdle = agent.onIdle(() => {
      a.lastStop = agent.lastTurn?.stopReason;
      this.armReleaseIfSettled(a);
    });
    this.activations.set(id, a);
    this.own(parentId, id);
    return a;
  }

  addOneShot(id: string, parentId: string, release: () => void, agent: Agent): void {
    const off = agent.onIdle(() => this.notifyQuiet());
    this.own(parentId, id);
    this.oneShots.set(id, {
      id,
      parentId,
      agent,
      release: () => {
        off();
        release();
      },
    });
  }

  /** A background one-shot result is on its way to the parent. */
  trackBackground<T>(p: Promise<T>): Promise<T> {
    this.background++;
    return p.finally(() => {
      this.background--;
      this.notifyQuiet();
    });
  }

  async disposeOneShot(id: string): Promise<void> {
    const o = this.oneShots.get(id);
    if (!o) return;
    this.oneShots.delete(id);
    this.disown(o.parentId, id);
    await this.disposeOwned(id); // child-first: its own children go before it
    o.release();
    await o.agent.dispose();
    this.recheckParent(o.parentId);
    this.notifyQuiet();
  }

  async followup(callerId: string | null, childId: string, text: string, signal?: AbortSignal): Promise<{ messageId: string; path: FollowupPath }> {
    // Under way from the call on (before any await): a Stop of the child's subtree from here halts it.
    return this.underway.run(childId, signal, (work) => this.followupAs(callerId, childId, text, work));
  }

  private async followupAs(callerId: string | null, childId: string, text: string, work: Work): Promise<{ messageId: string; path: FollowupPath }> {
    const store = this.rt.store;
    const header = store.header(childId);
    if (!header) throw new SubagentError('UNKNOWN_CHILD', `No agent ${childId}; list_agents shows the ids you can message.`);
    if (callerId !== null && header.parentSession !== callerId)
      throw new SubagentError('NOT_PARENT', `Only the direct parent of ${childId} can message it, and that is not ${callerId}.`);
    if (this.oneShots.has(childId))
      throw new SubagentError('NOT_CONTINUABLE', `${childId} is a one-shot subagent: it takes no follow-ups. Start a continuable one.`);
    const mirror = mirrorRefusal(childId, await store.summary(childId).catch(() => undefined), 'message');
    if (mirror) throw mirror;
    return this.enqueue(childId, text, { kind: 'followup', fromSession: callerId ?? 'user' }, work);
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
  private async accept(a: Activation, text: string, source: MessageSource, work: Work): Promise<string> {
    const messageId = await acceptUnder(a.agent, text, source, work);
    if (work.halted) this.armReleaseIfSettled(a);
    return messageId;
  }

  /** Paused (a kept queue waits for a human) and released when settled. */
  private keepPaused(a: Activation): void {
    a.agent.pause();
    this.armReleaseIfSettled(a);
  }

  /** Into a continuable child's inbox: running → inbox, waiting → wake, not resident → cold resume. */
  private async enqueue(childId: string, text: string, source: MessageSource, work: Work): Promise<{ messageId: string; path: FollowupPath }> {
    // Checked after every await (each call, the retry below included) and before the accept.
    this.refuseIfClosing(childId);
    this.refuseIfCancelled(childId, work);
    const live = this.activations.get(childId);
    if (live && !live.released) {
      // Later FIFO turns: never joins a running turn, never calls the provider again.
      const path: FollowupPath = work.halted ? 'kept' : live.agent.activity === 'running' ? 'inbox' : 'wake';
      clearTimeout(live.timer);
      live.timer = undefined;
      const messageId = await this.accept(live, text, source, work);
      return { messageId, path };
    }
    // One resume (or log write) per child at a time: concurrent follow-ups (parallel tool
    // calls) must not build two Agents on one log.
    const pending = this.busy.get(childId);
    if (pending) {
      await pending.catch(() => undefined);
      return this.enqueue(childId, text, source, work);
    }
    const a = await this.resumeOnce(childId);
    // Closing: `disposeAll` waited for this resume and releases it.
    this.refuseIfClosing(childId);
    if (work.signal?.aborted) this.keepPaused(a);
    this.refuseIfCancelled(childId, work);
    const messageId = await this.accept(a, text, source, work);
    return { messageId, path: work.halted ? 'kept' : 'cold-resume' };
  }

  /**
   * The one cold resume of a released child, held in `busy` while under way (`disposeAll` waits
   * for it). Returned as is, not through an async wrapper: the resuming caller's accept then runs
   * before a concurrent follow-up's that waits on `busy.catch()` (FIFO, cold-resume.test).
   */
  private resumeOnce(childId: string): Promise<Activation> {
    return this.holdBusy(childId, this.coldResume(childId));
  }

  /** `p` is the one resume or log write of `childId` until it settles (`busy`). */
  private holdBusy<T>(childId: string, p: Promise<T>): Promise<T> {
    this.busy.set(childId, p);
    void p.catch(() => undefined).finally(() => this.busy.delete(childId));
    return p;
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
    const live = this.activations.get(childId);
    if (live && !live.released) {
      // A Stop that overtook this wake (it waited for a resume below): the queue waits on.
      if (work.halted) return;
      clearTimeout(live.timer);
      live.timer = undefined;
      live.agent.resume();
      return;
    }
    const pending = this.busy.get(childId);
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
    const live = this.activations.get(id);
    if (live && !live.released) return live.agent.inject(text, source);
    const pending = this.busy.get(id);
    if (pending) {
      await pending.catch(() => undefined);
      return this.deliverToReleased(id, text, source, quiet, mode);
    }
    const { store } = this.rt;
    await this.holdBusy(
      id,
      (async () => {
        await new SessionWriter(await store.inspect(id), store).append({ type: 'user/message', text, source });
      })(),
    );
  }

  /**
   * A released continuable child resident again as itself (its descriptor's tools, role and
   * roots), running nothing: the caller of a human's task for that node (a placement). Its
   * queue stays as it was; with nothing to do it is released again after the delay.
   */
  async activate(childId: string): Promise<Agent> {
    this.refuseIfClosing(childId);
    const live = this.activations.get(childId);
    if (live && !live.released) return live.agent;
    const pending = this.busy.get(childId);
    if (pending) {
      await pending.catch(() => undefined);
      return this.activate(childId);
    }
    const a = await this.resumeOnce(childId);
    this.refuseIfClosing(childId);
    this.armReleaseIfSettled(a);
    return a.agent;
  }

  /** Rebuild a child from its own log (cold-resume.ts) and make it resident again. */
  private async coldResume(childId: string): Promise<Activation> {
    const built = await rebuildFromLog(this.rt, childId, (depth) => this.setDepth(childId, depth));
    const a = this.addActivation(childId, built.parentId, built.agent, built.release);
    a.resumed = true;
    return a;
  }

  /** Arm the release timer of a settled activation (no live children either); disarm it if it woke. */
  private armReleaseIfSettled(a: Activation): void {
    if (a.released) return;
    const settled = a.agent.isSettled && !this.ownsLive(a.id);
    if (!settled) {
      clearTimeout(a.timer);
      a.timer = undefined;
      return;
    }
    if (a.timer) return;
    a.timer = setTimeout(() => void this.release(a, true), this.rt.releaseDelayMs());
  }

  /** The session has resident children (continuable activations or one-shots). */
  ownsLive(id: string): boolean {
    return (this.owned.get(id)?.size ?? 0) > 0;
  }

  /** Keep the per-parent index `ownsLive` reads (every status question asks it: no scan of all children). */
  private own(parentId: string, id: string): void {
    const set = this.owned.get(parentId) ?? new Set<string>();
    set.add(id);
    this.owned.set(parentId, set);
  }

  private disown(parentId: string, id: string): void {
    const set = this.owned.get(parentId);
    if (!set?.delete(id)) return;
    if (set.size === 0) this.owned.delete(parentId);
  }

  /**
   * `notify`: true = the settlement notice goes to the parent (it wakes an idle one); 'quiet'
   * = the notice is recorded in the parent's history without waking it (the host is closing).
   */
  private async release(a: Activation, notify: boolean | 'quiet'): Promise<void> {
    if (a.released) return;
    if (notify === true && !(a.agent.isSettled && !this.ownsLive(a.id))) {
      a.timer = undefined;
      return; // woke up during the delay
    }
    a.released = true;
    clearTimeout(a.timer);
    a.timer = undefined;
    a.offIdle();
    this.activations.delete(a.id);
    this.disown(a.parentId, a.id);
    a.release();
    await a.agent.dispose();
    // A cold resume that ran no turn (a Stop or an interrupted sender overtook its message,
    // decision 0100) has nothing to settle: its parent heard of its last work already.
    if (notify && !(a.resumed && !a.agent.lastTurn)) {
      // Exactly once per Activation: the runtime's fact, distinct from the child's own reports.
      const stopReason = a.agent.lastTurn?.stopReason ?? a.lastStop ?? 'completed';
      const text = lastTurnText(a.agent.session.events);
      const label = (descriptorOf(a.agent.session.header, a.agent.session.events)?.label ?? '') || a.id;
      // A refused action is part of the outcome: the parent must not read "completed" as "done as asked".
      const refused = refusedActions(a.agent.session.events, Math.max(a.fromSeq, a.agent.session.header.seedLength ?? 0));
      const head = `[subagent ${label} settled: ${stopReason}${refused.length ? ` · ${refused.length} refused` : ''}]`;
      // A budget stop says which budget and how to go on: the parent cannot raise it, a human can.
      const budgetLine = stopReason === 'budget' ? `Stopped by its budget: ${a.agent.lastTurn?.error ?? 'the next request did not fit what was left'}` : '';
      const body = [budgetLine, refusalSentence(refused), text].filter(Boolean).join('\n');
      await this.rt
        .deliver(
          a.parentId,
          `${head}\n${body}`,
          { kind: 'subagent-settled', fromSession: a.id, stopReason, ...(refused.length ? { refused: refused.length } : {}) },
          notify === 'quiet',
        )
        .catch(() => undefined);
    }
    this.recheckParent(a.parentId);
    this.notifyQuiet();
  }

  private recheckParent(parentId: string): void {
    const p = this.activations.get(parentId);
    if (p) this.armReleaseIfSettled(p);
  }

  /** Dispose a session's live children (and theirs) without notices: the owner is going away. */
  private async disposeOwned(id: string): Promise<void> {
    for (const c of [...this.activations.values()]) {
      if (c.parentId !== id) continue;
      await this.disposeOwned(c.id);
      await this.release(c, false);
    }
    for (const o of [...this.oneShots.values()]) if (o.parentId === id) await this.disposeOneShot(o.id);
  }

  /** Release a child that is being deleted: no settlement notice, its own children first. */
  async forget(id: string): Promise<void> {
    await this.disposeOwned(id);
    const a = this.activations.get(id);
    if (a) await this.release(a, false);
    if (this.oneShots.has(id)) await this.disposeOneShot(id);
    this.depths.delete(id);
  }

  /**
   * The host is closing (a window reload). Every continuable child is released deepest first
   * and its parent gets its settlement notice as history (nothing wakes: the process is going).
   */
  async disposeAll(): Promise<void> {
    // From here a follow-up or wake is refused, and a runtime message is history (decision
    // 0100); a cold resume or log write under way lands first, so its activation is released
    // below (never left behind, resident after the close) and its message written before the store closes.
    this.closing = true;
    await this.drain();
    const depth = (a: Activation) => a.id.split('.').length;
    for (const a of [...this.activations.values()].sort((x, y) => depth(y) - depth(x))) await this.release(a, 'quiet');
    for (const o of [...this.oneShots.values()]) await this.disposeOneShot(o.id);
    await this.drain();
  }

  /** Wait until no cold resume or log write is under way. */
  private async drain(): Promise<void> {
    while (this.busy.size > 0) await Promise.allSettled([...this.busy.values()]);
  }

  whenQuiet(): Promise<void> {
    if (this.quiet()) return Promise.resolve();
    return new Promise((resolve) => {
      const fn = () => {
        if (!this.quiet()) return;
        this.quietWaiters.delete(fn);
        resolve();
      };
      this.quietWaiters.add(fn);
    });
  }

  private quiet(): boolean {
    return this.activations.size === 0 && this.background === 0 && [...this.oneShots.values()].every((o) => o.agent.isSettled);
  }

  private notifyQuiet(): void {
    for (const fn of [...this.quietWaiters]) fn();
  }
}
