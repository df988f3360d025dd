import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import { Agent } from './agent/agent';
import type { AgentConfig } from './agent/config';
import { SessionWriter } from './agent/session-writer';
import { OpenAICompatibleClient } from './model/openai-client';
import type { ModelClient } from './model/types';
import { assemblePrompt, DEFAULT_SECTIONS, type PromptSection } from './scope/prompt';
import { ScopeRegistry, type ViewSpec } from './scope/registry';
import type { ApprovalPolicy, SandboxMode, SessionEvent, SessionHeader } from './session/events';
import { Session } from './session/session';
import { Store, type StoreOptions } from './store/store';
import type { ApprovalPort, Tool } from './tools/tool';
import { workspaceTools } from './tools/workspace';

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
}

export type HarnessListener = (sessionId: string, event: SessionEvent) => void;

/** The composition root: wires store, model, tools, prompts and policy from a config. */
export class Harness {
  readonly tools = new ScopeRegistry<Tool>();
  readonly prompts = new ScopeRegistry<PromptSection>();
  private readonly agents = new Map<string, Agent>();
  private readonly listeners = new Set<HarnessListener>();
  private readonly roots: string[];

  private constructor(
    readonly config: HarnessConfig,
    readonly store: Store,
    readonly model: ModelClient,
  ) {
    this.roots = config.workspace.map((w) => fs.realpathSync(w));
    for (const t of workspaceTools()) this.tools.register(t);
    for (const s of DEFAULT_SECTIONS) this.prompts.register(s);
  }

  static async open(config: HarnessConfig): Promise<Harness> {
    for (const w of config.workspace) {
      if (!fs.existsSync(w) || !fs.statSync(w).isDirectory()) throw new Error(`Workspace folder ${w} does not exist; pass an existing folder with --workspace.`);
    }
    const model =
      'client' in config.model
        ? config.model.client
        : new OpenAICompatibleClient({ baseURL: config.model.baseURL, apiKey: config.model.apiKey, timeoutMs: config.model.timeoutMs, maxRetries: config.model.maxRetries });
    const store = await Store.open(config.storeDir, config.store);
    return new Harness(config, store, model);
  }

  onEvent(fn: HarnessListener): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** A new root conversation. */
  async createSession(opts: { title?: string } = {}): Promise<Agent> {
    const header: SessionHeader = { id: newSessionId(), createdAt: new Date().toISOString(), origin: 'user', delegationDepth: 0, cwd: this.roots[0] };
    if (opts.title) header.title = opts.title;
    const writer = new SessionWriter(Session.create(header), this.store, { published: false });
    await writer.publish();
    return this.adopt(writer);
  }

  /** The resident agent of a session, or a cold resume from its own log. */
  async openSession(id: string): Promise<Agent> {
    const resident = this.agents.get(id);
    if (resident) return resident;
    const session = await this.store.inspect(id);
    const agent = this.adopt(new SessionWriter(session, this.store));
    await agent.recover();
    return agent;
  }

  resident(id: string): Agent | undefined {
    return this.agents.get(id);
  }

  /** Build an agent over a writer with this deployment's model, tools, prompt and policy. */
  adopt(writer: SessionWriter, view: ViewSpec = { preset: this.config.preset }): Agent {
    const cfg: AgentConfig = {
      writer,
      model: this.model,
      modelName: this.config.model.name,
      maxTokens: this.config.model.maxTokens,
      tools: () => this.tools.view(view),
      system: () => assemblePrompt(this.prompts, view),
      roots: this.roots,
      defaults: { sandbox: this.config.sandbox, approval: this.config.approval },
      approval: this.config.approvalPort,
      maxSteps: this.config.maxSteps,
      compaction: this.config.compaction,
    };
    const agent = new Agent(cfg);
    writer.onEvent((e) => {
      for (const fn of this.listeners) fn(writer.id, e);
    });
    this.agents.set(writer.id, agent);
    return agent;
  }

  async close(): Promise<void> {
    for (const a of this.agents.values()) await a.dispose();
    this.agents.clear();
    await this.store.close();
  }
}

/** Sortable, unique, file-name safe: time prefix + random suffix. */
export function newSessionId(): string {
  return `s-${Date.now().toString(36)}-${randomUUID().slice(0, 8)}`;
}
