import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import { Agent } from './agent/agent';
import type { AgentConfig } from './agent/config';
import { withdrawQueued } from './agent/withdraw';
import { SessionWriter } from './agent/session-writer';
import { OpenAICompatibleClient } from './model/openai-client';
import { ModelSwitch } from './model/switch';
import { recoverInterrupted } from './recovery';
import type { ModelClient } from './model/types';
import { assemblePrompt, DEFAULT_SECTIONS, type PromptSection } from './scope/prompt';
import { ScopeRegistry, type ViewSpec } from './scope/registry';
import type { GoalService } from './goal/service';
import { wireGoals } from './goal/wire';
import type { ChildComposition } from './subagent/composition';
import { SubagentRuntime } from './subagent/runtime';
import { forkProvider } from './subagent/fork-provider';
import { spawnProvider } from './subagent/spawn-provider';
import type { RemoteSettings } from './remote/settings';
import { remoteConfig } from './remote/turn';
import { wireRemote } from './remote/wire';
import { delegationTools } from './subagent/tools';
import type { ApprovalPolicy, InboxAcceptedEvent, SandboxMode, SessionEvent, SessionHeader } from './session/events';
import { descriptorOf, policyOverrides } from './session/folds';
import { distinctName, nameFromLog } from './session/names';
import { activeGrants, type ApprovalGrant } from './policy/grants';
import { Session } from './session/session';
import { Store, type StoreOptions } from './store/store';
import type { ApprovalPort, Tool } from './tools/tool';
import { workspaceTools } from './tools/workspace';
import { CommandSandbox } from './tools/sandbox/command-sandbox';
import type { SandboxStatus } from './tools/sandbox/detect';

/** Why the store folder is protected wherever it is kept (inside the workspace under any name, or outside in full-access). */
const STORE_REASON = "it is Arbor's session store (every conversation's log and settings); an agent must not rewrite its own history or permissions";
import type { WorkflowDeployment } from './workflow/limits';
import { wireWorkflows } from './workflow/wire';

/** A deployment as a plain object: which store, model, workspace, policies and limits. */
export interface HarnessConfig {
  storeDir: string;
  /** Workspace folders; the first is the default cwd. */
  workspace: string[];
  model: { baseURL: string; name: string; apiKey: string; timeoutMs?: number; maxRetries?: number; maxTokens?: number } | { client: ModelClient; name: string; maxTokens?: number };
  sandbox: SandboxMode;
  approval: ApprovalPolicy;
  approvalPort?: ApprovalPort;
  maxSteps?: number;
  compaction?: { thresholdTokens: number; keepTurns?: number };
  store?: StoreOptions;
  /** Standing scope key of this deployment's preset. */
  preset?: string;
  /** Deepest delegation allowed (root = 0); default 3. */
  maxDepth?: number;
  /** What a delegated child does with actions needing approval: refuse (default) or ask the human, tagged. */
  childApproval?: 'never' | 'escalate';
  /** How long a settled continuable child stays resident before release (ms); default 1000. */
  releaseDelayMs?: number;
  /** Children running at once, harness-wide; the rest queue in FIFO order (default 8). Live: `subagents.fanout.limit`. */
  maxConcurrentChildren?: number;
  /** With childApproval 'escalate': how long a child waits for the human before the request is denied (ms); default 300000. */
  escalateTimeoutMs?: number;
  /** The OS sandbox of `run_command` (decision 0005): whether confined commands get the network (default no), which bubblewrap. */
  commands?: { network?: boolean; bwrapPath?: string };
  /** Workflow limits (settings `arbor.workflow.*`); defaults in workflow/limits.ts. */
  workflow?: Partial<WorkflowDeployment>;
  /** A goal's round limit when the human gives none; default 10. */
  goalMaxRounds?: number;
  /** Remote programs children may be delegated to (issue 13): machine settings only, never a workspace's. */
  remote?: RemoteSettings;
}

export type ModelConfig = HarnessConfig['model'];

export type HarnessListener = (sessionId: string, event: SessionEvent) => void;
export type DeltaListener = (sessionId: string, kind: 'text' | 'reasoning', delta: string) => void;

