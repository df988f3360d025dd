import * as fs from 'node:fs';
import type { Agent } from './agent/agent';
import type { SessionWriter } from './agent/session-writer';
import type { Forgotten } from './checkpoint/forget';
import type { CheckpointService } from './checkpoint/service';
import type { ModelPrice } from './cost/prices';
import type { CostService } from './cost/service';
import type { GoalService } from './goal/service';
import type { BestOfService } from './harness/bestof/service';
import { clientFor } from './harness/client';
import { HarnessError } from './harness/errors';
import type { LiveHub } from './harness/live';
import { makeParts } from './harness/parts';
import type { RootSessions } from './harness/root-sessions';
import type { composeHooks } from './harness/rows';
import type { SessionsService } from './harness/sessions';
import type { HookService } from './hooks/service';
import type { LiveWhat, Observer } from './live/changes';
import type { SessionLive, SessionView } from './live/state';
import type { McpManager } from './mcp/manager';
import { ModelSwitch } from './model/switch';
import type { ApprovalGrant } from './policy/grants';
import { guardFolders } from './process/host-program';
import type { ProjectFiles } from './project/project-files';
import { type RecoveredWork, recoverWork } from './recovered-work';
import { recoverInterrupted } from './recovery';
import type { PromptSection } from './scope/prompt';
import type { ScopeRegistry } from './scope/registry';
import type { Budget } from './session/budget';
import type { ApprovalPolicy, SandboxMode } from './session/events';
import type { Session } from './session/session';
import type { SessionSummary } from './session/summary';
import { Store } from './store/store';
import type { SubagentRuntime } from './subagent/runtime';
import type { CommandSandbox } from './tools/sandbox/command-sandbox';
import type { SandboxStatus } from './tools/sandbox/detect';
import type { Tool } from './tools/tool';
import type { WorkflowWiring } from './workflow/wire';
import { worktreesDirOf } from './worktree/names';
import type { WorktreeService } from './worktree/service';

export type { HarnessConfig, HarnessDefaults, ModelConfig } from './harness/config';
export { DEFAULT_MAX_DEPTH } from './harness/config';
export { HarnessError, type HarnessErrorCode } from './harness/errors';
export { newSessionId } from './harness/root-sessions';
export type { Change, LiveWhat, Observer } from './live/changes';
export type { SessionLive, SessionView } from './live/state';

import type { HarnessConfig, HarnessDefaults, ModelConfig } from './harness/config';

/**
 * The composition root's façade: what hosts, faces and features call. Its parts are made and
 * wired in `harness/parts.ts` (services) and `harness/features.ts` (tool sets, prompt sections
 * and features — delegation, workflows, goals, a remote provider — as rows, each from its own
 * wiring file); session operations live in `harness/sessions.ts`, root conversations made
 * resident in `harness/root-sessions.ts`. Refusals are `HarnessError`s with a code.
 */
export class Harness {
  readonly tools: ScopeRegistry<Tool>;
  readonly prompts: ScopeRegistry<PromptSection>;
  /** The resident agents, roots and children. */
  private readonly agents: Map<string, Agent>;
  /** The one change stream (decision 0054): events of every writer, deltas, progress, live transitions. */
  private readonly live: LiveHub;
  /** The workspace folders' real paths (faces show paths relative to them). */
  readonly roots: readonly string[];
  readonly subagents: SubagentRuntime;
  /** Confines `run_command` in read-only and workspace-write. */
  readonly commandSandbox: CommandSandbox;
  readonly workflows: WorkflowWiring;
  /** Goals of root conversations (decision 0029): durable snapshots, in-memory activation, the round driver. */
  readonly goals: GoalService;
  /** Fork, delete, send, set policy, withdraw, grants, stop a subtree: reached only through the façade's methods. */
  private readonly sessions: SessionsService;
  private readonly hooks: ReturnType<typeof composeHooks>;
  /** Root conversations created, opened from their log, built over a writer. */
  private readonly rootSessions: RootSessions;
  /** Prices and subtree budgets (decisions 0033, 0034). */
  readonly cost: CostService;
  /** Project instructions and agents defined in files, as global prompt sections (decision 0056). */
  readonly project: ProjectFiles;
  /** Hooks from the settings files (decision 0057), when the deployment configured them. */
  readonly hookService?: HookService;
  /** MCP servers, their state and their `mcp__…` tools (decision 0055). */
  readonly mcp: McpManager;
  /** Checkpoints per node and rewind (issue 24, decision 0059): `plan`, `apply`, `planUndo`. */
  readonly checkpoints: CheckpointService;
  /** Children in their own git worktrees (decision 0060): list, diff, apply, discard, keep, orphans after a crash. */
  readonly worktrees: WorktreeService;
  /** "Try N ways" (decision 0061): N forks at one message, each in its own worktree; compare, apply one. */
  readonly bestOf: BestOfService;

