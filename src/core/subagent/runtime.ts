import type { Agent } from '../agent/agent';
import type { PriceBook } from '../cost/prices';
import type { Spend } from '../cost/spend';
import type { SessionLive } from '../live/state';
import type { Budget } from '../session/budget';
import type { MessageSource, SessionHeader } from '../session/events';
import { descriptorOf, lastTurnText } from '../session/folds';
import type { SessionSummary } from '../session/summary';
import { childComposition, registerLocalTools } from './child-compose';
import { ChildIds } from './child-ids';
import { type CreateContext, createChild } from './create-child';
import { DEFAULT_MAX_CONCURRENT_CHILDREN, FanoutLimiter } from './fanout';
import { forkProvider } from './fork-provider';
import { Gates } from './gates';
import { closedWorktreeOf } from './isolation';
import { type MirrorLive, MirrorRegistry } from './mirrors';
import { policyNow } from './policy-snapshot';
import { Residency } from './residency';
import type { Mode, RuntimeDeps } from './runtime-deps';
import { spawnProvider } from './spawn-provider';
import type { SubagentControl } from './surface';
import type { ContinuableStart, OneShotResult, StartOptions, SubagentProvider, SubagentRequest, SubagentRun, WorktreePort } from './types';
import type { Work } from './underway';

/**
 * The in-process subagent runtime (DESIGN §7): starts children, owns their residency. Its
 * dependencies and residency are its own: tools, workflows, the harness and hosts use the
 * public methods (`SubagentControl` and the few below it).
 */
export class SubagentRuntime implements SubagentControl {
  private readonly providers: Map<string, SubagentProvider>;
  private readonly residency: Residency;
  /** Child ids: lineage + six hex digits, never one already taken (`child-ids.ts`). */
  private readonly childIds = new ChildIds((id) => this.deps.store.header(id) !== undefined);
  /** The bound on children running at once; `fanout.limit` follows the setting. */
  readonly fanout: FanoutLimiter;
  /** Children waiting at their caller's own gate (a workflow run's slots), shown queued. */
  private readonly gates: Gates;
  /** A remote program's own sub-sessions shown in the tree, and whether they work now (decision 0041). */
  readonly mirrors: MirrorRegistry;
  /** What creating and composing a child reads of this runtime (`create-child.ts`, `child-compose.ts`). */
  private readonly child: CreateContext;

  constructor(private readonly deps: RuntimeDeps) {
    this.providers = new Map((deps.providers ?? [spawnProvider, forkProvider]).map((p) => [p.name, p]));
    this.residency = new Residency({
      store: deps.store,
      build: deps.build,
      childApproval: deps.childApproval,
      releaseDelayMs: deps.releaseDelayMs,
      composition: (header, request, escalate, roots) => childComposition(this.child, header, request, escalate, roots),
      registerLocalTools: (childId, mode, request) => registerLocalTools(this.child, childId, mode, request),
      deliver: (parentId, text, source, quiet) => this.deliver(parentId, text, source, quiet),
      policyOf: (id) => {
        const a = deps.resident(id);
        return a ? policyNow(a.session.events, { sandbox: deps.defaultSandbox?.(), approval: deps.defaultApproval() }) : undefined;
      },
      defaults: () => ({ sandbox: deps.defaultSandbox?.(), approval: deps.defaultApproval() }),
      worktreeClosed: (id, stopped) => closedWorktreeOf(deps.store, deps.worktrees?.gate, id, stopped),
      ...(deps.worktrees?.fill ? { fillWorktree: (dir: string) => (deps.worktrees as Required<WorktreePort>).fill(dir) } : {}),
    });
    const report = deps.report ?? (() => undefined);
    this.fanout = new FanoutLimiter(deps.maxConcurrentChildren ?? DEFAULT_MAX_CONCURRENT_CHILDREN, (id) => report(id, 'queued'));
    this.gates = new Gates((id) => report(id, 'queued'));
    this.mirrors = new MirrorRegistry((id) => report(id, 'mirror'));
    this.child = { deps, providers: this.providers, fanout: this.fanout, gates: this.gates, control: this, childIds: this.childIds, residency: this.residency };
  }

  /** Add a provider (a harness row's), or replace the one of the same name. */
  registerProvider(provider: SubagentProvider): void {
    this.providers.set(provider.name, provider);
  }

  /** The names of the providers a start may name. */
  get providerNames(): string[] {
    return [...this.providers.keys()];
  }

