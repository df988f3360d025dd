import type { Agent } from '../core/agent/agent';
import { describeError } from '../core/errors';
import { activeGrants } from '../core/policy/grants';
import type { SessionEvent } from '../core/session/events';
import type { Session } from '../core/session/session';
import { grantView } from './approvals';
import { PartialReplies } from './presenter/partial-replies';
import { queueView } from './presenter/queue-view';
import { StreamThrottle } from './presenter/stream-throttle';
import { page, toEntry } from './presenter/transcript';
import type { ViewPort, ViewPorts } from './view-port';

const PAGE = 200;

/** Where a feed reads sessions: the resident agent's log, else the store's. */
export interface FeedSource {
  session(id: string): Promise<Session>;
  resident(id: string): Agent | undefined;
  /** The workspace folders' real paths: grants list their paths relative to them. */
  roots(): readonly string[];
  log(level: 'warn', text: string): void;
}

/**
 * What a view showing one session receives: its transcript (a page, the reply in progress,
 * its grants and queue) when it starts showing it, then appended entries, throttled stream
 * deltas and queue and grant changes — only to the views showing that session.
 */
export class SessionFeed {
  private readonly throttle: StreamThrottle;
  /** Each session's reply in progress, for views that open it mid-stream. */
  private readonly partials = new PartialReplies();

  constructor(
    private readonly views: ViewPorts,
    private readonly source: FeedSource,
  ) {
    this.throttle = new StreamThrottle((sessionId, kind, delta) => views.toSession(sessionId, { type: 'stream/delta', sessionId, kind, delta }));
  }

  delta(sessionId: string, kind: 'text' | 'reasoning', delta: string): void {
    this.partials.push(sessionId, kind, delta);
    this.throttle.push(sessionId, kind, delta);
  }

  event(sessionId: string, e: SessionEvent): void {
    this.partials.apply(sessionId, e);
    if (e.type === 'inbox/accepted' || e.type === 'inbox/claimed' || e.type === 'inbox/withdrawn') void this.queue(sessionId);
    // The stream is superseded by the message it produced: flush deltas first, in order.
    if (e.type === 'assistant/message') this.throttle.flush(sessionId);
    if (e.type === 'approval/grant') void this.grants(sessionId);
    const entry = toEntry(e);
    if (entry) this.views.toSession(sessionId, { type: 'transcript/append', sessionId, entries: [entry] });
  }

  /** A view starts showing a session: the newest page, the partial reply, grants and queue. */
  async reset(port: ViewPort, sessionId: string): Promise<void> {
    const s = await this.source.session(sessionId);
    const p = page(s.events, s.events.length, PAGE);
    // From here to the post nothing awaits: deltas still in the throttle go out first (the
    // reset then replaces them with the whole partial), later ones continue it, none twice.
    this.throttle.flush(sessionId);
    const partial = this.partials.get(sessionId);
    port.post({ type: 'transcript/reset', sessionId, entries: p.entries, hasMore: p.hasMore, ...(partial ? { partial } : {}) });
    port.post({ type: 'grants/list', sessionId, grants: activeGrants(s.header, s.events).map((g) => grantView(g, this.source.roots())) });
    port.post(queueView(s, this.source.resident(sessionId)));
  }

  /** Older entries of a session, before `beforeSeq`. */
  async older(sessionId: string, beforeSeq: number) {
    return page((await this.source.session(sessionId)).events, beforeSeq, PAGE);
  }

  /** The session's queue to every view showing it (only those: a queue is per conversation). */
  async queue(sessionId: string): Promise<void> {
    if (!this.views.showing(sessionId)) return;
    try {
      const s = await this.source.session(sessionId);
      this.views.toSession(sessionId, queueView(s, this.source.resident(sessionId)));
    } catch (err) {
      this.source.log('warn', `could not read the queue of ${sessionId}: ${describeError(err)}`);
    }
  }

  /** The session's active grants, to every view showing it. */
  async grants(sessionId: string): Promise<void> {
    if (!this.views.showing(sessionId)) return;
    try {
      const s = await this.source.session(sessionId);
      this.views.toSession(sessionId, {
        type: 'grants/list',
        sessionId,
        grants: activeGrants(s.header, s.events).map((g) => grantView(g, this.source.roots())),
      });
    } catch (err) {
      this.source.log('warn', `could not read the grants of ${sessionId}: ${describeError(err)}`);
    }
  }

  forget(sessionId: string): void {
    this.partials.forget(sessionId);
  }

  dispose(): void {
    this.throttle.dispose();
  }
}
