import * as fs from 'node:fs';
import type { Agent } from '../agent/agent';
import type { SessionWriter } from '../agent/session-writer';
import { CostService } from '../cost/service';
import type { RowContext } from '../feature/rows';
import type { SessionLive, SessionView } from '../live/state';
import type { ModelSwitch } from '../model/switch';
import { ProjectFiles } from '../project/project-files';
import type { PromptSection } from '../scope/prompt';
import { ScopeRegistry } from '../scope/registry';
import type { Session } from '../session/session';
import type { Store } from '../store/store';
import { SubagentRuntime } from '../subagent/runtime';
import { MadeRecord } from '../tools/made-by-commands';
import { CommandSandbox } from '../tools/sandbox/command-sandbox';
import type { Tool } from '../tools/tool';
import { WorktreeGate } from '../worktree/gate';
import { WorktreeService } from '../worktree/service';
import { AgentFactory } from './agent-factory';
import { BestOfService } from './bestof/service';
import { DEFAULT_MAX_DEPTH, type HarnessConfig } from './config';
import { type Features, wireFeatures } from './features';
import { LiveHub } from './live';
import { RootSessions } from './root-sessions';
import { SessionsService } from './sessions';

type RowHost = RowContext['host'];

/**
 * What the parts ask of the façade that owns them (feature rows reach the harness's sessions
 * through it too). No call is made while the services are made; the rows, wired once the
 * façade holds the services (`wireRows`), may call it at once (a row subscribing to `observe`).
 */
export interface PartsHost extends RowHost {
  /** Sessions whose turn a crash left open (set by `Harness.open` after the parts are made). */
  readonly recovered: string[];
  liveOf(id: string): SessionLive;
  statusOf(id: string): SessionView | undefined;
  readSession(id: string): Promise<Session>;
  makeResident(writer: SessionWriter): Agent;
}

/** Every service of a harness, made in dependency order; the rows are wired by `wireRows`. */
export interface HarnessParts {
  tools: ScopeRegistry<Tool>;
  prompts: ScopeRegistry<PromptSection>;
  /** The resident agents, roots and children: one map every part reads. */
  agents: Map<string, Agent>;
  roots: readonly string[];
  cost: CostService;
  project: ProjectFiles;
  live: LiveHub;
  rootSessions: RootSessions;
  worktrees: WorktreeService;
  commandSandbox: CommandSandbox;
  subagents: SubagentRuntime;
  sessions: SessionsService;
  bestOf: BestOfService;
  /** Wires the feature rows (once the façade holds the services above: rows call it) and composes their hooks. */
  wireRows(): Features;
}

/**
 * The composition root's wiring (decision 0030): store, model, tools, prompts and policy from a
 * config, the services over them, then (`wireRows`) the feature rows. Settings are read from the live
 * `config` object where they are used, so `setDefaults` reaches the next use.
 */
