import * as acp from '@agentclientprotocol/sdk/unstable';
import type { Harness } from '../core/harness';
import { describeConfigError } from '../core/mcp/config';
import type { SandboxMode } from '../core/session/events';
import { invalidParams, invalidRequest, unknownSession, workspaceUnavailable } from './errors';
import { Feed } from './feed';
import { acpMcpServers } from './mcp-servers';
import { promptText, settleSubtree, spentUnder, stopReasonOf, usageBetween } from './prompt';
import { type AcpSession, SessionTable } from './sessions';
import type { NodeSync } from './sync';
import { announcement, treeParent } from './tree';
import { replayUpdates, type Update } from './updates';
import type { Workspaces } from './workspaces';

/** Arbor's sandbox modes, offered as ACP session modes. */
export const MODES: acp.SessionMode[] = [
  { id: 'read-only', name: 'Read only', description: 'Nothing is written; commands run in the OS sandbox with the file system read-only.' },
  { id: 'workspace-write', name: 'Workspace write', description: 'File tools and commands write only inside the workspace; protected paths need approval.' },
  { id: 'full-access', name: 'Full access', description: 'No OS sandbox: writes anywhere, commands run unconfined.' },
];

export interface ServerOptions {
  version: string;
  workspaces: Workspaces;
  /** Announce children even if the client did not advertise `subagents` (for clients that predate it). */
  forceSubagents?: boolean;
  /** A placement's nodes with `--node-repos` (decision 0081): the `_arbor/sync/*` methods. */
  sync?: NodeSync;
  warn(line: string): void;
}

type Handlers = { [M in acp.AgentRequestMethod]?: acp.AgentRequestHandlersByMethod[M] };

/**
 * `arbor acp`'s agent side (decision 0037): one connection, the sessions it created or
 * loaded, a live feed per harness, and a handler per ACP method.
 */
export class AcpServer {
  readonly table = new SessionTable();
  private readonly feeds = new Map<Harness, Feed>();
  private subagents = false;
  private connection: acp.AgentConnection | undefined;

  constructor(private readonly opts: ServerOptions) {}

  /** The connection's client context, while it is open. */
  client(): acp.AgentContext | undefined {
    return this.connection && !this.connection.signal.aborted ? this.connection.client : undefined;
  }

  harnessOf(sessionId: string): Harness | undefined {
    const known = this.table.get(sessionId);
    if (known) return known.harness;
    for (const [h] of this.feeds) if (h.store.header(sessionId)) return h;
    return undefined;
  }

  feedOf(sessionId: string): Feed | undefined {
    const h = this.harnessOf(sessionId);
    return h ? this.feeds.get(h) : undefined;
  }

  connect(stream: acp.Stream): acp.AgentConnection {
    const app = acp.agent({ name: 'arbor' });
    for (const [method, handler] of Object.entries(this.handlers())) app.onRequest(method as acp.AgentRequestMethod, handler as never);
    for (const [method, handler] of this.opts.sync?.methods() ?? [])
      app.onRequest(
        method,
        (p: unknown) => p,
        ({ params }) => handler(params),
      );
    app.onNotification(acp.methods.agent.session.cancel, ({ params }) => {
      void this.cancel(params.sessionId);
      return undefined;
    });
    this.connection = app.connect(stream);
    return this.connection;
  }

  /** Every prompt under way is cancelled (the client left, or SIGTERM). */
  async cancelAll(): Promise<void> {
    for (const s of this.table.roots()) if (s.prompt) await this.cancel(s.id);
  }

  dispose(): void {
    for (const f of this.feeds.values()) f.dispose();
  }

  private async cancel(sessionId: string): Promise<void> {
    const s = this.table.get(sessionId);
    if (!s) {
      this.opts.warn(`arbor acp: session/cancel for unknown session ${sessionId} ignored`);
      return;
    }
    if (s.parent === undefined && s.prompt) s.prompt.cancelled = true;
    // The session's running turn and every running descendant's (a child alone when it is one).
    await s.harness
      .interruptSubtree(sessionId)
      .catch((err) => this.opts.warn(`arbor acp: cancel ${sessionId}: ${err instanceof Error ? err.message : String(err)}`));
  }

  private send(sessionId: string, update: Update): Promise<void> {
    const c = this.client();
    return c ? c.notify(acp.methods.client.session.update, { sessionId, update }) : Promise.resolve();
  }

  private async open(root: string, mcpServers: unknown): Promise<{ root: string; harness: Harness }> {
    const harness = await this.opts.workspaces.harness(root).catch((err: unknown) => {
      throw workspaceUnavailable(root, err);
    });
    if (Array.isArray(mcpServers) && mcpServers.length > 0) {
      // The client's servers join this workspace's harness (its tools are every session's there), ready before the answer.
      const read = acpMcpServers(mcpServers);
      for (const e of read.errors) this.opts.warn(`arbor acp: ${describeConfigError(e)}`);
      harness.mcp.addServers(read.servers);
      await harness.mcp.whenSettled();
      for (const st of harness.mcp.states())
        if (st.phase === 'failed' && read.servers.some((x) => x.name === st.name))
          this.opts.warn(`arbor acp: MCP server "${st.name}" failed: ${st.why ?? 'no reason given'}`);
    }
    if (!this.feeds.has(harness)) {
      this.feeds.set(
        harness,
        new Feed(
          harness,
          root,
          this.table,
          (id, u) => this.send(id, u),
          this.subagents,
          (err) => this.opts.warn(`arbor acp: feed: ${err instanceof Error ? err.message : String(err)}`),
        ),
      );
    }
    return { root, harness };
  }

