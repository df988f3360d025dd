import type { SessionEvent, SessionHeader } from '../../core/session/events';
import type { NodeStatus, TreeNode } from '../../protocol';

/** What the runtime knows now that the log does not say: residency and running turns. */
export interface LiveProbe {
  isRunning(id: string): boolean;
  /** A resident continuable child or one-shot not yet released. */
  isResidentChild(id: string): boolean;
  /** Has children that are resident (running or waiting). */
  hasLiveChildren(id: string): boolean;
}

interface Folded {
  lastStopReason?: TreeNode['lastStopReason'];
  tokens: TreeNode['tokens'];
  reports: number;
  label?: string;
  provider?: string;
  mode?: TreeNode['mode'];
  seedLength: number;
}

/**
 * The delegation tree as the UI shows it: headers plus a fold of each session's log
 * (tokens, cache hits, reports, last stop reason, descriptor), updated per event.
 */
export class TreeModel {
  private readonly folds = new Map<string, Folded>();
  private readonly headers = new Map<string, SessionHeader>();
  private readonly activity = new Map<string, { text: string; since: number }>();

  constructor(private readonly probe: LiveProbe) {}

  has(id: string): boolean {
    return this.headers.has(id);
  }

  addHeader(h: SessionHeader): void {
    this.headers.set(h.id, h);
    if (!this.folds.has(h.id)) this.folds.set(h.id, { tokens: { prompt: 0, completion: 0, cacheHit: 0 }, reports: 0, seedLength: h.seedLength ?? 0 });
  }

  remove(id: string): void {
    this.headers.delete(id);
    this.folds.delete(id);
    this.activity.delete(id);
  }

  /** Replace a session's fold with one over its whole log (on first load). */
  foldAll(id: string, events: readonly SessionEvent[]): void {
    const h = this.headers.get(id);
    if (!h) return;
    this.folds.set(id, { tokens: { prompt: 0, completion: 0, cacheHit: 0 }, reports: 0, seedLength: h.seedLength ?? 0 });
    for (const e of events) this.apply(id, e);
  }

  /** Fold one new event; returns true when the node's view changed. */
  apply(id: string, e: SessionEvent): boolean {
    const f = this.folds.get(id);
    if (!f) return false;
    // A fork's seed is the parent's history: its usage and stops are not this node's.
    if (e.seq < f.seedLength) return false;
    switch (e.type) {
      case 'assistant/message':
        if (e.usage) {
          f.tokens.prompt += e.usage.promptTokens;
          f.tokens.completion += e.usage.completionTokens;
          f.tokens.cacheHit += e.usage.cacheHitTokens ?? 0;
        }
        this.setActivity(id, e.toolCalls?.length ? `tool ${e.toolCalls.map((c) => c.name).join(', ')}` : undefined);
        return true;
      case 'request/header':
        this.setActivity(id, 'thinking');
        return true;
      case 'turn/start':
        this.setActivity(id, 'thinking');
        return true;
      case 'turn/end':
        f.lastStopReason = e.stopReason;
        this.setActivity(id, undefined);
        return true;
      case 'tool/result':
        if (e.name === 'report' && !e.isError) f.reports++;
        return e.name === 'report';
      case 'subagent/descriptor':
        f.label = e.label;
        f.provider = e.provider;
        f.mode = e.mode;
        return true;
      case 'user/message':
        return e.source.kind === 'subagent-settled' || e.source.kind === 'subagent-report';
      default:
        return false;
    }
  }

  setActivity(id: string, text: string | undefined): void {
    if (text === undefined) this.activity.delete(id);
    else if (this.activity.get(id)?.text !== text) this.activity.set(id, { text, since: Date.now() });
  }

  node(id: string): TreeNode | undefined {
    const h = this.headers.get(id);
    const f = this.folds.get(id);
    if (!h || !f) return undefined;
    const status = this.status(h, f);
    const act = status === 'running' ? this.activity.get(id) : this.probe.hasLiveChildren(id) ? { text: 'waiting for children', since: this.activity.get(id)?.since ?? Date.now() } : undefined;
    return {
      id,
      ...(h.parentSession ? { parentId: h.parentSession } : {}),
      origin: h.origin,
      ...(h.title ? { title: h.title } : {}),
      ...(f.label ? { label: f.label } : {}),
      ...(f.provider ? { provider: f.provider } : {}),
      ...(f.mode ? { mode: f.mode } : {}),
      depth: h.delegationDepth ?? 0,
      status,
      ...(act ? { activity: act.text, activeSince: act.since } : {}),
      ...(f.lastStopReason ? { lastStopReason: f.lastStopReason } : {}),
      tokens: { ...f.tokens },
      reports: f.reports,
      createdAt: h.createdAt,
    };
  }

  nodes(): TreeNode[] {
    const out: TreeNode[] = [];
    for (const id of this.headers.keys()) {
      const n = this.node(id);
      if (n) out.push(n);
    }
    return out;
  }

  private status(h: SessionHeader, f: Folded): NodeStatus {
    if (this.probe.isRunning(h.id)) return 'running';
    if (this.probe.isResidentChild(h.id) || this.probe.hasLiveChildren(h.id)) return 'waiting';
    if (f.lastStopReason === 'interrupted' || f.lastStopReason === 'cancelled') return 'interrupted';
    if (f.lastStopReason === 'error') return 'failed';
    if (h.origin === 'subagent' || f.mode) return 'settled';
    return 'idle';
  }
}
