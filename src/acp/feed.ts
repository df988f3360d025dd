import type { Change, Harness } from '../core/harness';
import type { SessionEvent, StopReason } from '../core/session/events';
import type { AcpSession, SessionTable } from './sessions';
import { announcement, stateOf, statusOf, treeParent } from './tree';
import { assistantUpdates, toolResultUpdate, type Update, userMessageUpdates } from './updates';

/** How long streamed text gathers before it goes out as one chunk (one notification per interval, not per token). */
export const COALESCE_MS = 24;

type Kind = 'text' | 'reasoning';

/**
 * A harness's live events and deltas as `session/update` notifications, in the order they
 * happened. Deltas are coalesced per session (text and reasoning runs kept apart) and flushed
 * before the next event of their session, so a client never sees a tool call before the text
 * that preceded it. A child's events go out under its own session, after its announcement
 * (`subagent_update` on its parent) — only when the client understands subagents; otherwise
 * they stay behind the parent's tool call, as in stable ACP.
 */
export class Feed {
  private chain: Promise<void> = Promise.resolve();
  private readonly pending = new Map<string, { kind: Kind; text: string }[]>();
  /** What was streamed of the assistant message under way, per session (its log event then sends only the rest). */
  private readonly streamed = new Map<string, { text: string; reasoning: string }>();
  private readonly unknown = new Set<string>();
  /** The goal each known session was last said to have (its JSON), so only changes are sent. */
  private readonly goals = new Map<string, string>();
  private readonly cwds = new Map<string, string>();
  private timer: NodeJS.Timeout | undefined;
  private readonly offs: (() => void)[] = [];

  constructor(
    private readonly h: Harness,
    private readonly root: string,
    private readonly table: SessionTable,
    private readonly send: (sessionId: string, update: Update) => Promise<void>,
    private readonly subagents: boolean,
    private readonly onFailure: (err: unknown) => void,
  ) {
    this.offs.push(h.observe((c) => (this.handlers[c.type] as (c: Change) => void)(c)));
    this.offs.push(table.onAdd(() => this.unknown.clear()));
    // A released session's remembered text, goal and folder go with it (a load starts them afresh).
    this.offs.push(
      table.onRemove((id) => {
        this.streamed.delete(id);
        this.goals.delete(id);
        this.cwds.delete(id);
      }),
    );
  }

  /** The harness's one change stream (decision 0054) as ACP notifications: each kind of change has its mapping. */
  private readonly handlers: { [K in Change['type']]: (c: Extract<Change, { type: K }>) => void } = {
    event: (c) => this.event(c.sessionId, c.event),
    delta: (c) => this.delta(c.sessionId, c.kind, c.text),
    progress: () => undefined,
    // MCP server states are the host's to show, not a session's update.
    mcp: () => undefined,
    // Live state moved without an event (idle, queued, an approval, a mirror, a child): its state may have changed.
    live: (c) => {
      // A root has no announced state (only children do): its live moves cost no task in the chain.
      const known = this.table.get(c.sessionId);
      if (!known || known.parent !== undefined) void this.touch(c.sessionId);
      if (c.what === 'goal') void this.enqueue(() => this.goalInfo(c.sessionId));
    },
  };

  /** Everything observed so far is on the wire (before a prompt's answer). */
  async drain(): Promise<void> {
    this.flushAll();
    await this.chain;
  }

  dispose(): void {
    for (const off of this.offs) off();
    clearTimeout(this.timer);
  }

  /** A child's state may have changed (an approval asked or answered): send it if it did. */
  touch(id: string): Promise<void> {
    return this.enqueue(async () => this.refreshState(id));
  }

  private enqueue(task: () => Promise<void>): Promise<void> {
    this.chain = this.chain.then(task).catch((err) => this.onFailure(err));
    return this.chain;
  }

  private delta(id: string, kind: Kind, delta: string): void {
    if (this.unknown.has(id)) return;
    const s = this.streamed.get(id) ?? { text: '', reasoning: '' };
    s[kind] += delta;
    this.streamed.set(id, s);
    const runs = this.pending.get(id) ?? [];
    const last = runs[runs.length - 1];
    if (last?.kind === kind) last.text += delta;
    else runs.push({ kind, text: delta });
    this.pending.set(id, runs);
    this.timer ??= setTimeout(() => this.flushAll(), COALESCE_MS);
  }

