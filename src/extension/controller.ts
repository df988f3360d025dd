import { randomUUID } from 'node:crypto';
import type { Harness } from '../core/harness';
import type { ApprovalDecision, ApprovalPort, ApprovalRequest } from '../core/policy/approval';
import type { SessionEvent } from '../core/session/events';
import { describeInvalid, isWebviewToHost, type ApprovalPolicy, type ApprovalPrompt, type SandboxMode, type HostToWebview, type PanelSettings, type WebviewToHost } from '../protocol';
import { page, toEntry } from './presenter/transcript';
import { StreamThrottle } from './presenter/stream-throttle';
import { TreeModel } from './presenter/tree-model';

/** One connected webview: the side panel or a transcript tab. */
export interface ViewPort {
  readonly view: 'panel' | 'transcript';
  /** The session a transcript tab shows; the panel's selection otherwise. */
  sessionId?: string;
  post(msg: HostToWebview): void;
}

export interface ControllerHooks {
  settings(): PanelSettings;
  openTranscript(sessionId: string): void;
  log(level: 'info' | 'warn' | 'error', text: string): void;
  /** Wrap long work (a cold resume) in host progress UI. */
  progress<T>(title: string, work: () => Promise<T>): Promise<T>;
  /** Show the sandbox / approval picker (for one session when given). */
  pickPolicy?(sessionId: string | undefined): void;
}

const PAGE = 200;
type Handlers = { [K in WebviewToHost['type']]: (port: ViewPort, msg: Extract<WebviewToHost, { type: K }>) => Promise<void> | void };

/**
 * The host side of the panel and transcript tabs: validates every message, answers with a
 * snapshot on ready and deltas afterwards, and routes user intents into the harness.
 * It knows no VS Code API (hooks do), so it is tested without a VS Code.
 */
export class PanelController implements ApprovalPort {
  private readonly ports = new Set<ViewPort>();
  private readonly tree: TreeModel;
  private readonly throttle: StreamThrottle;
  private readonly approvals = new Map<string, { prompt: ApprovalPrompt; resolve(d: ApprovalDecision): void }>();
  private harness: Harness | undefined;
  private selected: string | undefined;
  private readonly offs: (() => void)[] = [];

  constructor(
    private readonly getHarness: () => Promise<Harness>,
    private readonly hooks: ControllerHooks,
  ) {
    this.tree = new TreeModel({
      isRunning: (id) => this.harness?.resident(id)?.status === 'running',
      hasLiveChildren: (id) => !!this.harness && this.harness.subagents.residency.ownsLive(id),
    });
    this.throttle = new StreamThrottle((sessionId, kind, delta) => this.toSession(sessionId, { type: 'stream/delta', sessionId, kind, delta }));
  }

  /** Running agents, for the status bar. */
  get runningCount(): number {
    return this.tree.nodes().filter((n) => n.status === 'running').length;
  }

  connect(port: ViewPort): () => void {
    this.ports.add(port);
    return () => this.ports.delete(port);
  }

  /** Entry point for every message from a webview. Bad input gets an error reply, never a crash. */
  async receive(port: ViewPort, msg: unknown): Promise<void> {
    if (!isWebviewToHost(msg)) {
      this.hooks.log('warn', `rejected webview message: ${describeInvalid(msg)}`);
      port.post({ type: 'message/rejected', code: 'BAD_MESSAGE', detail: describeInvalid(msg) });
      return;
    }
    try {
      await (this.handlers[msg.type] as (p: ViewPort, m: WebviewToHost) => Promise<void> | void)(port, msg);
    } catch (err) {
      const text = err instanceof Error ? err.message : String(err);
      this.hooks.log('error', `${msg.type} failed: ${text}`);
      if ('id' in msg && typeof msg.id === 'string') port.post({ type: 'request/done', id: msg.id, ok: false, error: text });
    }
  }

