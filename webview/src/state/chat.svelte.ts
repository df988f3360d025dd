// The transcript of the one session the chat shows. Entries are a `$state.raw` array
// replaced on reset, append and page (never mutated), keyed by seq in the view; the
// view renders only a window of it. Streamed text lives beside the entries until the
// assistant entry that holds it arrives.
import type { PartialReply, QueuedMessageView, TranscriptEntry } from '../../../src/protocol';

export type ToolEntry = Extract<TranscriptEntry, { kind: 'tool' }>;

export class ChatState {
  sessionId: string | undefined = $state();
  entries: TranscriptEntry[] = $state.raw([]);
  hasMore = $state(false);
  /** A session was chosen and its transcript has not arrived yet. */
  loading = $state(false);
  /** The id of the outstanding `transcript/more`, if any. */
  pageRequest: string | undefined = $state();
  pageError: string | undefined = $state();
  streamText = $state('');
  streamReasoning = $state('');
  /** Messages accepted by the session that have not run yet, and whether they wait for the user. */
  queue: QueuedMessageView[] = $state.raw([]);
  queueState: 'queued' | 'waiting' = $state('queued');
  /** Tool results by call id, so a call renders with its result. */
  results: ReadonlyMap<string, ToolEntry> = $state.raw(new Map());
  /** Call ids of every tool call held, so their results are not drawn twice. */
  calls: ReadonlySet<string> = $state.raw(new Set());
  /** Bumped on every reset: the view re-anchors (restores scroll or sticks to the end). */
  generation = $state(0);
  /** Bumped when an older page arrives: the view grows its window upwards. */
  pages = $state(0);

  /** Switches to a session (or to none); its transcript arrives as `transcript/reset`. */
  show(sessionId: string | undefined): void {
    if (sessionId === this.sessionId) return;
    this.sessionId = sessionId;
    this.entries = [];
    this.hasMore = false;
    this.loading = sessionId !== undefined;
    this.pageRequest = undefined;
    this.pageError = undefined;
    this.results = new Map();
    this.calls = new Set();
    this.clearStream();
    this.queue = [];
    this.generation++;
  }

  reset(sessionId: string, entries: TranscriptEntry[], hasMore: boolean, partial?: PartialReply): void {
    if (sessionId !== this.sessionId) return;
    this.entries = entries;
    this.hasMore = hasMore;
    this.loading = false;
    this.pageRequest = undefined;
    this.pageError = undefined;
    this.results = new Map();
    this.calls = new Set();
    this.#index(entries);
    this.clearStream();
    // What the reply in progress said before this view saw it; later deltas continue it.
    if (partial) {
      this.streamText = partial.text;
      this.streamReasoning = partial.reasoning;
    }
    this.generation++;
  }

  append(sessionId: string, entries: TranscriptEntry[]): void {
    if (sessionId !== this.sessionId || entries.length === 0) return;
    // Replays (an entry the host sent twice) are dropped: seq only grows.
    const last = this.entries.length > 0 ? this.entries[this.entries.length - 1].seq : -1;
    const fresh = entries[0].seq > last ? entries : entries.filter((e) => e.seq > last);
    if (fresh.length === 0) return;
    this.entries = this.entries.concat(fresh);
    this.#index(fresh);
    // The streamed text is now in the log (or the turn ended without it).
    if (fresh.some((e) => e.kind === 'assistant' || (e.kind === 'turn' && e.phase === 'end'))) this.clearStream();
  }

  page(sessionId: string, requestId: string, entries: TranscriptEntry[], hasMore: boolean): void {
    if (sessionId !== this.sessionId || requestId !== this.pageRequest) return;
    this.pageRequest = undefined;
    this.hasMore = hasMore;
    const first = this.entries.length > 0 ? this.entries[0].seq : Number.POSITIVE_INFINITY;
    const older = entries.filter((e) => e.seq < first);
    if (older.length === 0) return;
    this.entries = older.concat(this.entries);
    this.#index(older);
    this.pages++;
  }

  delta(sessionId: string, kind: 'text' | 'reasoning', delta: string): void {
    // Until the reset arrives, its partial reply holds every delta sent before it (decision 0010).
    if (sessionId !== this.sessionId || this.loading) return;
    if (kind === 'text') this.streamText += delta;
    else this.streamReasoning += delta;
  }

  setQueue(sessionId: string, state: 'queued' | 'waiting', messages: QueuedMessageView[]): void {
    if (sessionId !== this.sessionId) return;
    this.queue = messages;
    this.queueState = state;
  }

  clearStream(): void {
    this.streamText = '';
    this.streamReasoning = '';
  }

  #index(entries: readonly TranscriptEntry[]): void {
    let results: Map<string, ToolEntry> | undefined;
    let calls: Set<string> | undefined;
    for (const e of entries) {
      if (e.kind === 'tool') (results ??= new Map(this.results)).set(e.callId, e);
      else if (e.kind === 'assistant' && e.toolCalls?.length) {
        calls ??= new Set(this.calls);
        for (const c of e.toolCalls) calls.add(c.id);
      }
    }
    if (results) this.results = results;
    if (calls) this.calls = calls;
  }
}