  private constructor(
    readonly config: HarnessConfig,
    readonly store: Store,
    readonly model: ModelSwitch,
  ) {
    // No program Arbor runs by name (git, ssh, bwrap, a remote agent) comes from a folder its commands can write.
    guardFolders([...config.workspace, worktreesDirOf(config.storeDir)]);
    const p = makeParts(config, store, model, this);
    this.tools = p.tools;
    this.prompts = p.prompts;
    this.agents = p.agents;
    this.live = p.live;
    this.roots = p.roots;
    this.cost = p.cost;
    this.project = p.project;
    this.rootSessions = p.rootSessions;
    this.worktrees = p.worktrees;
    this.commandSandbox = p.commandSandbox;
    this.subagents = p.subagents;
    this.sessions = p.sessions;
    this.bestOf = p.bestOf;
    // The rows last: they reach this façade as they are wired (a row subscribing to `observe`).
    const f = p.wireRows();
    this.workflows = f.workflows;
    this.goals = f.goals;
    if (f.hookService) this.hookService = f.hookService;
    this.mcp = f.mcp;
    this.checkpoints = f.checkpoints;
    this.hooks = f.hooks;
  }

  static async open(config: HarnessConfig): Promise<Harness> {
    for (const w of config.workspace) {
      if (!fs.existsSync(w) || !fs.statSync(w).isDirectory())
        throw new HarnessError('NO_WORKSPACE', `Workspace folder ${w} does not exist; pass an existing folder with --workspace.`);
    }
    const store = await Store.open(config.storeDir, config.store);
    const h = new Harness(config, store, new ModelSwitch(clientFor(config.model)));
    // After a clean close no stored turn is open; only after a crash is every log read.
    if (!store.closedCleanly) h.recovered = await recoverInterrupted(store);
    // Work a crash cut part way (a rewind, a writing tool call, a worktree apply) is recorded or finished now.
    h.recoveredWork = await recoverWork(h);
    await store.markRunning();
    return h;
  }

  /** Whether commands can run in an OS sandbox here (probed once per process), for hosts to show and warn. */
  sandboxStatus(): Promise<SandboxStatus> {
    return this.commandSandbox.status();
  }

  /** Sessions whose turn a crash left open, closed at this open as `interrupted`. */
  recovered: string[] = [];
  /** What this open finished or recorded of work a crash cut: rewinds, writing tool calls, worktree applies (decisions 0059, 0060). */
  recoveredWork: RecoveredWork = { rewinds: [], calls: [], applies: [] };
  /** What the last deletion's sweep of checkpoint blobs removed (or could not). */
  forgotten: Forgotten | undefined;
  private forgetting: Promise<void> = Promise.resolve();

  /** The sweeps of the deletions so far have ended: what the last one removed. */
  async whenForgotten(): Promise<Forgotten | undefined> {
    await this.forgetting;
    return this.forgotten;
  }

  /**
   * A new key, endpoint or model name (the user changed a setting): every agent, running or
   * not, uses it from its next request; nothing is closed and no turn is cut.
   */
  setModel(model: ModelConfig): void {
    this.model.set(clientFor(model));
    this.config.model = model;
  }

  /**
   * New deployment defaults (settings edited, trust granted): agents read them at their next
   * tool call, confined commands at their next command, children (depth limit, approval,
   * release delay) at their next start or resume, goals at their next set; sessions with their
   * own policy keep it.
   */
  setDefaults(d: HarnessDefaults): void {
    if (d.sandbox) this.config.sandbox = d.sandbox;
    if (d.approval) this.config.approval = d.approval;
    if (d.ceiling === null) delete this.config.ceiling;
    else if (d.ceiling) this.config.ceiling = { ...d.ceiling };
    if (d.childApproval) this.config.childApproval = d.childApproval;
    if (d.maxDepth !== undefined) this.config.maxDepth = d.maxDepth;
    if (d.releaseDelayMs !== undefined) this.config.releaseDelayMs = d.releaseDelayMs;
    if (d.network !== undefined) this.config.commands = { ...this.config.commands, network: d.network };
    if (d.maxConcurrentChildren !== undefined) this.subagents.fanout.limit = d.maxConcurrentChildren;
    if (d.goalMaxRounds !== undefined) this.config.goalMaxRounds = this.goals.defaultMaxRounds = d.goalMaxRounds;
    if (d.workflow) this.workflows.engine.setDeployment(d.workflow);
  }