export function makeParts(config: HarnessConfig, store: Store, model: ModelSwitch, host: PartsHost): HarnessParts {
  const tools = new ScopeRegistry<Tool>();
  const prompts = new ScopeRegistry<PromptSection>();
  const agents = new Map<string, Agent>();
  const roots = config.workspace.map((w) => fs.realpathSync(w));
  const cost = new CostService(store, config.prices);
  const project = new ProjectFiles({ root: roots[0], ...config.project }, prompts);
  const live = new LiveHub({
    store,
    parentOf: (id) => store.parentOf(id) ?? agents.get(id)?.session.header.parentSession,
    liveOf: (id) => host.liveOf(id),
  });
  // The rows' hooks, composed once the rows are wired below: read at each use, never before.
  let features: Features | undefined;
  const hooks = () => (features as Features).hooks;
  // One hold per worktree: its apply, discard or keep, and the turns of the sessions working in it (decision 0126, amended in s60).
  const gate = new WorktreeGate({ markOf: (id) => store.summaryRef(id)?.worktree, has: (id) => store.has(id) });
  const factory = new AgentFactory({
    gate,
    config,
    model,
    tools,
    prompts,
    project,
    roots,
    cost,
    live,
    report: (id, what) => host.report(id, what),
    hooks,
    residents: agents,
  });
  const rootSessions = new RootSessions({
    store,
    config,
    project,
    roots,
    factory,
    agents,
    opened: (agent) => hooks().opened(agent),
    holds: (agent) => hooks().holds(agent),
    released: (id) => host.report(id, 'released'),
  });
  const worktrees = new WorktreeService({
    store,
    storeDir: config.storeDir,
    roots,
    resident: (id) => agents.get(id),
    // Read when asked: the runtime is built just below.
    isRunning: (id) => subagents.isRunning(id) || agents.get(id)?.activity === 'running',
    recovered: () => host.recovered,
    gate,
    ...(config.trusted ? { trusted: config.trusted } : {}),
    // The commands' bubblewrap: the worktrees' git that reads files runs under the same one (decision 0097).
    ...(config.commands?.bwrapPath ? { bwrapPath: config.commands.bwrapPath } : {}),
  });
  const commandSandbox = new CommandSandbox({
    ...(config.commands?.bwrapPath ? { bwrapPath: config.commands.bwrapPath } : {}),
    // Read at each command: a settings change applies to the next one.
    network: () => config.commands?.network ?? false,
    protectedPaths: () => [config.storeDir, ...(config.otherStores ?? [])],
    ...(config.commands?.madeRecord ? { made: new MadeRecord(config.commands.madeRecord) } : {}),
  });
  const subagents: SubagentRuntime = new SubagentRuntime({
    store,
    tools,
    build: (writer, comp) => factory.build(writer, comp),
    resident: (id) => agents.get(id),
    resolve: (id) => host.openSession(id),
    read: (id) => host.readSession(id),
    // Read live: `setDefaults` reaches the next child that starts, and the next release.
    maxDepth: () => config.maxDepth ?? DEFAULT_MAX_DEPTH,
    approvalPort: config.approvalPort,
    // Read live: `setDefaults` reaches the next child that starts or resumes.
    defaultApproval: () => config.approval,
    childApproval: () => config.childApproval ?? 'never',
    releaseDelayMs: () => config.releaseDelayMs ?? 1000,
    ...(config.maxConcurrentChildren !== undefined ? { maxConcurrentChildren: config.maxConcurrentChildren } : {}),
    ...(config.escalateTimeoutMs !== undefined ? { escalateTimeoutMs: config.escalateTimeoutMs } : {}),
    checkChildBudget: (parentId, budget) => cost.checkChildBudget(parentId, budget),
    prices: () => cost.prices,
    budgetSpent: (id) => cost.budgets.spent(id),
    report: (id, what) => host.report(id, what),
    liveOf: (id) => host.liveOf(id),
    agents: project,
    defaultSandbox: () => config.sandbox,
    // Read when a child starts: the rows are wired after the runtime is built.
    beforeStart: (c) => hooks().subagentStarting?.(c),
    worktrees,
  });
  const sessions = new SessionsService({
    store,
    subagents,
    resident: (id) => agents.get(id),
    makeResident: (writer) => host.makeResident(writer),
    openSession: (id) => host.openSession(id),
    stopped: (ids) => hooks().stopped(ids),
    deploymentSandbox: () => config.sandbox,
    gate,
    drop: async (id) => {
      const a = agents.get(id);
      if (!a) return;
      await a.dispose();
      agents.delete(id);
    },
  });
  const bestOf = new BestOfService({
    store,
    worktrees,
    project,
    roots,
    deploymentSandbox: () => config.sandbox,
    read: (id) => host.readSession(id),
    isSubagent: (id) => host.isSubagent(id),
    resident: (id) => agents.get(id),
    makeResident: (writer) => host.makeResident(writer),
    status: (id) => host.statusOf(id)?.status,
    under: (id, fn) => subagents.under(id, fn),
  });
  const wireRows = (): Features => {
    const ctx: RowContext = { tools, prompts, subagents, registerProvider: (p) => subagents.registerProvider(p), host };
    features = wireFeatures(config, ctx, { roots, cost, commandSandbox });
    features.mcp.onChange(() => live.mcpChanged());
    return features;
  };
  return { tools, prompts, agents, roots, cost, project, live, rootSessions, worktrees, commandSandbox, subagents, sessions, bestOf, wireRows };
}