  private readonly handlers: Handlers = {
    'webview/ready': async (port, m) => {
      const h = await this.ensure();
      if (m.view === 'transcript') port.sessionId = m.sessionId;
      else port.sessionId = this.selected;
      port.post({ type: 'state/snapshot', nodes: this.tree.nodes(), ...(port.sessionId ? { selected: port.sessionId } : {}), settings: this.hooks.settings(), approvals: [...this.approvals.values()].map((a) => a.prompt) });
      if (port.sessionId && h.store.has(port.sessionId)) await this.sendTranscript(port, port.sessionId);
    },
    'session/select': async (port, m) => {
      const h = await this.ensure();
      if (!h.store.has(m.sessionId)) throw new Error(`No session ${m.sessionId}.`);
      if (port.view === 'panel') this.selected = m.sessionId;
      port.sessionId = m.sessionId;
      await this.sendTranscript(port, m.sessionId);
    },
    'session/new': (port, m) => {
      // Lazily: an empty conversation is never stored; `chat/send` without a session creates it.
      if (port.view === 'panel') this.newDraft();
      port.post({ type: 'request/done', id: m.id, ok: true });
    },
    'policy/pick': (_port, m) => this.hooks.pickPolicy?.(m.sessionId),
    'chat/send': async (port, m) => {
      const h = await this.ensure();
      let id = m.sessionId;
      if (!id) {
        id = (await h.createSession({ title: m.text.slice(0, 80) })).id;
        this.select(port, id);
      }
      const target = id;
      const cold = !h.resident(target) && (await h.isSubagent(target));
      await (cold ? this.hooks.progress(`Resuming ${target}…`, () => h.send(target, m.text)) : h.send(target, m.text));
      port.post({ type: 'request/done', id: m.id, ok: true, sessionId: target });
    },
    'agent/interrupt': async (port, m) => {
      await this.interrupt(m.sessionId);
      port.post({ type: 'request/done', id: m.id, ok: true, sessionId: m.sessionId });
    },
    'session/fork': async (port, m) => {
      const fork = await this.forkAndShow(m.sessionId, m.seq, port.view);
      port.post({ type: 'request/done', id: m.id, ok: true, sessionId: fork });
    },
    'transcript/open': (_port, m) => this.hooks.openTranscript(m.sessionId),
    'transcript/more': async (port, m) => {
      const s = await this.sessionOf(m.sessionId);
      const p = page(s.events, m.beforeSeq, PAGE);
      port.post({ type: 'transcript/page', id: m.id, sessionId: m.sessionId, entries: p.entries, hasMore: p.hasMore });
    },
    'approval/answer': (_port, m) => {
      const a = this.approvals.get(m.requestId);
      if (!a) return; // already answered (another view, or the turn was cancelled)
      a.resolve(m.decision);
    },
  };

  /** The human's approval port: every view shows the request; the first answer wins. */
  ask(request: ApprovalRequest, signal?: AbortSignal): Promise<ApprovalDecision> {
    const requestId = randomUUID();
    const prompt: ApprovalPrompt = { requestId, sessionId: request.sessionId, lineage: request.lineage ?? [request.sessionId], tool: request.tool, summary: request.summary, reason: request.reason };
    return new Promise<ApprovalDecision>((resolve) => {
      const done = (decision: ApprovalDecision) => {
        if (!this.approvals.delete(requestId)) return;
        signal?.removeEventListener('abort', onAbort);
        this.tree.setActivity(request.sessionId, undefined);
        this.broadcast({ type: 'approval/resolved', requestId, decision });
        this.pushNode(request.sessionId);
        resolve(decision);
      };
      const onAbort = () => done('deny');
      signal?.addEventListener('abort', onAbort, { once: true });
      this.approvals.set(requestId, { prompt, resolve: done });
      this.tree.setActivity(request.sessionId, 'waiting for approval');
      this.pushNode(request.sessionId);
      this.broadcast({ type: 'approval/requested', prompt });
    });
  }

  // ── commands shared with the VS Code command palette ───────────────────────

  async interrupt(sessionId: string): Promise<void> {
    const h = await this.ensure();
    const agent = h.resident(sessionId);
    if (!agent || agent.status !== 'running') throw new Error(`Session ${sessionId} is not running.`);
    await agent.cancel('interrupted', { keepInbox: true });
  }