  /**
   * The one ordered stream of changes (decision 0054): every event any writer stages, of every
   * session, resident or not; streamed deltas and tool progress; and live transitions the log
   * does not show. A view folds events and, for an `event` or `live` change of a session,
   * re-reads `statusOf` (a child's live change also reaches its parent, as `children`).
   */
  observe(fn: Observer): () => void {
    return this.live.observe(fn);
  }

  /** Live state the log does not show moved: observers hear it for the session, and for its parent as `children`. */
  report(id: string, what: LiveWhat): void {
    this.live.report(id, what);
  }

  /** What only this process knows of a session now: the one assembler every face asks (decision 0054). */
  liveOf(id: string): SessionLive {
    const agent = this.agents.get(id);
    // A fresh object from the runtime, completed in place: every status question asks this (no copy of it).
    const live = this.subagents.ownLive(id);
    live.goalArmed = !!agent && !agent.isDisposed && this.goals.isArmed(agent);
    live.workflows = this.workflows.engine.runsOf(id);
    return live;
  }

  /**
   * The one status question (decision 0054): the session's summary (the store's, or one a view
   * keeps folded ahead of it), what this process knows of it now, and the status folded from both.
   * Undefined for a session the store does not know without reading its log.
   */
  statusOf(id: string, summary: Readonly<SessionSummary> | undefined = this.store.summaryRef(id)): SessionView | undefined {
    return this.live.statusOf(id, summary);
  }

  /** `statusOf`, reading the log once when the store keeps no summary of it. */
  async viewOf(id: string): Promise<SessionView> {
    return this.live.viewOf(id);
  }

  /** The resident agent's session, else the stored one read from the store. */
  readSession(id: string): Promise<Session> {
    return this.sessions.read(id);
  }

  /** A session is a subagent (reached through follow-up) when its own log holds a descriptor. */
  isSubagent(id: string): Promise<boolean> {
    return this.sessions.isSubagent(id);
  }

  /** The user forks a conversation at the end of the turn holding `seq` (see SessionsService.fork). */
  forkSession(sourceId: string, seq: number, opts: { title?: string; budget?: Budget } = {}): Promise<Agent> {
    return this.sessions.fork(sourceId, seq, opts);
  }

  /** The user switches a session's sandbox or approval policy (last event wins; children keep their snapshot). */
  setPolicy(id: string, policy: { sandbox?: SandboxMode; approval?: ApprovalPolicy }): Promise<void> {
    return this.sessions.setPolicy(id, policy);
  }

  /**
   * The human sets (or, with null, removes) the budget of a session's subtree (decision 0034).
   * Durable as a `budget/set` event; raising it resumes nothing: a message goes on from there.
   */
  async setBudget(id: string, budget: Budget | null): Promise<void> {
    await this.sessions.setBudget(id, budget === null ? null : this.cost.check(budget));
  }

  /** New prices (a settings change): every reader and every budget counts at them from now. */
  setPrices(overrides: Record<string, ModelPrice | null>): void {
    this.cost.setPrices(overrides);
    this.config.prices = overrides;
  }

  /** Cancel a queued message of any session. */
  withdraw(id: string, messageId: string): Promise<void> {
    return this.sessions.withdraw(id, messageId);
  }

  /** "Send now" for messages kept after an interrupt. */
  runQueue(id: string): Promise<void> {
    return this.sessions.runQueue(id);
  }

  /** The session's active "allow for this conversation" grants. */
  grants(id: string): Promise<ApprovalGrant[]> {
    return this.sessions.grants(id);
  }

  /** The user revokes a grant: the next matching request asks again. */
  revokeGrant(id: string, grantId: string): Promise<void> {
    return this.sessions.revokeGrant(id, grantId);
  }

  /** Delete a session and its descendants (none may be running); their worktrees go with them (a kept branch stays). */
  async deleteSession(id: string): Promise<string[]> {
    const places = await this.worktrees.placesOf([id, ...this.store.descendants(id).map((h) => h.id)]);
    const deleted = await this.sessions.delete(id);
    await this.worktrees.forget(places);
    // The deletion is durable: what only these sessions recorded goes (decision 0059, amended s57),
    // in the background (it lists every shadow's loose objects), one sweep after another.
    this.forgetting = this.forgetting.then(async () => {
      this.forgotten = await this.checkpoints.forget(deleted).catch((e) => ({ removed: 0, failed: [(e as Error).message] }));
    });
    return deleted;
  }

