import type { Agent } from '../agent/agent';
import type { ApprovalPolicy, MessageSource, SandboxMode, StopReason } from '../session/events';
import { descriptorOf, lastTurnText } from '../session/folds';
import { refusalSentence, refusedActions } from '../session/refusals';
import { type ResumePort, rebuildFromLog } from './cold-resume';
import { Inbound } from './inbound';
import type { PolicyNow } from './policy-snapshot';
import type { FollowupPath } from './types';
import type { Work } from './underway';

/** What residency needs of its runtime (handed in, so neither file imports the other). */
export interface ResidencyPort extends ResumePort {
  /** Read each time an Activation settles: a settings change reaches the next release. */
  releaseDelayMs: () => number;
  deliver(parentId: string, text: string, source: MessageSource, quiet: boolean): Promise<void>;
  /** The policy a resident session runs under now (a message's sender); undefined when not resident. */
  policyOf(id: string): PolicyNow | undefined;
  defaults(): { sandbox?: SandboxMode; approval: ApprovalPolicy };
  /** Why a child can no longer work in its worktree, once a change of it ended (`inbound.ts`); absent: not asked. */
  worktreeClosed?(childId: string, stopped: AbortSignal): Promise<string | undefined>;
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
 * exactly one settlement notice. The session stays; a follow-up cold-resumes it (the ways in,
 * resident or released, are `inbound.ts`'s).
 */
export class Residency {
  private readonly activations = new Map<string, Activation>();
  private readonly oneShots = new Map<string, OneShot>();
  /** Per parent, its resident children: activations not released, and one-shots (`ownsLive`). */
  private readonly owned = new Map<string, Set<string>>();
  private readonly depths = new Map<string, number>();
  /** Follow-ups, wakes, runtime messages and activations on their way in; closed by `disposeAll` (decision 0100). */
  private readonly inbound: Inbound<Activation>;
  private background = 0;
  private readonly quietWaiters = new Set<() => void>();

  constructor(private readonly rt: ResidencyPort) {
    this.inbound = new Inbound<Activation>({
      store: rt.store,
      isOneShot: (id) => this.oneShots.has(id),
      live: (id) => {
        const a = this.activations.get(id);
        return a && !a.released ? a : undefined;
      },
      disarm: (a) => {
        clearTimeout(a.timer);
        a.timer = undefined;
      },
      armReleaseIfSettled: (a) => this.armReleaseIfSettled(a),
      coldResume: (id) => this.coldResume(id),
      policyOf: (id) => rt.policyOf(id),
      defaults: () => rt.defaults(),
      ...(rt.worktreeClosed ? { worktreeClosed: (id: string, stopped: AbortSignal) => rt.worktreeClosed!(id, stopped) } : {}),
    });
  }

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
    // As an Activation's release: out of the resident map, its last writes perhaps not yet durable;
    // whoever writes its log next waits for them at its log's gate (decision 0129).
    await this.rt.store.logGate.hold(id, o.agent.dispose());
    this.recheckParent(o.parentId);
    this.notifyQuiet();
  }

  /** A follow-up to a continuable child (inbound.ts): its inbox, a wake, or a cold resume. */
  followup(callerId: string | null, childId: string, text: string, signal?: AbortSignal, within?: Work): Promise<{ messageId: string; path: FollowupPath }> {
    return this.inbound.followup(callerId, childId, text, signal, within);
  }

  /** A Stop of these sessions: what is under way to them lands paused (inbound.ts, decision 0100). */
  halt(ids: readonly string[]): void {
    this.inbound.halt(ids);
  }

  /** Runs `fn` as work under way to `id` (inbound.ts): a Stop of `id`'s subtree marks it halted. */
  under<T>(id: string, fn: (work: Work) => Promise<T>): Promise<T> {
    return this.inbound.under(id, fn);
  }

  /** "Send now" for a continuable child's kept queue (inbound.ts). */
  wake(childId: string): Promise<void> {
    return this.inbound.wake(childId);
  }

  /** A runtime message to a subagent that is not resident (inbound.ts). */
  deliverToReleased(id: string, text: string, source: MessageSource, quiet: boolean, mode: 'one-shot' | 'continuable'): Promise<void> {
    return this.inbound.deliverToReleased(id, text, source, quiet, mode);
  }

  /** A released continuable child resident again as itself, running nothing (inbound.ts). */
  activate(childId: string): Promise<Agent> {
    return this.inbound.activate(childId);
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
    // No longer resident, its last writes perhaps not yet durable: whoever writes its log next (a
    // resume, a message, a rewind's record) waits for them at its log's gate (decision 0129).
    await this.rt.store.logGate.hold(a.id, a.agent.dispose());
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
    this.inbound.close();
    await this.inbound.drain();
    const depth = (a: Activation) => a.id.split('.').length;
    for (const a of [...this.activations.values()].sort((x, y) => depth(y) - depth(x))) await this.release(a, 'quiet');
    for (const o of [...this.oneShots.values()]) await this.disposeOneShot(o.id);
    await this.inbound.drain();
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