  async fork(sessionId: string, seq: number): Promise<string> {
    const agent = await (await this.ensure()).forkSession(sessionId, seq);
    return agent.id;
  }

  /**
   * Fork and show the fork the same way wherever it was asked for (the message's button or its
   * "Fork Conversation" menu): from a transcript tab in a tab of its own, and selected in the panel.
   */
  async forkAndShow(sessionId: string, seq: number, from: 'panel' | 'transcript'): Promise<string> {
    const fork = await this.fork(sessionId, seq);
    if (from === 'transcript') this.hooks.openTranscript(fork);
    this.selectEverywhere(fork);
    return fork;
  }

  async send(sessionId: string, text: string): Promise<void> {
    const h = await this.ensure();
    await h.send(sessionId, text);
  }

  async events(sessionId: string): Promise<readonly SessionEvent[]> {
    return (await this.sessionOf(sessionId)).events;
  }

  /** Compact a conversation now (waits for its running turn). */
  async compact(sessionId: string): Promise<string> {
    const h = await this.ensure();
    if (await h.isSubagent(sessionId)) throw new Error('Compact a subagent from its parent; Arbor compacts conversations you own.');
    const r = await (await h.openSession(sessionId)).compact();
    return r.outcome === 'committed' ? 'Compacted: the earlier conversation is now a summary (the raw log keeps everything).' : `Not compacted (${r.outcome}${r.error ? `: ${r.error}` : ''}).`;
  }

  async deleteSession(sessionId: string): Promise<string[]> {
    const ids = await (await this.ensure()).deleteSession(sessionId);
    for (const id of ids) {
      this.tree.remove(id);
      this.broadcast({ type: 'tree/removed', id });
    }
    return ids;
  }

  /** Ids and titles for quick picks. */
  async sessions(): Promise<{ id: string; label: string; running: boolean; compactable: boolean }[]> {
    await this.ensure();
    return this.tree.nodes().map((n) => ({
      id: n.id,
      label: n.label ?? n.title ?? n.id,
      running: n.status === 'running',
      // As the tree's context key: a conversation you own that has had a turn.
      compactable: n.origin !== 'subagent' && n.mode === undefined && n.lastStopReason !== undefined,
    }));
  }

  settingsChanged(): void {
    this.broadcast({ type: 'settings/changed', settings: this.hooks.settings() });
  }

  /** "+": nothing selected, the input focused; the conversation is created by its first message. */
  newDraft(): void {
    this.selected = undefined;
    for (const p of this.ports) {
      if (p.view !== 'panel') continue;
      p.sessionId = undefined;
      p.post({ type: 'draft/start' });
    }
  }

  /** Set a session's own sandbox / approval (appended to its log) and show it on its node. */
  async setPolicy(sessionId: string, policy: { sandbox?: SandboxMode; approval?: ApprovalPolicy }): Promise<void> {
    const h = await this.ensure();
    await h.setPolicy(sessionId, policy);
    // A session that is not resident is written through a writer of its own (no event fired): refold.
    this.tree.foldAll(sessionId, (await this.sessionOf(sessionId)).events);
    this.pushNode(sessionId);
  }

  /** The panel's selected session, if any (the picker's "this session"). */
  get selectedSession(): string | undefined {
    return this.selected;
  }

  focusInput(): void {
    for (const p of this.ports) if (p.view === 'panel') p.post({ type: 'input/focus' });
  }

  selectEverywhere(sessionId: string): void {
    this.track(sessionId);
    for (const p of this.ports) if (p.view === 'panel') this.select(p, sessionId);
  }

  async dispose(): Promise<void> {
    this.throttle.dispose();
    for (const off of this.offs) off();
    for (const a of this.approvals.values()) a.resolve('deny');
  }

  // ── internals ──────────────────────────────────────────────────────────────

