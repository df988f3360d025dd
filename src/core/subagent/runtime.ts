import { randomUUID } from 'node:crypto';
import type { Agent } from '../agent/agent';
import { SessionWriter } from '../agent/session-writer';
import type { PriceBook } from '../cost/prices';
import type { Spend } from '../cost/spend';
import type { LiveWhat } from '../live/changes';
import type { SessionLive } from '../live/state';
import type { ApprovalPort } from '../policy/approval';
import type { ScopeRegistry } from '../scope/registry';
import type { Budget } from '../session/budget';
import type { MessageSource, SandboxMode, SessionHeader } from '../session/events';
import { descriptorOf, lastTurnText } from '../session/folds';
import { headerFrom } from '../session/fork';
import { Session } from '../session/session';
import type { SessionSummary } from '../session/summary';
import type { Store } from '../store/store';
import type { Tool } from '../tools/tool';
import { type AgentLookup, narrowest, resolveAgentRequest } from './agent-request';
import { checkStart } from './checks';
import { ChildIds } from './child-ids';
import { type AgentFactory, type ChildComposition, delegationNotice, ownScopeOf } from './composition';
import { escalatingPort } from './escalate';
import { DEFAULT_MAX_CONCURRENT_CHILDREN, FanoutLimiter } from './fanout';
import { forkProvider } from './fork-provider';
import { checkIsolation, isolationOf } from './isolation';
import { MirrorRegistry } from './mirrors';
import { placedProviderName } from './placed';
import { capturePolicy, captureToolCeiling, narrowFilter } from './policy-snapshot';
import { Residency } from './residency';
import { spawnProvider } from './spawn-provider';
import type { SubagentControl } from './surface';
import { createReportTool } from './tools/report-tool';
import { createSubmitResultTool } from './tools/submit-result-tool';
import {
  type ContinuableStart,
  type OneShotResult,
  type StartOptions,
  SubagentError,
  type SubagentProvider,
  type SubagentRequest,
  type SubagentRun,
  type WorktreePort,
} from './types';

export interface RuntimeDeps {
  store: Store;
  tools: ScopeRegistry<Tool>;
  build: AgentFactory;
  /** The resident agent of a session, if any (the caller of a tool is always resident). */
  resident(id: string): Agent | undefined;
  /** The resident agent, or a cold resume of a root session (settlement notices wake parents). */
  resolve(id: string): Promise<Agent>;
  /** The resident agent's session, else the stored one read from the store. */
  read(id: string): Promise<Session>;
  /** The deployment's deepest delegation; read at each start, so a settings change reaches the next child. */
  maxDepth: () => number;
  /** The deployment has a human approval service (a port). */
  approvalPort?: ApprovalPort;
  /** The deployment's approval policy (what a session without an override runs under); read at each child's start. */
  defaultApproval: () => 'ask' | 'never';
  /**
   * What a delegated child does with requests needing approval: refuse (default) or ask the
   * human. Read when a child starts or resumes, so a settings change reaches the next one.
   */
  childApproval: () => 'never' | 'escalate';
  /** How long a settled Activation stays resident before it is released; read each time one settles. */
  releaseDelayMs: () => number;
  /** Children running at once, harness-wide (the rest queue); default 8. */
  maxConcurrentChildren?: number;
  escalateTimeoutMs?: number;
  providers?: SubagentProvider[];
  /** Throws (a `BudgetInputError`) when a child's budget is more than the parent has left (decision 0034). */
  checkChildBudget?: (parentId: string, budget: Budget) => void;
  /** Prices for the cost `list_agents` shows (absent: tokens only). */
  prices?: () => PriceBook;
  /** What a budgeted subtree has spent, from the budget guard (absent: not budgeted). */
  budgetSpent?: (id: string) => Spend | undefined;
  /** Live state the log does not show moved (the harness's change stream, decision 0054); must not throw. */
  report?: (id: string, what: LiveWhat) => void;
  /** The one live-state assembler (`Harness.liveOf`), for `list_agents`; absent: what the runtime knows alone. */
  liveOf?: (id: string) => SessionLive;
  /** Agents defined in files (decision 0056); absent: a request naming one fails with UNKNOWN_AGENT. */
  agents?: AgentLookup;
  /** The deployment's sandbox (what a session without an override runs under); read at each start. */
  defaultSandbox?: () => SandboxMode;
  /**
   * Asked before a child is created, after every other check (Claude Code's `SubagentStart`
   * hook): a returned reason vetoes the start (`HOOK_BLOCKED`, nothing is created); undefined
   * instead of a promise means no check applies (the start goes on without an await). Contract:
   * must not throw (a throw or a rejection vetoes: fail closed).
   */
  beforeStart?: (c: ChildStart) => Promise<string | undefined> | undefined;
  /** Makes a child's own git worktree (`isolation: 'worktree'`, decision 0060); absent: such a start is refused. */
  worktrees?: WorktreePort;
}

