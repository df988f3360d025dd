import { Agent } from '../agent/agent';
import type { AgentConfig } from '../agent/config';
import type { SessionWriter } from '../agent/session-writer';
import type { CostService } from '../cost/service';
import type { LiveWhat } from '../live/changes';
import type { ModelSwitch } from '../model/switch';
import type { ApprovalPort, ApprovalRequest } from '../policy/approval';
import type { ProjectFiles } from '../project/project-files';
import { remoteConfig } from '../remote/turn';
import { assemblePrompt, type PromptSection } from '../scope/prompt';
import type { ScopeRegistry, ViewSpec } from '../scope/registry';
import type { ChildComposition } from '../subagent/composition';
import type { Tool } from '../tools/tool';
import type { WorktreeGate } from '../worktree/gate';
import type { HarnessConfig } from './config';
import type { LiveHub } from './live';
import type { composeHooks } from './rows';

/** Why the store folder is protected wherever it is kept (inside the workspace under any name, or outside in full-access). */
const STORE_REASON = "it is Arbor's session store (every conversation's log and settings); an agent must not rewrite its own history or permissions";

/** What building an agent needs from the composition root, passed in explicitly. */
export interface AgentFactoryDeps {
  /** The live config object: `setDefaults` changes reach agents at their next request or tool call. */
  config: HarnessConfig;
  model: ModelSwitch;
  tools: ScopeRegistry<Tool>;
  prompts: ScopeRegistry<PromptSection>;
  project: ProjectFiles;
  roots: readonly string[];
  cost: CostService;
  live: Pick<LiveHub, 'progress' | 'streamOf'>;
  report(id: string, what: LiveWhat): void;
  /** The composed feature hooks, read at each build: the rows are wired after the factory is made. */
  hooks(): ReturnType<typeof composeHooks>;
  /** Holds a turn while the worktree its session works in is being changed, and keeps it once that closed it (decision 0126, amended in s60). */
  gate: Pick<WorktreeGate, 'turnMayOpen'>;
  /** The resident agents: a built agent is registered here, and leaves at its release. */
  residents: Pick<Map<string, Agent>, 'get' | 'set' | 'delete'>;
}

/** Builds an agent over a writer from a composition (the factory the subagent runtime uses; roots use it too). */
export class AgentFactory {
  constructor(private readonly deps: AgentFactoryDeps) {}

  build(writer: SessionWriter, comp: ChildComposition): { agent: Agent; release(): void } {
    const { config, cost, live, report, residents } = this.deps;
    const { tools, prompts, project } = this.deps;
    const view: ViewSpec = { ...(comp.preset ? { preset: comp.preset } : {}), own: comp.ownScope, ...(comp.toolFilter ? { filters: [comp.toolFilter] } : {}) };
    const promptView: ViewSpec = { ...view, filters: undefined };
    const persona = comp.persona;
    const { admit, beforeToolCall, afterToolCall, turnEnding, compacting, approvalAsked, stepAnswered, toolsStarting } = this.deps.hooks();
    const port = comp.approval ?? config.approvalPort;
    const cfg: AgentConfig = {
      writer,
      model: this.deps.model,
      // Read at each request: a model name or token limit changed in settings reaches
      // running agents at their next step (a child's own model stays its own).
      get modelName() {
        return comp.model ?? config.model.name;
      },
      get maxTokens() {
        return comp.maxTokens ?? config.model.maxTokens;
      },
      tools: () => tools.view(view),
      // Prompt sections are not tools: a tool filter never takes the instructions away (decision 0056).
      // The project files are checked before each request; a change is seen by the next one.
      system: () => {
        project.refresh();
        return assemblePrompt(prompts, promptView, persona);
      },
      // A worktree child's roots are only its worktree (decision 0060): file tools and the OS sandbox both.
      roots: comp.roots ?? this.deps.roots,
      protectedPaths: [config.storeDir, ...(config.otherStores ?? [])].map((p) => ({ path: p, reason: STORE_REASON })),
      // The live config object: `setDefaults` reaches agents at their next tool call.
      defaults: config,
      approval: port && approvalAsked ? noticing(port, approvalAsked) : port,
      maxSteps: config.maxSteps,
      compaction: config.compaction,
      ...(comp.admission ? { admission: comp.admission } : {}),
      onDelta: live.streamOf(writer.id),
      onProgress: (progress) => live.progress(writer.id, progress),
      onApprovalChange: () => report(writer.id, 'approval'),
      // Only a session working in a worktree (its roots are that worktree's) has turns a change of it holds.
      ...(comp.roots ? { beforeTurnOpen: (signal: AbortSignal) => this.deps.gate.turnMayOpen(writer.id, signal) } : {}),
      ...(admit ? { admit: (msg, signal) => admit(writer.id, msg, signal) } : {}),
      ...(beforeToolCall ? { beforeToolCall } : {}),
      ...(afterToolCall ? { afterToolCall } : {}),
      ...(turnEnding ? { beforeTurnEnd: (c) => turnEnding(writer.id, c) } : {}),
      ...(compacting ? { beforeCompaction: (c) => compacting(writer.id, c.reason, c.signal) } : {}),
      ...(stepAnswered ? { beforeResults: () => stepAnswered(writer.id) } : {}),
      // Our tools are a request's head: a remote child's program has its own.
      ...(toolsStarting && !comp.remote ? { toolsReady: toolsStarting } : {}),
      beforeRequest: (req) => {
        const r = cost.budgets.check(writer.id, req);
        if ('refusal' in r) return { refuse: r.refusal.message };
        return 'grant' in r ? r.grant : undefined;
      },
    };
    // A remote child's turns run in its program; our model never compacts its log.
    // Its program's requests are out of the budget check's sight: the turn watches its budgets instead.
    const budget = { watch: (onSpent: (why: string) => void) => cost.budgets.watch(writer.id, onSpent) };
    const agent = new Agent(comp.remote ? remoteConfig(cfg, comp.remote, comp.model ?? comp.remote.program, budget) : cfg);
    const offIdle = agent.onIdle(() => report(writer.id, 'idle'));
    residents.set(writer.id, agent);
    report(writer.id, 'resident');
    return {
      agent,
      release: () => {
        offIdle();
        if (residents.get(writer.id) !== agent) return;
        residents.delete(writer.id);
        // Released, perhaps before its loop reported idle (a one-shot child disposed as soon as
        // its turn ended): views hear it left, and re-read its status.
        report(writer.id, 'released');
      },
    };
  }
}

/** An approval port that tells `notice` (the Notification hook) of each ask before asking; a throwing notice is dropped. */
function noticing(port: ApprovalPort, notice: (req: ApprovalRequest, signal: AbortSignal | undefined) => void): ApprovalPort {
  return {
    ask(req, signal) {
      try {
        notice(req, signal);
      } catch {
        // an observer's failure is not the ask's
      }
      return port.ask(req, signal);
    },
  };
}