/** The composition root: wires store, model, tools, prompts and policy from a config. */
export class Harness {
  readonly tools = new ScopeRegistry<Tool>();
  readonly prompts = new ScopeRegistry<PromptSection>();
  private readonly agents = new Map<string, Agent>();
  private readonly listeners = new Set<HarnessListener>();
  private readonly deltaListeners = new Set<DeltaListener>();
  private readonly idleListeners = new Set<(sessionId: string) => void>();
  private readonly opening = new Map<string, Promise<Agent>>();
  private readonly roots: string[];
  readonly subagents: SubagentRuntime;
  /** Confines `run_command` in read-only and workspace-write. */
  readonly commandSandbox: CommandSandbox;
  readonly workflows: ReturnType<typeof wireWorkflows>;
  /** Goals of root conversations (decision 0029): durable snapshots, in-memory activation, the round driver. */
  readonly goals: GoalService;
  private readonly admitGoal: (sessionId: string, msg: InboxAcceptedEvent) => boolean | Promise<boolean>;

  private constructor(
    readonly config: HarnessConfig,
    readonly store: Store,
    readonly model: ModelSwitch,
  ) {
    this.roots = config.workspace.map((w) => fs.realpathSync(w));
    this.commandSandbox = new CommandSandbox({
      ...(config.commands?.bwrapPath ? { bwrapPath: config.commands.bwrapPath } : {}),
      // Read at each command: a settings change applies to the next one.
      network: () => this.config.commands?.network ?? false,
      protectedPaths: () => [this.config.storeDir],
    });
    const secrets = () => ('apiKey' in this.config.model ? [this.config.model.apiKey] : []);
    const runCommand = { sandbox: this.commandSandbox, secrets };
    const remote = wireRemote(config.remote, secrets);
    for (const t of workspaceTools({ runCommand })) this.tools.register(t);
    for (const s of DEFAULT_SECTIONS) this.prompts.register(s);
    this.subagents = new SubagentRuntime({
      store,
      tools: this.tools,
      build: (writer, comp) => this.build(writer, comp),
      resident: (id) => this.agents.get(id),
      resolve: (id) => this.openSession(id),
      maxDepth: config.maxDepth ?? 3,
      approvalPort: config.approvalPort,
      defaultApproval: config.approval,
      childApproval: config.childApproval ?? 'never',
      releaseDelayMs: config.releaseDelayMs ?? 1000,
      ...(config.maxConcurrentChildren !== undefined ? { maxConcurrentChildren: config.maxConcurrentChildren } : {}),
      ...(config.escalateTimeoutMs !== undefined ? { escalateTimeoutMs: config.escalateTimeoutMs } : {}),
      ...(remote.providers.length ? { providers: [spawnProvider, forkProvider, ...remote.providers] } : {}),
    });
    for (const t of delegationTools(this.subagents)) this.tools.register(t);
    for (const t of remote.tools(this.subagents)) this.tools.register(t);
    this.workflows = wireWorkflows(this.subagents, this.tools, config.workflow);
    const goals = wireGoals(this, config.goalMaxRounds);
    this.goals = goals.service;
    this.admitGoal = goals.admit;
    this.tools.register(goals.tool);
  }

  static async open(config: HarnessConfig): Promise<Harness> {
    for (const w of config.workspace) {
      if (!fs.existsSync(w) || !fs.statSync(w).isDirectory()) throw new Error(`Workspace folder ${w} does not exist; pass an existing folder with --workspace.`);
    }
    const store = await Store.open(config.storeDir, config.store);
    const h = new Harness(config, store, new ModelSwitch(clientFor(config.model)));
    // After a clean close no stored turn is open; only after a crash is every log read.
    if (!store.closedCleanly) h.recovered = await recoverInterrupted(store);
    await store.markRunning();
    return h;
  }

  /** Whether commands can run in an OS sandbox here (probed once per process), for hosts to show and warn. */
  sandboxStatus(): Promise<SandboxStatus> {
    return this.commandSandbox.status();
  }

  /** Sessions whose turn a crash left open, closed at this open as `interrupted`. */
  recovered: string[] = [];

  /**
   * A new key, endpoint or model name (the user changed a setting): every agent, running or
   * not, uses it from its next request; nothing is closed and no turn is cut.
   */
  setModel(model: ModelConfig): void {
    this.model.set(clientFor(model));
    this.config.model = model;
  }

  onEvent(fn: HarnessListener): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Streamed text and reasoning of any resident agent, before it is in the log. */
  onDelta(fn: DeltaListener): () => void {
    this.deltaListeners.add(fn);
    return () => this.deltaListeners.delete(fn);
  }

  /** An agent stopped working (its loop ended): views refresh its status. */
  onIdle(fn: (sessionId: string) => void): () => void {
    this.idleListeners.add(fn);
    return () => this.idleListeners.delete(fn);
  }