  private flushAll(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    for (const id of [...this.pending.keys()]) {
      const runs = this.take(id);
      this.enqueue(async () => {
        const target = await this.resolve(id);
        if (target) for (const r of runs) await this.send(id, chunk(r.kind, r.text));
      });
    }
  }

  private take(id: string): { kind: Kind; text: string }[] {
    const runs = this.pending.get(id) ?? [];
    this.pending.delete(id);
    return runs;
  }

  private event(id: string, e: SessionEvent): void {
    // Taken now, synchronously: deltas that arrive later belong after this event.
    const runs = this.take(id);
    const streamed = this.streamed.get(id) ?? { text: '', reasoning: '' };
    // What streamed belongs to the reply now written, or to none when the turn ended without one (a dropped partial).
    if (e.type === 'assistant/message' || e.type === 'turn/end') this.streamed.delete(id);
    this.enqueue(async () => {
      const target = await this.resolve(id);
      if (!target) return;
      for (const r of runs) await this.send(id, chunk(r.kind, r.text));
      const cwd = this.cwdOf(id);
      for (const u of liveUpdates(e, streamed, cwd)) await this.send(id, u);
      // A compaction the user asked for reads running (decision 0054, amended): its end is told as the agent's idle.
      if (target.parent !== undefined && (e.type === 'turn/start' || e.type === 'turn/end' || e.type === 'compaction/start'))
        await this.refreshState(id, e.type === 'turn/end' ? e.stopReason : undefined);
      if (e.type === 'goal/change') await this.goalInfo(id);
    });
  }

  /** A session's folder, read from its header once (a header's cwd never changes): a header read is a copy. */
  private cwdOf(id: string): string {
    let cwd = this.cwds.get(id);
    if (cwd === undefined) this.cwds.set(id, (cwd = this.h.store.header(id)?.cwd ?? this.root));
    return cwd;
  }

  /** The known session an event belongs to; a new descendant of a known root is announced first. */
  private async resolve(id: string): Promise<AcpSession | undefined> {
    const known = this.table.get(id);
    if (known) return known;
    if (this.unknown.has(id)) return undefined;
    if (!this.subagents) {
      this.unknown.add(id);
      return undefined;
    }
    const parentId = await treeParent(this.h, id);
    const parent = parentId === undefined ? undefined : await this.resolve(parentId);
    if (!parent) {
      this.unknown.add(id);
      return undefined;
    }
    const ann = await announcement(this.h, id);
    const child = this.table.add({ id, harness: this.h, root: this.root, owner: parent.owner, parent: parent.id, state: JSON.stringify(ann.state) });
    await this.send(parent.id, { sessionUpdate: 'subagent_update', ...ann });
    return child;
  }

  /**
   * A session's goal and whether it is armed here, as `session_info_update` `_meta.arbor.goal`
   * (ACP has no goal of its own): sent when either moved (a `goal/change`, or arming, which no
   * event records), `null` once cleared.
   */
  private async goalInfo(id: string): Promise<void> {
    if (!this.table.get(id)) return;
    const view = await this.h.viewOf(id);
    const goal = view.summary.goal ? { ...view.summary.goal, armed: view.live.goalArmed } : null;
    const key = JSON.stringify(goal);
    if ((this.goals.get(id) ?? 'null') === key) return;
    this.goals.set(id, key);
    await this.send(id, { sessionUpdate: 'session_info_update', _meta: { arbor: { goal } } });
  }

  private async refreshState(id: string, ended?: StopReason): Promise<void> {
    const s = this.table.get(id);
    if (!s || s.parent === undefined) return;
    const state = stateOf(await statusOf(this.h, id, ended));
    const key = JSON.stringify(state);
    if (key === s.state) return;
    s.state = key;
    await this.send(s.parent, { sessionUpdate: 'subagent_update', sessionId: id, state });
  }
}

function chunk(kind: Kind, text: string): Update {
  return { sessionUpdate: kind === 'text' ? 'agent_message_chunk' : 'agent_thought_chunk', content: { type: 'text', text } };
}

/** A live event as updates: streamed text is not sent twice; the human's own prompt is not echoed. */
function liveUpdates(e: SessionEvent, streamed: { text: string; reasoning: string }, cwd: string): Update[] {
  if (e.type === 'user/message') return userMessageUpdates(e, true);
  if (e.type === 'assistant/message') return assistantUpdates(e, streamed, cwd);
  if (e.type === 'tool/result') return [toolResultUpdate(e)];
  return [];
}
