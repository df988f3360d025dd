import type { ToolProgress } from '../agent/config';
import type { SessionEvent } from '../session/events';

/**
 * What moved in a session's live state without an event of its own saying so (decision 0054):
 * its agent went idle or left residency, it joined or left the queue for a slot, an approval
 * was asked or answered, its goal was armed or disarmed, a workflow run of it started or ended,
 * a mirror of it changed, or one of its children did one of these (`children`).
 */
export type LiveWhat = 'idle' | 'resident' | 'released' | 'queued' | 'approval' | 'goal' | 'workflow' | 'mirror' | 'children';

/**
 * One change, in the order the process made them. `event`: a session's log grew (staged: in
 * the writer's log, its durable append under way — see `Store.onStaged`); `delta`: streamed
 * text or reasoning not yet in the log; `progress`: a running tool's note (never in the log);
 * `live`: what only the process knows changed (`LiveWhat`). A view re-reads the session's
 * status (`statusOf`) for an `event` or a `live` change of it.
 */
export type Change =
  | { type: 'event'; sessionId: string; event: SessionEvent }
  | { type: 'delta'; sessionId: string; kind: 'text' | 'reasoning'; text: string }
  | { type: 'progress'; sessionId: string; progress: ToolProgress }
  | { type: 'live'; sessionId: string; what: LiveWhat }
  /** An MCP server's state or tool count moved (decision 0055): a view re-reads `harness.mcp.states()`. */
  | { type: 'mcp' };

export type Observer = (change: Change) => void;

/**
 * The one change stream: every observer sees every change once, in one order. A change
 * emitted while observers are being told (an observer that acts) is queued behind the one
 * being delivered, so no observer sees the second before another saw the first. An
 * observer's throw is swallowed: the change happened, a view's failure is its own.
 */
export class ChangeStream {
  private readonly observers = new Set<Observer>();
  /**
   * The observers as an array, taken once per (un)subscription rather than once per change: a
   * change is told to the observers there were when its delivery began (one added meanwhile
   * hears the next change, one removed meanwhile still hears this one). Never mutated: a
   * subscription makes a new one.
   */
  private told: readonly Observer[] | undefined;
  private readonly queue: Change[] = [];
  private delivering = false;

  observe(fn: Observer): () => void {
    this.observers.add(fn);
    this.told = undefined;
    return () => {
      if (this.observers.delete(fn)) this.told = undefined;
    };
  }

  get observed(): boolean {
    return this.observers.size > 0;
  }

  emit(change: Change): void {
    if (this.observers.size === 0) return;
    this.queue.push(change);
    if (this.delivering) return;
    this.delivering = true;
    try {
      for (let c = this.queue.shift(); c; c = this.queue.shift()) {
        this.told ??= [...this.observers];
        for (const fn of this.told) {
          try {
            fn(c);
          } catch {
            // the change happened; a view's failure is its own
          }
        }
      }
    } finally {
      this.delivering = false;
    }
  }
}