  /**
   * A session is a subagent (reached through follow-up) when its own log holds a descriptor.
   * The origin answers for `user` and `subagent`; only a fork (the user's, or a subagent's)
   * needs its log read, once: the descriptor is written at creation and never changes.
   */
  async isSubagent(id: string): Promise<boolean> {
    const origin = (this.agents.get(id)?.session.header ?? this.store.header(id))?.origin;
    if (origin === 'user') return false;
    if (origin === 'subagent') return true;
    let known = this.forkKinds.get(id);
    if (known === undefined) {
      const s = this.agents.get(id)?.session ?? (await this.store.inspect(id));
      known = descriptorOf(s.header, s.events) !== undefined;
      this.forkKinds.set(id, known);
    }
    return known;
  }
  private readonly forkKinds = new Map<string, boolean>();

  /**
   * The user forks a conversation: a new root-level session (origin `fork`) seeded with the
   * log up to the end of the turn holding `seq`, which the user then chats with. It runs under
   * the source's policy as it is now, never the one in force at the fork point (decision 0024).
   */
  async forkSession(sourceId: string, seq: number, opts: { title?: string } = {}): Promise<Agent> {
    const source = this.agents.get(sourceId)?.session ?? (await this.store.inspect(sourceId));
    const events = source.events;
    // Read synchronously with the events: a switch after this call belongs to the source only.
    const current = policyOverrides(events);
    if (!Number.isSafeInteger(seq) || seq < 0 || seq >= events.length) throw new Error(`Session ${sourceId} has no event ${seq}.`);
    let end = -1;
    for (let i = seq; i < events.length; i++) {
      if (events[i].type === 'turn/end') {
        end = i;
        break;
      }
    }
    if (end < 0) throw new Error('That message is in a turn that has not finished yet; fork after it ends.');
    const header: SessionHeader = {
      id: `${sourceId.split('.')[0]}.f${randomUUID().slice(0, 6)}`,
      createdAt: new Date().toISOString(),
      origin: 'fork',
      parentSession: sourceId,
      delegationDepth: source.header.delegationDepth ?? 0,
      // Named after what the user sees (the label or title), distinct from earlier forks' names.
      title: opts.title ?? distinctName(`Fork of ${nameFromLog(source.header, events)}`, this.store.list().map((h) => h.title)),
      ...(source.header.cwd ? { cwd: source.header.cwd } : {}),
      ...(source.header.agentPreset ? { agentPreset: source.header.agentPreset } : {}),
    };
    const writer = new SessionWriter(Session.fromSeed(header, events.slice(0, end + 1)), this.store, { published: false });
    // After the seed (a seed may hold a looser switch the source has since taken back), in
    // the same durable write as the seed: the fork never runs a moment under the old policy.
    if (current.sandbox) await writer.append({ type: 'sandbox/mode', mode: current.sandbox.value, source: current.sandbox.source });
    if (current.approval) await writer.append({ type: 'approval/policy', policy: current.approval.value, source: current.approval.source });
    await writer.publish();
    return this.adopt(writer);
  }

  /** The user switches a session's sandbox or approval policy (last event wins; children keep their snapshot). */
  async setPolicy(id: string, policy: { sandbox?: SandboxMode; approval?: ApprovalPolicy }): Promise<void> {
    // A resident agent's writer keeps its in-memory log current; otherwise append through a writer of its own.
    const writer = await this.writerFor(id);
    if (policy.sandbox) await writer.append({ type: 'sandbox/mode', mode: policy.sandbox, source: 'user' });
    if (policy.approval) await writer.append({ type: 'approval/policy', policy: policy.approval, source: 'user' });
  }

  /** Cancel a queued message of any session; one not resident is written through a writer of its own (no turn starts). */
  async withdraw(id: string, messageId: string): Promise<void> {
    const writer = await this.writerFor(id);
    await withdrawQueued(writer, messageId);
  }

  /**
   * "Send now" for messages kept after an interrupt: the agent works through its queue in
   * FIFO order. A root not resident opens (which runs its queue); a released subagent is
   * cold-resumed.
   */
  async runQueue(id: string): Promise<void> {
    if (!this.store.header(id)) throw new Error(`No session ${id} in ${this.store.dir}.`);
    const agent = this.agents.get(id);
    if (await this.isSubagent(id)) {
      // A released continuable child is rebuilt from its own log, like a follow-up.
      if (agent && this.subagents.residency.isOneShot(id)) return agent.resume();
      return this.subagents.residency.wake(id);
    }
    if (agent) return agent.resume();
    await this.openSession(id);
  }

  /** The session's active "allow for this conversation" grants (its own, never an ancestor's). */
  async grants(id: string): Promise<ApprovalGrant[]> {
    const s = this.agents.get(id)?.session ?? (await this.store.inspect(id));
    return activeGrants(s.header, s.events);
  }