/** A child about to start, as a `beforeStart` check sees it. */
export interface ChildStart {
  parentId: string;
  depth: number;
  provider: string;
  mode: 'one-shot' | 'continuable';
  label?: string;
  prompt: string;
}

export type Mode = 'one-shot' | 'continuable';

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
  /** A remote program's own sub-sessions shown in the tree, and whether they work now (decision 0041). */
  readonly mirrors: MirrorRegistry;

  constructor(private readonly deps: RuntimeDeps) {
    this.providers = new Map((deps.providers ?? [spawnProvider, forkProvider]).map((p) => [p.name, p]));
    this.residency = new Residency({
      store: deps.store,
      build: deps.build,
      childApproval: deps.childApproval,
      releaseDelayMs: deps.releaseDelayMs,
      composition: (header, request, escalate, roots) => this.composition(header, request, escalate, roots),
      registerLocalTools: (childId, mode, request) => this.registerLocalTools(childId, mode, request),
      deliver: (parentId, text, source, quiet) => this.deliver(parentId, text, source, quiet),
    });
    const report = deps.report ?? (() => undefined);
    this.fanout = new FanoutLimiter(deps.maxConcurrentChildren ?? DEFAULT_MAX_CONCURRENT_CHILDREN, (id) => report(id, 'queued'));
    this.mirrors = new MirrorRegistry((id) => report(id, 'mirror'));
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
    const a = this.resident(id);
    return (!!a && !a.isDisposed && a.activity === 'running') || this.mirrors.isRunning(id);
  }
  awaitsApproval(id: string): boolean {
    const a = this.resident(id);
    return (!!a && !a.isDisposed && a.awaitingApproval) || this.mirrors.awaitingApproval(id);
  }
  /**
   * A session's live state (decision 0054): the harness's one assembler when wired (it adds
   * goals and workflows to `ownLive`), else what the runtime knows alone.
   */
  liveOf(id: string): SessionLive {
    return this.deps.liveOf?.(id) ?? this.ownLive(id);
  }
  /** What the runtime knows of a session now: residency, slots, approvals, mirrors. */
  ownLive(id: string): SessionLive {
    const a = this.resident(id);
    return {
      running: this.isRunning(id),
      queued: this.fanout.isQueued(id),
      awaitingApproval: this.awaitsApproval(id),
      waitingForChildren: this.hasLiveChildren(id),
      resident: !!a && !a.isDisposed,
      goalArmed: false,
      workflows: [],
      mirrorRunning: this.mirrors.isRunning(id),
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

  /** A session is being deleted: its resident children go without settlement notices, its own residency with them. */
  forget(id: string): Promise<void> {
    return this.residency.forget(id);
  }

  /** One-shot: the child runs one turn; `result` never rejects for a model failure; the caller disposes. */
  async start(caller: Agent, providerName: string, request: SubagentRequest, opts: StartOptions = {}): Promise<SubagentRun> {
    let output: unknown;
    const created = await this.create(caller, providerName, request, 'one-shot', opts.signal, (v) => (output = v));
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
    // ends `interrupted` before its first model request.
    if (opts.signal?.aborted) void agent.cancel('interrupted', { keepInbox: false });
    return { id: childId, localAgent: agent, result, dispose: () => this.residency.disposeOneShot(childId) };
  }

  /** A `beforeStart` veto (or its failure: fail closed) as the refusal the delegation tools show. */
  private vetoCheck(c: ChildStart): Promise<void> | undefined {
    let asked: Promise<string | undefined> | undefined;
    try {
      asked = this.deps.beforeStart?.(c);
    } catch (err) {
      asked = Promise.reject(err);
    }
    return asked && this.vetoed(asked);
  }

  private async vetoed(asked: Promise<string | undefined>): Promise<void> {
    let why: string | undefined;
    try {
      why = await asked;
    } catch (err) {
      why = `the check before it failed (${err instanceof Error ? err.message : String(err)})`;
    }
    if (why)
      throw new SubagentError(
        'HOOK_BLOCKED',
        `A SubagentStart hook refused to start this subagent: ${why}. Nothing was started; do the work yourself or change the request.`,
      );
  }

  /** Continuable: resolves once the first message is durably in the child's inbox. */
  async startContinuable(caller: Agent, providerName: string, request: SubagentRequest, opts: StartOptions = {}): Promise<ContinuableStart> {
    const created = await this.create(caller, providerName, request, 'continuable', opts.signal);
    this.residency.addActivation(created.childId, caller.id, created.agent, created.release);
    created.agent.pump();
    if (opts.signal?.aborted) void created.agent.cancel('interrupted', { keepInbox: true });
    return { childId: created.childId, messageId: created.messageId };
  }

  /**
   * Build and publish a child. Checks run first, and the parent's policy is captured
   * before the first await; the session is published (header, seed, setup, first inbox
   * message) in one durable write, so a failure before that leaves nothing behind.
   */
  private async create(
    caller: Agent,
    providerName: string,
    asked: SubagentRequest,
    mode: Mode,
    signal: AbortSignal | undefined,
    onOutput?: (v: unknown) => void,
  ) {
    if (this.deps.resident(caller.id) !== caller || caller.isDisposed)
      throw new SubagentError('STALE_HANDLE', `Agent ${caller.id} is no longer live; it cannot start subagents.`);
    const parent = caller.session;
    const snapshot = capturePolicy(parent); // synchronous: before any await
    const ceiling = captureToolCeiling(parent);
    const parentDepth = Math.max(parent.header.delegationDepth ?? 0, this.residency.depthOf(parent.id));
    // A placement (the request's, else its agent file's) names the provider the child runs on (decision 0074).
    const placement = asked.placement ?? (asked.agent !== undefined ? this.deps.agents?.agent(asked.agent)?.placement : undefined);
    const runsOn = placedProviderName(this.providers, providerName, placement);
    const { provider, depth } = checkStart(this.providers, runsOn, asked, parentDepth, this.deps.maxDepth(), mode);
    // A placed child always works in its own worktree: where its collected changes land for review.
    if (provider.placement) asked = { ...asked, isolation: 'worktree' };
    // An agent file is read now, synchronously with the snapshot: its tools never exceed the caller's.
    if (asked.agent !== undefined) asked = resolveAgentRequest(asked, this.deps.agents, caller.toolNames());
    // A requested sandbox only narrows: it is pinned when narrower than the caller's own (its
    // override, else the deployment's; unknown counts as read-only), else the child inherits as any does.
    const callerSandbox = snapshot.sandbox ?? this.deps.defaultSandbox?.() ?? 'read-only';
    const pinned = asked.sandbox && narrowest(asked.sandbox, callerSandbox) !== callerSandbox ? asked.sandbox : snapshot.sandbox;
    const childSandbox = checkIsolation(asked.isolation, provider, !!this.deps.worktrees, pinned, callerSandbox);
    const callerRoots = caller.roots;
    // An in-process child runs on its parent's model (and the deployment's client) unless the
    // request names one: recorded in its descriptor, so a cold resume and its own forks (whose
    // request head must equal its own, model included, for the prefix cache) keep it. A remote
    // child runs what its program is told (its setting), or the program's own default — then
    // the descriptor gets the model once the program says which (seed 000 §六, decision 0052).
    const model = asked.model ?? (provider.remote ? provider.remote.model?.() : caller.modelName);
    const modelProvider = provider.remote ? (provider.remote.modelProvider ?? provider.remote.program) : caller.modelProvider;
    const toolFilter = provider.capabilities.toolFilter ? narrowFilter(asked.toolFilter, ceiling) : asked.toolFilter;
    const request: SubagentRequest = { ...asked, ...(model ? { model } : {}), ...(toolFilter ? { toolFilter } : {}) };
    if (request.budget) this.deps.checkChildBudget?.(parent.id, request.budget);
    // No await unless a check applies: without hooks the start runs exactly as before.
    const veto = this.vetoCheck({ parentId: parent.id, depth, provider: provider.name, mode, label: request.label, prompt: request.prompt });
    if (veto) await veto;
    // Reachable, at this Arbor's version: where it runs and the round trip go in its descriptor.
    const placed = provider.placement ? await provider.placement.check(signal) : undefined;
    const { seed } = provider.prepare(parent);

    const childId = this.childIds.draw(parent.id);
    const header = headerFrom(parent.header, {
      id: childId,
      origin: seed ? 'fork' : 'subagent',
      parentSession: parent.id,
      delegationDepth: depth,
      title: request.label,
    });
    const session = seed ? Session.fromSeed(header, seed) : Session.create(header);
    const writer = new SessionWriter(session, this.deps.store, { published: false });
    // Its own worktree (made now, outside any sandbox), or the one its caller works in: never wider.
    // The caller's summary says whether it works in a worktree: its log is read only then.
    const callerWorks = this.deps.store.summaryRef(parent.id)?.worktree !== undefined;
    const isolation = await isolationOf({
      caller: callerWorks ? parent : undefined,
      callerRoots,
      childId,
      label: request.label,
      isolated: request.isolation === 'worktree',
      worktrees: this.deps.worktrees,
    });
    // (Setup appends go to the unpublished writer's memory: nothing is on disk until `publish`.)
    // Unpublished setup, after any seed: these are the child's own (live) facts.
    // Approval never widens: a parent that may not ask has children that may not either.
    const parentMayAsk = (snapshot.approval ?? this.deps.defaultApproval()) === 'ask';
    const escalate = this.deps.childApproval() === 'escalate' && this.deps.approvalPort !== undefined && parentMayAsk;
    if (childSandbox) await writer.append({ type: 'sandbox/mode', mode: childSandbox, source: 'delegation' });
    const approval = escalate ? 'ask' : this.deps.approvalPort ? 'never' : snapshot.approval;
    if (approval) await writer.append({ type: 'approval/policy', policy: approval, source: 'delegation' });
    await writer.append({
      type: 'subagent/descriptor',
      version: 2,
      mode,
      provider: provider.name,
      ...(request.label ? { label: request.label } : {}),
      modelProvider,
      ...(request.model ? { model: request.model } : {}),
      ...(request.persona ? { persona: request.persona.text, ...(request.persona.complete ? { personaComplete: true } : {}) } : {}),
      ...(request.toolFilter ? { toolFilter: [...request.toolFilter] } : {}),
      ...(request.agent ? { agent: request.agent } : {}),
      ...(request.workflow ? { workflow: { ...request.workflow } } : {}),
      ...(request.isolation ? { isolation: request.isolation } : {}),
      ...(placed ? { placement: { ...placed } } : {}),
    });
    if (isolation.event) await writer.append(isolation.event);
    // The child's budget is its own fact, after any seed: a fork's seed never hands one on.
    if (request.budget) await writer.append({ type: 'budget/set', budget: { ...request.budget }, source: 'delegation' });
    const refused = approval === 'never';
    await writer.append({
      type: 'user/message',
      text: delegationNotice({ parentId: parent.id, depth, continuable: mode === 'continuable', approvalRefused: refused }),
      source: { kind: 'delegation', runtime: true },
    });
    const messageId = randomUUID();
    await writer.append({ type: 'inbox/accepted', messageId, text: request.prompt, source: { kind: 'delegation', fromSession: parent.id } });
    // Remote seam (issue 13): a remote provider's driver runs the child's turns.
    const comp = { ...this.composition(header, request, escalate, isolation.roots), ...(provider.remote ? { remote: provider.remote } : {}) };
    const unregister = this.registerLocalTools(childId, mode, request, onOutput);
    const built = this.deps.build(writer, comp);
    try {
      // Seed 002: an interrupted caller publishes nothing (checked before the durable write;
      // an interrupt during it is handled by the caller, which cancels the published child).
      if (signal?.aborted) throw new SubagentError('CANCELLED', 'The delegating turn was interrupted before the subagent was created; nothing was started.');
      await writer.publish();
    } catch (err) {
      built.release();
      unregister();
      await isolation.undo();
      throw err;
    } finally {
      this.childIds.settled(childId);
    }
    this.residency.setDepth(childId, depth);
    return {
      childId,
      messageId,
      agent: built.agent,
      release: () => {
        built.release();
        unregister();
      },
    };
  }

  /** The composition of a child, from its request (start) or its own log (cold resume). */
  private composition(
    header: SessionHeader,
    request: Pick<SubagentRequest, 'toolFilter' | 'persona' | 'model' | 'maxTokens'> & { provider?: string },
    escalate: boolean,
    roots?: readonly string[],
  ): ChildComposition {
    const remote = request.provider !== undefined ? this.providers.get(request.provider)?.remote : undefined;
    return {
      ...(remote ? { remote } : {}),
      ...(roots ? { roots } : {}),
      ...(header.agentPreset ? { preset: header.agentPreset } : {}),
      ownScope: ownScopeOf(header.id),
      admission: this.fanout.admission(header.id),
      ...(request.toolFilter ? { toolFilter: request.toolFilter } : {}),
      ...(request.persona ? { persona: request.persona } : {}),
      ...(request.model ? { model: request.model } : {}),
      ...(request.maxTokens ? { maxTokens: request.maxTokens } : {}),
      // From the header, not the store: at start the child is not published yet.
      ...(escalate && this.deps.approvalPort
        ? {
            approval: escalatingPort(
              this.deps.approvalPort,
              [header.id, ...(header.parentSession ? this.lineage(header.parentSession) : [])],
              this.deps.escalateTimeoutMs ?? 300_000,
            ),
          }
        : {}),
    };
  }

  /** Child-local tools live in the child's own scope: never removed by its filter, gone with it. */
  private registerLocalTools(childId: string, mode: Mode, request: Pick<SubagentRequest, 'outputSchema'>, onOutput?: (v: unknown) => void): () => void {
    const scope = ownScopeOf(childId);
    if (mode === 'continuable') this.deps.tools.register(createReportTool(this), scope);
    if (request.outputSchema)
      this.deps.tools.register(
        createSubmitResultTool(request.outputSchema, (v) => onOutput?.(v)),
        scope,
      );
    return () => this.deps.tools.dropScope(scope);
  }

  /** The session and its ancestors, nearest first (from durable headers). */
  lineage(id: string): string[] {
    const out: string[] = [];
    for (let cur: string | undefined = id; cur && out.length < 1000; cur = this.deps.store.header(cur)?.parentSession) out.push(cur);
    return out;
  }

  /** Follow-up to a continuable child: inbox, wake, or cold resume. `caller` null = the human. */
  followup(callerId: string | null, childId: string, text: string) {
    return this.residency.followup(callerId, childId, text);
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