  /** Stop a subtree, deepest first; returns the ids whose running turn was stopped. */
  interruptSubtree(id: string): Promise<string[]> {
    return this.sessions.interruptSubtree(id);
  }

  /**
   * A message from the human to any session: a root takes it directly; a subagent through
   * follow-up (cold resume). A Stop that lands before it is accepted keeps it, paused (decision
   * 0100). `opened`: a root's agent, once in memory and before the message is accepted.
   */
  send(id: string, text: string, opened?: (agent: Agent) => void): Promise<Agent> {
    return this.sessions.send(id, text, opened);
  }

  /** A new root conversation; with `agent`, one with an agent defined in a file (its sandbox only narrows the deployment's). */
  createSession(opts: { title?: string; agent?: string } = {}): Promise<Agent> {
    return this.rootSessions.create(opts);
  }

  /** The resident agent of a root session, or a cold resume from its own log (a subagent is reached through `send`). */
  openSession(id: string): Promise<Agent> {
    return this.rootSessions.open(id);
  }

  /** Wait until every resident agent has settled and no child is resident or pending. */
  async settle(): Promise<void> {
    for (let round = 0; ; round++) {
      for (const a of [...this.agents.values()]) await a.idle();
      await this.subagents.whenQuiet();
      // A goal round planned in an idle callback is on its way into the inbox: never return between two rounds.
      await this.hooks.whenQuiet();
      if (this.hooks.isQuiet() && [...this.agents.values()].every((a) => a.isSettled)) return;
      if (round > 100_000) throw new HarnessError('NOT_SETTLING', 'settle: agents keep waking each other');
      // An agent that is built but not yet published (a child being created) has work that
      // waits on I/O: let it happen instead of spinning on resolved promises.
      await new Promise((r) => setImmediate(r));
    }
  }

  resident(id: string): Agent | undefined {
    return this.agents.get(id);
  }

  /** Let a settled root go from memory (its log is on disk; `openSession` resumes it); false while it or a child works. */
  release(id: string): Promise<boolean> {
    return this.rootSessions.release(id);
  }

  /** Whether `release` would let a root go now. */
  releasable(id: string): boolean {
    return this.rootSessions.releasable(id);
  }

  /** Build the root agent over a writer (this deployment's model, tools, prompt and policy) and make it resident; no turn starts. */
  makeResident(writer: SessionWriter): Agent {
    return this.rootSessions.makeResident(writer);
  }

  /** Where a session's streamed text and reasoning go: the change stream (a resident agent's, a mirror's). */
  streamOf(id: string): (kind: 'text' | 'reasoning', text: string) => void {
    return this.live.streamOf(id);
  }

  /** Resident agents (roots and children), for views and leak checks. */
  get residentCount(): number {
    return this.agents.size;
  }

  /**
   * Close for good (a window reload, the CLI exiting). Running turns end `interrupted` with
   * the reason, and every continuable child's parent gets its settlement notice (as history:
   * nothing runs) before the store closes — the same notices a crash recovery delivers.
   */
  async close(): Promise<void> {
    // Rows close in reverse: goals first (no round starts or is admitted from here on), then
    // workflows (their script processes and children end before any turn or agent does).
    await this.hooks.close(CLOSED_DURING_TURN);
    const resident = [...this.agents.values()];
    const running = resident.filter((a) => a.activity === 'running');
    for (const a of running) await a.cancel('interrupted', { keepInbox: true, why: CLOSED_DURING_TURN });
    for (const a of running) await a.idle();
    await this.subagents.dispose();
    for (const a of this.agents.values()) await a.dispose();
    this.agents.clear();
    // Every turn has ended (its turn/end is in the log): the next open need not look for open
    // turns in every log. A turn/end that failed to append leaves the marker out.
    if (resident.every((a) => a.session.openTurnId === null)) this.store.markCleanOnClose();
    await this.forgetting; // a sweep reads the store
    // After the last append: the blob index the next process's first deletion starts from (decision 0121).
    await this.checkpoints.persistRefs();
    await this.store.close();
  }
}

export const CLOSED_DURING_TURN = 'Arbor closed during this turn (the window was reloaded or closed).';