  resident(id: string): Agent | undefined {
    return this.deps.resident(id);
  }
  header(id: string): SessionHeader | undefined {
    return this.deps.store.header(id);
  }
  descendants(id: string): SessionHeader[] {
    return this.deps.store.descendants(id);
  }
  async readSummary(id: string): Promise<SessionSummary> {
    // Descendants share their caller's tree file, open already: checking that the log still
    // reads costs nothing, and a damaged one is said instead of its last known summary.
    await this.deps.store.length(id);
    return this.deps.store.summary(id);
  }
  isOneShot(id: string): boolean {
    return this.residency.isOneShot(id);
  }
  isRemote(id: string): boolean {
    const provider = this.deps.store.summaryRef(id)?.provider;
    return provider !== undefined && !!this.providers.get(provider)?.remote;
  }
  priceBook(): PriceBook | undefined {
    return this.deps.prices?.();
  }
  budgetState(id: string): { budget: Budget; spent: Spend } | undefined {
    const budget = this.deps.store.summaryRef(id)?.budget;
    const spent = budget ? this.deps.budgetSpent?.(id) : undefined;
    return budget && spent ? { budget, spent } : undefined;
  }
  isActive(id: string): boolean {
    return this.residency.isActive(id);
  }
  depthOf(id: string): number {
    return this.residency.depthOf(id);
  }
  hasLiveChildren(id: string): boolean {
    return this.residency.ownsLive(id) || this.mirrors.hasRunningChildren(id);
  }
  isRunning(id: string): boolean {
    return running(this.resident(id), this.mirrors.stateOf(id));
  }
  awaitsApproval(id: string): boolean {
    return awaitsApproval(this.resident(id), this.mirrors.stateOf(id));
  }
  /**
   * A session's live state (decision 0054): the harness's one assembler when wired (it adds
   * goals and workflows to `ownLive`), else what the runtime knows alone.
   */
  liveOf(id: string): SessionLive {
    return this.deps.liveOf?.(id) ?? this.ownLive(id);
  }
  /** What the runtime knows of a session now: residency, slots, approvals, mirrors (a fresh object each call: the harness completes it in place). */
  ownLive(id: string): SessionLive {
    // Every status question of every face asks this, per change it hears: the agent and the
    // mirror are looked up once here, not once per field (decision 0117).
    const a = this.resident(id);
    const mirror = this.mirrors.stateOf(id);
    return {
      running: running(a, mirror),
      queued: this.fanout.isQueued(id) || this.gates.isQueued(id),
      awaitingApproval: awaitsApproval(a, mirror),
      waitingForChildren: this.hasLiveChildren(id),
      resident: !!a && !a.isDisposed,
      goalArmed: false,
      workflows: [],
      mirrorRunning: mirror?.running ?? false,
    };
  }
  trackBackground<T>(p: Promise<T>): Promise<T> {
    return this.residency.trackBackground(p);
  }
  /** Counts for leak checks: resident children, armed release timers, pending background results. */
  stats(): { activations: number; oneShots: number; timers: number; background: number } {
    return this.residency.stats();
  }

  /**
   * "Send now" for a subagent's kept queue (after an interrupt): a resident one-shot resumes
   * its one turn; a continuable child resumes, or is cold-resumed from its log if released.
   */
  async wake(id: string): Promise<void> {
    const oneShot = this.residency.isOneShot(id) ? this.deps.resident(id) : undefined;
    if (oneShot) return oneShot.resume();
    return this.residency.wake(id);
  }

  /**
   * A subagent resident as itself, to act as a caller (a human's task on a placement for that
   * node): the resident agent, or a released continuable child cold-resumed from its own log,
   * running nothing. Never a root's composition (a one-shot at rest is refused: NOT_CONTINUABLE).
   */
  async activate(id: string): Promise<Agent> {
    return this.deps.resident(id) ?? (await this.residency.activate(id));
  }

  /** A session is being deleted: its resident children go without settlement notices, its own residency with them. */
  forget(id: string): Promise<void> {
    return this.residency.forget(id);
  }