  private async modes(h: Harness, id: string): Promise<acp.SessionModeState> {
    const summary = await h.store.summary(id);
    return { currentModeId: summary.policy.sandbox ?? h.config.sandbox, availableModes: MODES };
  }

  private root(sessionId: string): AcpSession {
    const s = this.table.get(sessionId);
    if (!s) throw unknownSession(sessionId);
    return s;
  }

  private handlers(): Handlers {
    return {
      initialize: ({ params }) => {
        this.subagents = !!params.clientCapabilities?.subagents || !!this.opts.forceSubagents;
        return {
          protocolVersion: acp.PROTOCOL_VERSION,
          agentCapabilities: {
            loadSession: true,
            promptCapabilities: { image: false, audio: false, embeddedContext: true },
            mcpCapabilities: { http: true, sse: false },
            sessionCapabilities: { list: {} },
          },
          agentInfo: { name: 'arbor', title: 'Arbor', version: this.opts.version },
          authMethods: [],
        };
      },
      authenticate: () => ({}),
      'session/new': async ({ params }) => {
        const { root, harness } = await this.open(this.opts.workspaces.rootOf(params.cwd), params.mcpServers);
        const agent = await harness.createSession();
        this.table.add({ id: agent.id, harness, root, owner: agent.id });
        return { sessionId: agent.id, modes: await this.modes(harness, agent.id) };
      },
      'session/load': async ({ params }) => {
        const id = params.sessionId;
        const place = this.opts.workspaces.rootOf(params.cwd);
        // A folder with no store has no session to load: nothing is made in it.
        if (!this.opts.workspaces.stored(place)) throw unknownSession(id);
        const { root, harness } = await this.open(place, params.mcpServers);
        if (!harness.store.has(id)) throw unknownSession(id);
        if ((await treeParent(harness, id)) !== undefined) throw invalidParams('NOT_A_ROOT', `session ${id} is a subagent; load its root conversation`);
        const s = this.table.add({ id, harness, root, owner: id });
        await this.replay(s);
        return { modes: await this.modes(harness, id) };
      },
      'session/list': async ({ params }) => {
        // Only folders with a store are looked in: a list makes none.
        const ws = this.opts.workspaces;
        const wanted = params.cwd ? ws.rootOf(params.cwd) : undefined;
        const places = wanted ? (ws.stored(wanted) ? [await this.open(wanted, [])] : []) : await ws.opened();
        if (!wanted && places.length === 0 && ws.stored(ws.rootOf(ws.defaultRoot))) places.push(await this.open(ws.rootOf(ws.defaultRoot), []));
        const sessions: acp.SessionInfo[] = [];
        for (const { root, harness } of places) {
          for (const header of harness.store.list()) {
            if ((await treeParent(harness, header.id)) !== undefined) continue;
            sessions.push({ sessionId: header.id, cwd: header.cwd ?? root, ...(header.title ? { title: header.title } : {}) });
          }
        }
        return { sessions };
      },
      'session/set_mode': async ({ params }) => {
        const s = this.root(params.sessionId);
        // A child runs under what its parent gave it (policy snapshot): a client switching it could widen it past its parent.
        if (s.parent !== undefined)
          throw invalidRequest('NOT_A_ROOT', `session ${s.id} is a subagent: it keeps the mode its parent gave it; set the mode of its root conversation`);
        const mode = MODES.find((m) => m.id === params.modeId);
        if (!mode) throw invalidParams('UNKNOWN_MODE', `mode ${params.modeId} is not one of ${MODES.map((m) => m.id).join(', ')}`);
        await s.harness.setPolicy(s.id, { sandbox: mode.id as SandboxMode });
        await this.send(s.id, { sessionUpdate: 'current_mode_update', currentModeId: mode.id });
        return {};
      },
      'session/prompt': async ({ params }) => {
        const s = this.root(params.sessionId);
        if (s.parent !== undefined) throw invalidRequest('NOT_A_ROOT', `session ${s.id} is a subagent: it takes messages from its parent`);
        if (s.prompt) throw invalidRequest('PROMPT_RUNNING', `session ${s.id} is still answering a prompt; wait for it or send session/cancel`);
        const text = promptText(params.prompt);
        const prompt = { cancelled: false };
        s.prompt = prompt;
        try {
          const agent = await s.harness.openSession(s.id);
          const from = agent.session.events.length;
          const before = spentUnder(s.harness.store, s.id);
          await agent.accept(text, { kind: 'user' });
          await settleSubtree(s.harness, s.id);
          await this.feeds.get(s.harness)?.drain();
          const usage = usageBetween(before, spentUnder(s.harness.store, s.id));
          if (prompt.cancelled) return { stopReason: 'cancelled', ...(usage ? { usage } : {}) };
          return { stopReason: stopReasonOf(agent.session.events, from), ...(usage ? { usage } : {}) };
        } finally {
          s.prompt = undefined;
        }
      },
    };
  }

  /** `session/load`: the transcript as updates, in order; with subagents, each descendant announced and replayed under its own id. */
  private async replay(s: AcpSession): Promise<void> {
    const h = s.harness;
    const session = h.resident(s.id)?.session ?? (await h.store.inspect(s.id));
    const cwd = session.header.cwd ?? s.root;
    for (const e of session.events) for (const u of replayUpdates(e, cwd)) await this.send(s.id, u);
    if (!this.subagents) return;
    for (const c of h.store.children(s.id)) {
      if ((await treeParent(h, c.id)) !== s.id) continue;
      const ann = await announcement(h, c.id);
      const child = this.table.add({ id: c.id, harness: h, root: s.root, owner: s.owner, parent: s.id, state: JSON.stringify(ann.state) });
      await this.send(s.id, { sessionUpdate: 'subagent_update', ...ann });
      await this.replay(child);
    }
  }
}