  /** The user revokes a grant: the next matching request asks again. Unknown or revoked grant ids are an error. */
  async revokeGrant(id: string, grantId: string): Promise<void> {
    const writer = await this.writerFor(id);
    const g = activeGrants(writer.session.header, writer.session.events).find((x) => x.grantId === grantId);
    if (!g) throw new Error(`Session ${id} has no active grant ${grantId}; it may already be revoked.`);
    await writer.append({ type: 'approval/grant', grantId, tool: g.tool, scope: g.scope, ...(g.sandbox ? { sandbox: g.sandbox } : {}), revoked: true });
  }

  /** Delete a session and its descendants (none may be running). */
  async deleteSession(id: string): Promise<string[]> {
    const ids = [id, ...this.listDescendants(id)];
    for (const x of ids) if (this.agents.get(x)?.status === 'running') throw new Error(`Session ${x} is running; interrupt it before deleting.`);
    // Children first: resident subagents are released without a settlement notice (their
    // parent is going too), then any root agent left is disposed.
    for (const x of [...ids].reverse()) {
      await this.subagents.residency.forget(x);
      const a = this.agents.get(x);
      if (a) {
        await a.dispose();
        this.agents.delete(x);
      }
      this.forkKinds.delete(x);
    }
    return this.store.deleteSession(id);
  }

  /**
   * Stop a subtree: the turns of every running descendant (deepest first), then the
   * session's own. Inboxes are kept and nothing resumes by itself: a notice from a stopped
   * child waits in its parent's inbox until the human or the parent decides.
   * Returns the ids whose running turn was stopped.
   */
  async interruptSubtree(id: string): Promise<string[]> {
    if (!this.store.header(id) && !this.agents.has(id)) throw new Error(`No session ${id}.`);
    const ids = [id, ...this.listDescendants(id)].reverse();
    const stopped: string[] = [];
    for (const x of ids) {
      const a = this.agents.get(x);
      if (a?.status !== 'running') continue;
      stopped.push(x);
      await a.cancel('interrupted', { keepInbox: true });
    }
    for (const x of stopped) await this.agents.get(x)?.idle();
    return stopped.reverse();
  }

  /**
   * The writer for a control event (a policy switch, a withdrawal, a grant): the resident
   * agent's own, so its in-memory log stays current; else one over the stored log.
   */
  private async writerFor(id: string): Promise<SessionWriter> {
    return this.agents.get(id)?.writer ?? new SessionWriter(await this.store.inspect(id), this.store);
  }

  private listDescendants(id: string): string[] {
    const out: string[] = [];
    const queue = this.store.children(id).map((h) => h.id);
    while (queue.length > 0) {
      const cur = queue.shift()!;
      out.push(cur);
      queue.push(...this.store.children(cur).map((h) => h.id));
    }
    return out;
  }

  /** A new root conversation. */
  async createSession(opts: { title?: string } = {}): Promise<Agent> {
    const header: SessionHeader = { id: newSessionId(), createdAt: new Date().toISOString(), origin: 'user', delegationDepth: 0, cwd: this.roots[0] };
    if (opts.title) header.title = opts.title;
    if (this.config.preset) header.agentPreset = this.config.preset;
    const writer = new SessionWriter(Session.create(header), this.store, { published: false });
    await writer.publish();
    return this.adopt(writer);
  }

  /**
   * The resident agent of a root session, or a cold resume from its own log. A subagent
   * is reached through `send` (the runtime rebuilds its composition from its descriptor).
   */
  async openSession(id: string): Promise<Agent> {
    const resident = this.agents.get(id);
    if (resident) return resident;
    const pending = this.opening.get(id);
    if (pending) return pending;
    const p = (async () => {
      const session = await this.store.inspect(id);
      const agent = this.adopt(new SessionWriter(session, this.store));
      await agent.recover();
      await this.workflows.closeOutlived(agent.writer);
      agent.pump(); // messages accepted before a restart were promised: work through them
      return agent;
    })().finally(() => this.opening.delete(id));
    this.opening.set(id, p);
    return p;
  }

  /** A message from the human to any session: a root takes it directly; a subagent through follow-up (cold resume). */
  async send(id: string, text: string): Promise<Agent> {
    if (!this.store.header(id)) throw new Error(`No session ${id} in ${this.store.dir}.`);
    if (!(await this.isSubagent(id))) {
      const agent = await this.openSession(id);
      await agent.accept(text, { kind: 'user' });
      return agent;
    }
    await this.subagents.followup(null, id, text);
    return this.agents.get(id)!;
  }