  /** One-shot: the child runs one turn; `result` never rejects for a model failure; the caller disposes. */
  async start(caller: Agent, providerName: string, request: SubagentRequest, opts: StartOptions = {}): Promise<SubagentRun> {
    let output: unknown;
    const created = await createChild(this.child, caller, providerName, request, 'one-shot', opts.signal, (v) => (output = v), opts.gate);
    const { agent, childId } = created;
    const result = new Promise<OneShotResult>((resolve) => {
      const off = agent.onTurnEnd((r) => {
        off();
        resolve({
          childId,
          stopReason: r.stopReason,
          text: lastTurnText(agent.session.events),
          ...(output !== undefined ? { output } : {}),
          ...(r.error ? { error: r.error } : {}),
        });
      });
    });
    this.residency.addOneShot(childId, caller.id, created.release, agent);
    agent.pump();
    // The caller was interrupted while the child was being published: the child's one turn
    // ends before its first model request, `cancelled` when that is why the signal aborted (a
    // workflow run's end), else `interrupted`.
    if (opts.signal?.aborted) void agent.cancel(opts.signal.reason === 'cancelled' ? 'cancelled' : 'interrupted', { keepInbox: false });
    return { id: childId, localAgent: agent, result, dispose: () => this.residency.disposeOneShot(childId) };
  }

  /** Continuable: resolves once the first message is durably in the child's inbox. */
  async startContinuable(caller: Agent, providerName: string, request: SubagentRequest, opts: StartOptions = {}): Promise<ContinuableStart> {
    const created = await createChild(this.child, caller, providerName, request, 'continuable', opts.signal);
    this.residency.addActivation(created.childId, caller.id, created.agent, created.release);
    created.agent.pump();
    if (opts.signal?.aborted) void created.agent.cancel('interrupted', { keepInbox: true });
    return { childId: created.childId, messageId: created.messageId };
  }

  /** The session and its ancestors, nearest first (from durable headers). */
  lineage(id: string): string[] {
    const out: string[] = [];
    for (let cur: string | undefined = id; cur && out.length < 1000; cur = this.deps.store.header(cur)?.parentSession) out.push(cur);
    return out;
  }

  /**
   * Follow-up to a continuable child: inbox, wake, or cold resume. `caller` null = the human.
   * `within`: the caller's own work under way to the child (`under`), whose Stop this follow-up inherits.
   */
  followup(callerId: string | null, childId: string, text: string, signal?: AbortSignal, within?: Work) {
    return this.residency.followup(callerId, childId, text, signal, within);
  }

  /** A Stop of these sessions: messages and wakes under way to them land paused (decision 0100). */
  halt(ids: readonly string[]): void {
    this.residency.halt(ids);
  }

  /** Work under way to `id` from this call on (sessions it makes, e.g. Try N Ways'): a Stop of `id`'s subtree marks it halted (decision 0100). */
  under<T>(id: string, fn: (work: Work) => Promise<T>): Promise<T> {
    return this.residency.under(id, fn);
  }

  /** Deliver a message to a parent: a runtime notice that wakes it, or a quiet history entry. */
  async deliver(parentId: string, text: string, source: MessageSource, quiet = false): Promise<void> {
    // A released subagent parent (its log holds a descriptor) is reached through its own log
    // and composition, never reopened as a root.
    if (!this.deps.resident(parentId)) {
      const mode = await this.modeOf(parentId).catch(() => undefined);
      if (mode) return this.residency.deliverToReleased(parentId, text, source, quiet, mode);
    }
    // A resident one-shot takes no second turn: whatever reaches it (a grandchild's
    // settlement notice, a wakeup report) joins its history, at its running turn's next safe
    // point or now if it already answered.
    const oneShot = this.residency.isOneShot(parentId) ? this.deps.resident(parentId) : undefined;
    if (oneShot) return oneShot.inject(text, source);
    const parent = await this.deps.resolve(parentId);
    if (quiet) await parent.inject(text, source);
    else await parent.accept(text, source);
  }

  /** The descriptor mode of a stored child, if it has one. */
  async modeOf(childId: string): Promise<Mode | undefined> {
    const s = await this.deps.read(childId);
    return descriptorOf(s.header, s.events)?.mode;
  }

  /** Resolves when no child is resident and no background result is pending. */
  whenQuiet(): Promise<void> {
    return this.residency.whenQuiet();
  }

  async dispose(): Promise<void> {
    await this.residency.disposeAll();
  }
}

/** Running: its agent's turn (or a compaction the user asked for: a model request of its own, as a turn is), or the mirror it is. */
function running(a: Agent | undefined, mirror: Readonly<MirrorLive> | undefined): boolean {
  return (!!a && !a.isDisposed && (a.activity === 'running' || a.compactingAsked)) || (mirror?.running ?? false);
}

/** Asking a human: its agent, or the mirror it is while that runs. */
function awaitsApproval(a: Agent | undefined, mirror: Readonly<MirrorLive> | undefined): boolean {
  return (!!a && !a.isDisposed && a.awaitingApproval) || (!!mirror?.running && mirror.awaitingApproval);
}
