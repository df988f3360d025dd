import type { SessionEvent, SessionHeader } from '../../core/session/events';
import type { NodeStatus, TreeNode } from '../../protocol';

/** What the runtime knows now that the log does not say: residency and running turns. */
export interface LiveProbe {
  isRunning(id: string): boolean;
  /** Has children that are resident (running or waiting). */
  hasLiveChildren(id: string): boolean;
  /** Its turn waits for a free slot under the limit on subagents running at once. */
  isQueued?(id: string): boolean;
}

interface Folded {
  lastStopReason?: TreeNode['lastStopReason'];
  tokens: TreeNode['tokens'];
  /** Some of `tokens` are estimates (a request without reported usage: running, interrupted, failed). */
  estimated: boolean;
  /** The request under way: its prompt estimated from its bytes, its completion from streamed characters. */
  inflight?: { prompt: number; completionChars: number };
  /** Actions refused for want of approval (tool/result with a refusal mark). */
  refused: number;
  policy: NonNullable<TreeNode['policy']>;
  reports: number;
  label?: string;
  provider?: string;
  mode?: TreeNode['mode'];
  seedLength: number;
}

/** Providers count roughly 4 characters per token; used only where no usage was reported. */
const CHARS_PER_TOKEN = 4;
const estimateTokens = (chars: number): number => Math.ceil(chars / CHARS_PER_TOKEN);

function emptyFold(h: SessionHeader): Folded {
  return { tokens: { prompt: 0, completion: 0, cacheHit: 0 }, estimated: false, refused: 0, policy: {}, reports: 0, seedLength: h.seedLength ?? 0 };
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
    if (!this.folds.has(h.id)) this.folds.set(h.id, emptyFold(h));
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
    this.folds.set(id, emptyFold(h));
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
        } else {
          // No usage: the stream was cut (interrupt, error) before the provider's final usage chunk.
          const chars = e.text.length + (e.reasoning?.length ?? 0) + (e.toolCalls ?? []).reduce((n, c) => n + c.name.length + c.arguments.length, 0);
          f.tokens.prompt += f.inflight?.prompt ?? 0;
          f.tokens.completion += estimateTokens(chars);
          f.estimated = true;
        }
        f.inflight = undefined;
        this.setActivity(id, e.toolCalls?.length ? `tool ${e.toolCalls.map((c) => c.name).join(', ')}` : undefined);
        return true;
      case 'request/header':
        f.inflight = { prompt: estimateTokens(e.bytes), completionChars: 0 };
        this.setActivity(id, 'thinking');
        return true;
      case 'turn/start':
        this.setActivity(id, 'thinking');
        return true;
      case 'turn/end':
        // A request that got no message at all still cost its prompt.
        if (f.inflight) {
          f.tokens.prompt += f.inflight.prompt;
          f.estimated = true;
          f.inflight = undefined;
        }
        f.lastStopReason = e.stopReason;
        this.setActivity(id, undefined);
        return true;
      case 'tool/result':
        if (e.refusal) f.refused++;
        if (e.name === 'report' && !e.isError) f.reports++;
        return e.name === 'report' || !!e.refusal;
      case 'sandbox/mode':
        f.policy.sandbox = e.mode;
        return true;
      case 'approval/policy':
        f.policy.approval = e.policy;
        return true;
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

  /** Characters streamed for the request under way (counted into its estimate until usage arrives). */
  streamed(id: string, chars: number): void {
    const f = this.folds.get(id);
    if (f?.inflight) f.inflight.completionChars += chars;
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
    const queued = status === 'running' && !!this.probe.isQueued?.(id);
    const act = queued ? { text: 'queued: waiting for a free slot', since: this.activity.get(id)?.since ?? Date.now() } : status === 'running' ? this.activity.get(id) : this.probe.hasLiveChildren(id) ? { text: 'waiting for children', since: this.activity.get(id)?.since ?? Date.now() } : undefined;
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
      ...(queued ? { queued: true } : {}),
      ...(act ? { activity: act.text, activeSince: act.since } : {}),
      ...(f.lastStopReason ? { lastStopReason: f.lastStopReason } : {}),
      tokens: f.inflight
        ? { prompt: f.tokens.prompt + f.inflight.prompt, completion: f.tokens.completion + estimateTokens(f.inflight.completionChars), cacheHit: f.tokens.cacheHit }
        : { ...f.tokens },
      ...(f.estimated || f.inflight ? { tokensEstimated: true } : {}),
      ...(f.refused ? { refused: f.refused } : {}),
      ...(f.policy.sandbox || f.policy.approval ? { policy: { ...f.policy } } : {}),
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
    // Waiting means waiting for someone: its own live children. A child that finished and is
    // only kept resident until its release reads by its last stop, like a released one.
    if (this.probe.hasLiveChildren(h.id)) return 'waiting';
    if (f.lastStopReason === 'interrupted' || f.lastStopReason === 'cancelled') return 'interrupted';
    if (f.lastStopReason === 'error') return 'failed';
    if (h.origin === 'subagent' || f.mode) return 'settled';
    return 'idle';
  }
}
