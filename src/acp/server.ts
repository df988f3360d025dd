import * as acp from '@agentclientprotocol/sdk/unstable';
import type { Harness } from '../core/harness';
import { describeConfigError } from '../core/mcp/config';
import type { SandboxMode } from '../core/session/events';
import { invalidParams, invalidRequest, overLimit, unknownSession, workspaceUnavailable } from './errors';
import { Feed } from './feed';
import { acpMcpServers, ClientServers } from './mcp-servers';
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

/**
 * The most root sessions one connection keeps live (decision 0037, amended): past it, the idle
 * ones longest unused are released from memory (their logs are on disk; a prompt or
 * `session/load` brings one back). An editor keeps a handful of threads open; a fresh session
 * kept ~7 KB of heap (its agent, its feed entries), one prompted holds its transcript too.
 */
export const MAX_LIVE_SESSIONS = 256;
/** The most workspace roots (harness, store, MCP servers) one connection keeps open; past it an idle one is closed. */
export const MAX_WORKSPACES = 32;
/** How many released sessions are remembered (their id and root, ~100 bytes) so a prompt to one reopens it. */
export const MAX_REMEMBERED = 10_000;

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
  /** Roots released to bound memory, by id: their workspace root, oldest first (bounded). */
  private readonly released = new Map<string, string>();
  /** The MCP servers clients gave each root: a root closed to bound memory gets them back when it opens again. */
  private readonly clientServers = new ClientServers();
  /**
   * Prompts to a released session while it is found again (with awaits: room, its folder), by id:
   * under way from the call on, so a session/cancel meanwhile is not missed (decision 0100, amended s59).
   */
  private readonly returning = new Map<string, { cancelled: boolean }>();
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

  /**
   * A placement's node released (decision 0114): its sessions leave the table before this returns
   * its promise (a prompt to one is refused from then on; one under way is cancelled), then its
   * harness closes — its MCP servers and sandboxes with it — so nothing of it outlives its folder,
   * which the next node reuses.
   */
  async letGo(root: string): Promise<void> {
    const cancels: Promise<void>[] = [];
    for (const s of this.table.roots()) {
      if (s.root !== root) continue;
      if (s.prompt) cancels.push(this.cancel(s.id)); // (it looks the session up before its first await)
      this.table.remove(s.id);
    }
    for (const [id, r] of this.released) if (r === root) this.released.delete(id);
    await Promise.all(cancels);
    const closed = await this.opts.workspaces.closeRoot(root);
    if (closed) this.feeds.get(closed)?.dispose();
    if (closed) this.feeds.delete(closed);
  }

  /** Every prompt under way is cancelled (the client left, or SIGTERM). */
  async cancelAll(): Promise<void> {
    for (const p of this.returning.values()) p.cancelled = true;
    for (const s of this.table.roots()) if (s.prompt) await this.cancel(s.id);
  }

  dispose(): void {
    for (const f of this.feeds.values()) f.dispose();
  }

  private async cancel(sessionId: string): Promise<void> {
    const s = this.table.get(sessionId);
    const returning = this.returning.get(sessionId);
    if (returning && !s?.prompt) {
      // Being found again: the prompt sees it as it sends, and stops what it sent in the same tick.
      returning.cancelled = true;
      return;
    }
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
    const reopening = !this.opts.workspaces.isOpen(root);
    const harness = await this.harnessOfRoot(root).catch((err: unknown) => {
      if (err instanceof acp.RequestError) throw err;
      throw workspaceUnavailable(root, err);
    });
    const read = Array.isArray(mcpServers) && mcpServers.length > 0 ? acpMcpServers(mcpServers) : undefined;
    for (const e of read?.errors ?? []) this.opts.warn(`arbor acp: ${describeConfigError(e)}`);
    if (read) this.clientServers.given(root, read.servers);
    // The client's servers join this workspace's harness (its tools are every session's there),
    // ready before the answer; a root opened again after a close gets back all clients gave it
    // (this request's among them), whatever opens it: a prompt to a released session, or a new one.
    const servers = reopening ? this.clientServers.of(root) : (read?.servers ?? []);
    if (servers.length > 0) {
      harness.mcp.addServers(servers);
      await harness.mcp.whenSettled();
      for (const st of harness.mcp.states())
        if (st.phase === 'failed' && servers.some((x) => x.name === st.name))
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

  /**
   * A root's harness, below the workspace cap: before another root opens, the root opened
   * longest ago with no live session here (never the started-for folder) is closed; with none,
   * the open is refused. No await between the last check and the open (requests run concurrently).
   */
  private async harnessOfRoot(root: string): Promise<Harness> {
    const ws = this.opts.workspaces;
    while (!ws.isOpen(root) && ws.size >= MAX_WORKSPACES) {
      const idle = ws.roots().find((r) => !ws.isDefault(r) && !this.table.holds(r));
      if (idle === undefined)
        throw overLimit(
          'TOO_MANY_WORKSPACES',
          `cannot open ${root}: ${ws.size} workspaces are open on this connection (at most ${MAX_WORKSPACES}) and each has a live session; start another arbor acp for more folders, or open sessions of a folder already open`,
        );
      const closed = await ws
        .closeRoot(idle)
        .catch((err: unknown) => void this.opts.warn(`arbor acp: closing ${idle}: ${err instanceof Error ? err.message : String(err)}`));
      if (closed) this.feeds.get(closed)?.dispose();
      if (closed) this.feeds.delete(closed);
    }
    return ws.harness(root);
  }

  /**
   * Below the session cap before another root session is added: the idle roots longest unused
   * are released (nothing runs in them; their logs are whole on disk). A session with a prompt
   * under way, or still working, is never released; with only such sessions, the add is refused.
   */
  private async roomForSession(after = false): Promise<void> {
    // Before an add: room for one more, or a refusal. After it (requests run concurrently): back to the cap, best effort.
    while (this.table.rootCount >= MAX_LIVE_SESSIONS + (after ? 1 : 0)) {
      const idle = this.table.roots().find((s) => !s.prompt && s.harness.releasable(s.id));
      if (!idle && after) return;
      if (!idle)
        throw overLimit(
          'TOO_MANY_SESSIONS',
          `${this.table.rootCount} sessions on this connection are working (at most ${MAX_LIVE_SESSIONS} are kept live); wait for a prompt to finish or send session/cancel, then try again`,
        );
      this.table.remove(idle.id);
      this.released.delete(idle.id);
      this.released.set(idle.id, idle.root);
      if (this.released.size > MAX_REMEMBERED) this.released.delete(this.released.keys().next().value!);
      await idle.harness.release(idle.id);
    }
  }

  private async modes(h: Harness, id: string): Promise<acp.SessionModeState> {
    const summary = await h.store.summary(id);
    return { currentModeId: summary.policy.sandbox ?? h.config.sandbox, availableModes: MODES };
  }

  /** A session of this connection; one released to bound memory comes back as it was (its log is on disk). */
  private async live(sessionId: string): Promise<AcpSession> {
    const s = this.liveNow(sessionId);
    if (s) return s;
    const root = this.released.get(sessionId);
    if (root === undefined) throw unknownSession(sessionId);
    await this.roomForSession();
    const { harness } = await this.open(root, []);
    if (!harness.store.has(sessionId)) throw unknownSession(sessionId);
    this.released.delete(sessionId);
    const back = this.table.add({ id: sessionId, harness, root, owner: sessionId });
    this.table.touch(back.id);
    return back;
  }

  /** `live` for a prompt: marked `returning` (a cancel sets `prompt.cancelled`) until the prompt takes the session. */
  private async returned(sessionId: string, prompt: { cancelled: boolean }): Promise<AcpSession> {
    if (this.returning.has(sessionId))
      throw invalidRequest('PROMPT_RUNNING', `session ${sessionId} is still answering a prompt; wait for it or send session/cancel`);
    this.returning.set(sessionId, prompt);
    // Left marked once found: the prompt unmarks it as it takes the session (no tick between).
    return this.live(sessionId).catch((err: unknown) => {
      this.returning.delete(sessionId);
      throw err;
    });
  }

  /** A session of this connection in the table, found without an await (undefined: released, or unknown). */
  private liveNow(sessionId: string): AcpSession | undefined {
    const s = this.table.get(sessionId);
    if (s) this.table.touch(s.id);
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
        const place = this.opts.workspaces.rootOf(params.cwd);
        await this.roomForSession();
        const { root, harness } = await this.open(place, params.mcpServers);
        const agent = await harness.createSession();
        this.table.add({ id: agent.id, harness, root, owner: agent.id });
        await this.roomForSession(true);
        return { sessionId: agent.id, modes: await this.modes(harness, agent.id) };
      },
      'session/load': async ({ params }) => {
        const id = params.sessionId;
        const place = this.opts.workspaces.rootOf(params.cwd);
        // A folder with no store has no session to load: nothing is made in it.
        if (!this.opts.workspaces.stored(place)) throw unknownSession(id);
        if (!this.table.get(id)) await this.roomForSession();
        const { root, harness } = await this.open(place, params.mcpServers);
        if (!harness.store.has(id)) throw unknownSession(id);
        if ((await treeParent(harness, id)) !== undefined) throw invalidParams('NOT_A_ROOT', `session ${id} is a subagent; load its root conversation`);
        this.released.delete(id);
        const s = this.table.add({ id, harness, root, owner: id });
        this.table.touch(id);
        await this.replay(s);
        await this.roomForSession(true);
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
        const s = await this.live(params.sessionId);
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
        // Under way from the call on (decision 0100, amended s59): found in the same tick when it can
        // be (`s.prompt`, the send's mark); a session released to bound memory is marked `returning`
        // while it is found again, so a session/cancel dispatched right after it is never missed.
        const prompt = { cancelled: false };
        const s = this.liveNow(params.sessionId) ?? (await this.returned(params.sessionId, prompt));
        if (this.returning.get(s.id) === prompt) this.returning.delete(s.id);
        if (s.parent !== undefined) throw invalidRequest('NOT_A_ROOT', `session ${s.id} is a subagent: it takes messages from its parent`);
        if (s.prompt) throw invalidRequest('PROMPT_RUNNING', `session ${s.id} is still answering a prompt; wait for it or send session/cancel`);
        const text = promptText(params.prompt);
        s.prompt = prompt;
        try {
          let from = 0;
          let before = spentUnder(s.harness.store, s.id);
          // Through the harness's send: a session/cancel that lands while a session not in memory
          // is opened from its log keeps the prompt, paused, and runs nothing (decision 0100).
          const sent = s.harness.send(s.id, text, (opened) => {
            from = opened.session.events.length;
            before = spentUnder(s.harness.store, s.id);
          });
          // Cancelled while the session was found again: stopped in the send's tick, the prompt is kept, paused.
          if (prompt.cancelled) void this.cancel(s.id);
          const agent = await sent;
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