  private async ensure(): Promise<Harness> {
    if (this.harness) return this.harness;
    const h = await this.getHarness();
    if (this.harness) return this.harness;
    this.harness = h;
    for (const header of h.store.list()) this.tree.addHeader(header);
    this.offs.push(h.onEvent((id, e) => this.onEvent(id, e)));
    this.offs.push(
      h.onDelta((id, kind, delta) => {
        this.throttle.push(id, kind, delta);
        this.tree.streamed(id, delta.length);
        const doing = kind === 'text' ? 'streaming' : 'reasoning';
        if (this.tree.node(id)?.activity !== doing) {
          this.tree.setActivity(id, doing);
          this.pushNode(id);
        }
      }),
    );
    this.offs.push(
      h.onIdle((id) => {
        this.pushNode(id);
        const parent = this.tree.node(id)?.parentId;
        if (parent) this.pushNode(parent);
      }),
    );
    void this.foldAll(h);
    return h;
  }

  /** Fill tokens, stops and labels for every node after the first snapshot, tree by tree. */
  private async foldAll(h: Harness): Promise<void> {
    for (const header of h.store.list()) {
      try {
        const s = h.resident(header.id)?.session ?? (await h.store.inspect(header.id));
        this.tree.foldAll(header.id, s.events);
        this.pushNode(header.id);
      } catch (err) {
        this.hooks.log('warn', `could not read ${header.id}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  }

  private onEvent(sessionId: string, e: SessionEvent): void {
    const h = this.harness!;
    if (!this.tree.has(sessionId)) {
      const header = h.store.header(sessionId) ?? h.resident(sessionId)?.session.header;
      if (header) this.tree.addHeader(header);
    }
    this.tree.apply(sessionId, e);
    // The stream is superseded by the message it produced: flush deltas first, in order.
    if (e.type === 'assistant/message') this.throttle.flush(sessionId);
    const entry = toEntry(e);
    if (entry) this.toSession(sessionId, { type: 'transcript/append', sessionId, entries: [entry] });
    this.pushNode(sessionId);
    const parent = this.tree.node(sessionId)?.parentId;
    if (parent && (e.type === 'turn/start' || e.type === 'turn/end')) this.pushNode(parent);
    // A settlement notice means the child was released: its status changed without an event of its own.
    if (e.type === 'user/message' && e.source.kind === 'subagent-settled' && typeof e.source.fromSession === 'string') this.pushNode(e.source.fromSession);
  }

  private pushNode(id: string): void {
    const node = this.tree.node(id);
    if (node) this.broadcast({ type: 'tree/node', node });
  }

  private async sendTranscript(port: ViewPort, sessionId: string): Promise<void> {
    const s = await this.sessionOf(sessionId);
    const p = page(s.events, s.events.length, PAGE);
    port.post({ type: 'transcript/reset', sessionId, entries: p.entries, hasMore: p.hasMore });
  }

  private async sessionOf(id: string) {
    const h = await this.ensure();
    return h.resident(id)?.session ?? (await h.store.inspect(id));
  }

  /**
   * A session made without an event of its own yet (a fork, a new conversation): put its
   * node in the tree now, before it is selected, not at its first event.
   */
  private track(id: string): void {
    const h = this.harness;
    if (!h || this.tree.has(id)) return;
    const agent = h.resident(id);
    const header = agent?.session.header ?? h.store.header(id);
    if (!header) return;
    this.tree.addHeader(header);
    if (agent) this.tree.foldAll(id, agent.session.events);
    this.pushNode(id);
  }

  private select(port: ViewPort, sessionId: string): void {
    this.track(sessionId);
    if (port.view === 'transcript') {
      // A transcript tab stays on its session: a fork made there opens in a tab of its own.
      this.hooks.openTranscript(sessionId);
      this.selectEverywhere(sessionId);
      return;
    }
    this.selected = sessionId;
    port.sessionId = sessionId;
    port.post({ type: 'session/selected', sessionId });
    void this.sendTranscript(port, sessionId).catch((err) => this.hooks.log('warn', String(err)));
  }

  private toSession(sessionId: string, msg: HostToWebview): void {
    for (const p of this.ports) if (p.sessionId === sessionId) p.post(msg);
  }

  private broadcast(msg: HostToWebview): void {
    for (const p of this.ports) p.post(msg);
  }
}
