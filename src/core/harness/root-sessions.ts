import { randomUUID } from 'node:crypto';
import type { Agent } from '../agent/agent';
import { keptByStop } from '../agent/kept-by-stop';
import { SessionWriter } from '../agent/session-writer';
import type { ProjectFiles } from '../project/project-files';
import type { SessionHeader } from '../session/events';
import { descriptorOf } from '../session/folds';
import { Session } from '../session/session';
import type { Store } from '../store/store';
import { rootsOf } from '../subagent/isolation';
import type { AgentFactory } from './agent-factory';
import type { HarnessConfig } from './config';
import { HarnessError } from './errors';
import { rootAgentOf } from './root-agent';

// Root conversations made resident: a new one created (with an agent file's composition), a
// stored one opened from its own log (one open per session at a time), and the root agent
// built over a writer. A subagent is never opened here: the runtime resumes it as itself.

/** What root conversations need of the harness's parts. */
export interface RootSessionsDeps {
  store: Store;
  /** The live config object: `setDefaults` reaches the next session made or opened. */
  config: Pick<HarnessConfig, 'preset' | 'sandbox'>;
  project: ProjectFiles;
  /** The workspace folders' real paths (a new root's `cwd` is the first). */
  roots: readonly string[];
  factory: Pick<AgentFactory, 'build'>;
  /** The resident agents, roots and children. */
  agents: Pick<Map<string, Agent>, 'get' | 'has' | 'delete'>;
  /** Views hear that a released root left memory. */
  released(id: string): void;
  /** The rows' hook: a row still needs this settled root resident (an armed goal's next round). */
  holds(agent: Agent): boolean;
  /** The rows' hook for a session opened from its log (e.g. workflow runs a crash or reload left open are closed). */
  opened(agent: Agent): Promise<void>;
}

/** Sortable, unique, file-name safe: time prefix + random suffix. */
export function newSessionId(): string {
  return `s-${Date.now().toString(36)}-${randomUUID().slice(0, 8)}`;
}

/** Creates, opens and builds root conversations (the façade's `createSession`, `openSession`, `makeResident`). */
export class RootSessions {
  private readonly opening = new Map<string, Promise<Agent>>();
  /** Roots being let go of (`release`): an open of one waits until its writer is done. */
  private readonly releasing = new Map<string, Promise<void>>();

  constructor(private readonly d: RootSessionsDeps) {}

  /** A new root conversation; with `agent`, one with an agent defined in a file (its sandbox only narrows the deployment's). */
  async create(opts: { title?: string; agent?: string } = {}): Promise<Agent> {
    const { config, store } = this.d;
    const header: SessionHeader = { id: newSessionId(), createdAt: new Date().toISOString(), origin: 'user', delegationDepth: 0, cwd: this.d.roots[0] };
    if (opts.title) header.title = opts.title;
    if (config.preset) header.agentPreset = config.preset;
    const root = opts.agent === undefined ? undefined : rootAgentOf(this.d.project, opts.agent, config.sandbox);
    if (root) {
      header.agent = root.agent;
      header.title ??= root.agent.name;
    }
    const writer = new SessionWriter(Session.create(header), store, { published: false });
    if (root?.sandbox) await writer.append({ type: 'sandbox/mode', mode: root.sandbox, source: 'user' });
    await writer.publish();
    return this.makeResident(writer);
  }

  /**
   * The resident agent of a root session, or a cold resume from its own log. A subagent
   * is reached through `send` (the runtime rebuilds its composition from its descriptor).
   */
  async open(id: string): Promise<Agent> {
    const letGo = this.releasing.get(id);
    if (letGo) await letGo;
    const resident = this.d.agents.get(id);
    if (resident) return resident;
    const pending = this.opening.get(id);
    if (pending) return pending;
    const { store } = this.d;
    const p = (async () => {
      // Read and made resident in its log's turn (decision 0129): no write of a log no agent holds lands between.
      const agent = await store.logGate.run(id, async () => {
        const session = await store.inspect(id);
        // Never a subagent: as a root it would get the deployment's tools, not its parent's (the runtime resumes it as itself).
        if (descriptorOf(session.header, session.events))
          throw new HarnessError('NOT_ROOT', `${id} is a subagent, not a conversation of its own: send it a message (it wakes as itself), or fork it.`);
        return this.makeResident(new SessionWriter(session, store));
      });
      await agent.recover();
      await this.d.opened(agent); // e.g. workflow runs a crash or reload left open are closed
      // Messages a human's Stop kept wait for that human ("Send now"), also across a restart;
      // others accepted before a restart were promised: work through them.
      if (keptByStop(agent.session.events, agent.session.unclaimedInbox)) agent.pause();
      else agent.pump();
      return agent;
    })().finally(() => this.opening.delete(id));
    this.opening.set(id, p);
    return p;
  }

  /**
   * Let a settled root conversation go from memory (a host bounding what it keeps, e.g. `arbor
   * acp`, decision 0037): its log is whole on disk and `open` resumes it. Refused (false) while
   * it runs, waits on an approval, has queued work, a child of it is still resident, or a row
   * still holds it (an armed goal between two rounds: activation lives only in memory).
   */
  async release(id: string): Promise<boolean> {
    const a = this.d.agents.get(id);
    if (!a) return !this.opening.has(id);
    if (!this.releasable(id)) return false;
    const done = (async () => {
      // Its last writes perhaps not yet durable: a writer of its log meanwhile (a worktree record,
      // a policy switch) waits for them at its log's gate (decision 0129).
      await this.d.store.logGate.hold(id, a.dispose());
      if (this.d.agents.get(id) === a) this.d.agents.delete(id);
      this.d.released(id);
    })().finally(() => this.releasing.delete(id));
    this.releasing.set(id, done);
    await done;
    return true;
  }

  /** Whether `release` would let a root go now (one not resident, nor being opened, is a yes). */
  releasable(id: string): boolean {
    const a = this.d.agents.get(id);
    if (!a) return !this.opening.has(id);
    if (this.releasing.has(id) || a.activity === 'running' || !a.isSettled || a.awaitingApproval || this.d.holds(a)) return false;
    return !this.d.store.children(id).some((c) => this.d.agents.has(c.id));
  }

  /** Build the root agent over a writer (this deployment's model, tools, prompt and policy) and make it resident; no turn starts. */
  makeResident(writer: SessionWriter): Agent {
    const { config } = this.d;
    const a = writer.session.header.agent;
    // A way of "Try N ways" (decision 0061) is rooted in its worktree, here and at a cold resume, and may have its own model.
    const roots = rootsOf(writer.session.header, writer.session.events);
    const model = writer.session.header.bestOf?.model ?? a?.model;
    return this.d.factory.build(writer, {
      ...(config.preset ? { preset: config.preset } : {}),
      ownScope: `agent:${writer.id}`,
      ...(a?.persona ? { persona: { text: a.persona, ...(a.personaComplete ? { complete: true } : {}) } } : {}),
      ...(a?.toolFilter ? { toolFilter: a.toolFilter } : {}),
      ...(model ? { model } : {}),
      ...(roots ? { roots } : {}),
    }).agent;
  }
}
