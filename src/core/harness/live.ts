import type { ToolProgress } from '../agent/config';
import { ChangeStream, type LiveWhat, type Observer } from '../live/changes';
import { type SessionLive, type SessionView, viewOf } from '../live/state';
import type { SessionEvent } from '../session/events';
import type { SessionSummary } from '../session/summary';
import type { Store } from '../store/store';

/** What the live hub asks the harness: a session's parent, and what the process knows of it now. */
export interface LiveParts {
  store: Store;
  /** The parent session, from the store's header or a resident agent's. */
  parentOf(id: string): string | undefined;
  /** The assembly of what only this process knows (the runtime's parts; decision 0054). */
  liveOf(id: string): SessionLive;
}

/**
 * The harness's one change stream and one status question (decision 0054): every staged event,
 * delta, tool progress note and live transition goes out here in one order, and a child's live
 * change or turn edge also reaches its parent as `children`.
 */
export class LiveHub {
  private readonly changes = new ChangeStream();

  constructor(private readonly parts: LiveParts) {
    // Every writer of every session (resident or not) stages through the store: one source of events.
    parts.store.onStaged((id, e) => this.staged(id, e));
  }

  observe(fn: Observer): () => void {
    return this.changes.observe(fn);
  }

  /** Live state the log does not show moved: observers hear it for the session, and for its parent as `children`. */
  report(id: string, what: LiveWhat): void {
    if (!this.changes.observed) return;
    this.changes.emit({ type: 'live', sessionId: id, what });
    this.toParent(id);
  }

  /** An MCP server's state or tool count moved (decision 0055): views re-read `harness.mcp.states()`. */
  mcpChanged(): void {
    this.changes.emit({ type: 'mcp' });
  }

  progress(id: string, progress: ToolProgress): void {
    this.changes.emit({ type: 'progress', sessionId: id, progress });
  }

  /** Where a session's streamed text and reasoning go. */
  streamOf(id: string): (kind: 'text' | 'reasoning', text: string) => void {
    return (kind, text) => this.changes.emit({ type: 'delta', sessionId: id, kind, text });
  }

  statusOf(id: string, summary: Readonly<SessionSummary> | undefined): SessionView | undefined {
    return summary ? viewOf(id, summary, this.parts.liveOf(id)) : undefined;
  }

  async viewOf(id: string): Promise<SessionView> {
    return viewOf(id, await this.parts.store.summary(id), this.parts.liveOf(id));
  }

  /** A writer staged an event: observers hear it; a child's turn starting or ending moves its parent's waiting. */
  private staged(id: string, e: SessionEvent): void {
    if (!this.changes.observed) return;
    this.changes.emit({ type: 'event', sessionId: id, event: e });
    if (e.type === 'turn/start' || e.type === 'turn/end') this.toParent(id);
  }

  private toParent(id: string): void {
    const parent = this.parts.parentOf(id);
    if (parent) this.changes.emit({ type: 'live', sessionId: parent, what: 'children' });
  }
}