  /** Wait until every resident agent has settled and no child is resident or pending. */
  async settle(): Promise<void> {
    for (let round = 0; ; round++) {
      for (const a of [...this.agents.values()]) await a.idle();
      await this.subagents.whenQuiet();
      // A goal round planned in an idle callback is on its way into the inbox: never return between two rounds.
      await this.goals.whenQuiet();
      if (this.goals.isQuiet && [...this.agents.values()].every((a) => a.isSettled)) return;
      if (round > 100_000) throw new Error('settle: agents keep waking each other');
      // An agent that is built but not yet published (a child being created) has work that
      // waits on I/O: let it happen instead of spinning on resolved promises.
      await new Promise((r) => setImmediate(r));
    }
  }

  resident(id: string): Agent | undefined {
    return this.agents.get(id);
  }

  /** A root agent over a writer with this deployment's model, tools, prompt and policy. */
  adopt(writer: SessionWriter): Agent {
    return this.build(writer, { ...(this.config.preset ? { preset: this.config.preset } : {}), ownScope: `agent:${writer.id}` }).agent;
  }

  /** The agent factory the subagent runtime uses; roots use it too. */
  private build(writer: SessionWriter, comp: ChildComposition): { agent: Agent; release(): void } {
    const view: ViewSpec = { ...(comp.preset ? { preset: comp.preset } : {}), own: comp.ownScope, ...(comp.toolFilter ? { filters: [comp.toolFilter] } : {}) };
    const config = this.config;
    const cfg: AgentConfig = {
      writer,
      model: this.model,
      // Read at each request: a model name or token limit changed in settings reaches
      // running agents at their next step (a child's own model stays its own).
      get modelName() {
        return comp.model ?? config.model.name;
      },
      get maxTokens() {
        return comp.maxTokens ?? config.model.maxTokens;
      },
      tools: () => this.tools.view(view),
      system: () => assemblePrompt(this.prompts, view, comp.persona),
      roots: this.roots,
      protectedPaths: [{ path: this.config.storeDir, reason: STORE_REASON }],
      // The live config object: a host that changes its defaults (trust granted, settings
      // edited) reaches agents at their next tool call.
      defaults: this.config,
      approval: comp.approval ?? this.config.approvalPort,
      maxSteps: this.config.maxSteps,
      compaction: this.config.compaction,
      ...(comp.admission ? { admission: comp.admission } : {}),
      onDelta: (kind, delta) => {
        for (const fn of this.deltaListeners) fn(writer.id, kind, delta);
      },
      admit: (msg) => this.admitGoal(writer.id, msg),
    };
    // A remote child's turns run in its program; our model never compacts its log.
    const agent = new Agent(comp.remote ? remoteConfig(cfg, comp.remote, comp.model ?? comp.remote.program) : cfg);
    const offEvents = writer.onEvent((e) => {
      for (const fn of this.listeners) fn(writer.id, e);
    });
    const offIdle = agent.onIdle(() => {
      for (const fn of this.idleListeners) fn(writer.id);
    });
    const off = () => {
      offEvents();
      offIdle();
    };
    this.agents.set(writer.id, agent);
    return {
      agent,
      release: () => {
        off();
        if (this.agents.get(writer.id) === agent) this.agents.delete(writer.id);
      },
    };
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
    await this.goals.close(); // no round starts or is admitted from here on; armed goals end with the process
    // Workflows first: their script processes and children end before any turn or agent does.
    await this.workflows.close(CLOSED_DURING_TURN);
    const resident = [...this.agents.values()];
    const running = resident.filter((a) => a.status === 'running');
    for (const a of running) await a.cancel('interrupted', { keepInbox: true, why: CLOSED_DURING_TURN });
    for (const a of running) await a.idle();
    await this.subagents.dispose();
    for (const a of this.agents.values()) await a.dispose();
    this.agents.clear();
    // Every turn has ended (its turn/end is in the log): the next open need not look for open
    // turns in every log. A turn/end that failed to append leaves the marker out.
    if (resident.every((a) => a.session.openTurnId === null)) this.store.markCleanOnClose();
    await this.store.close();
  }
}

export const CLOSED_DURING_TURN = 'Arbor closed during this turn (the window was reloaded or closed).';

function clientFor(model: ModelConfig): ModelClient {
  return 'client' in model ? model.client : new OpenAICompatibleClient({ baseURL: model.baseURL, apiKey: model.apiKey, timeoutMs: model.timeoutMs, maxRetries: model.maxRetries });
}

/** Sortable, unique, file-name safe: time prefix + random suffix. */
export function newSessionId(): string {
  return `s-${Date.now().toString(36)}-${randomUUID().slice(0, 8)}`;
}
