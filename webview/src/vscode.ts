// The one place that calls acquireVsCodeApi(): VS Code allows it once per webview.
// Only types cross from src/protocol.ts (DESIGN §1); nothing of the host is bundled here.
import type { HostToWebview, RequestBody, RequestDone, RequestResults, RequestType, WebviewToHost } from '../../src/protocol';
import { Requests } from './lib/requests';

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}

declare function acquireVsCodeApi(): VsCodeApi;

const api = acquireVsCodeApi();

/** Sends a user intent to the extension host. */
export function post(msg: WebviewToHost): void {
  api.postMessage(msg);
}

/** A fresh id for a request; the host echoes it in `request/done`. */
export function requestId(): string {
  return crypto.randomUUID();
}

const requests = new Requests(post, requestId);

/** Sends a request; `answer` resolves with its typed result or rejects with a `RequestError` (its code included). */
export function request<K extends RequestType>(body: RequestBody<K> & { type: K }): { id: string; answer: Promise<RequestResults[K]> } {
  return requests.send<K>(body);
}

/** A `request/done` arrived: settles its request. False when none here waits for it (a page reloaded meanwhile). */
export function settleRequest(done: RequestDone): boolean {
  return requests.settle(done);
}

/**
 * Subscribes to host messages. The host is the only sender and validates what it
 * sends, so a shape check on `type` suffices; anything else is dropped.
 * Returns an unsubscribe.
 */
export function onMessage(handler: (msg: HostToWebview) => void): () => void {
  const listener = (event: MessageEvent<unknown>): void => {
    const data = event.data;
    if (typeof data === 'object' && data !== null && typeof (data as { type?: unknown }).type === 'string') {
      handler(data as HostToWebview);
    }
  };
  window.addEventListener('message', listener);
  return () => window.removeEventListener('message', listener);
}

/** What survives hiding the view (no retainContextWhenHidden): VS Code keeps it for us. */
export interface ViewState {
  /** A transcript tab's session: its WebviewPanelSerializer reopens the tab from it after a reload. */
  sessionId?: string;
  selected?: string;
  /** Collapsed tree nodes (ids). */
  collapsed?: string[];
  treeScroll?: number;
  /** Height of the tree pane in the side panel, px; and whether it is open. */
  treeHeight?: number;
  treeOpen?: boolean;
  /** Where the chat was scrolled: following the tail, or an entry and its offset. */
  chat?: { sessionId: string; atBottom: boolean; anchorSeq?: number; anchorOffset?: number };
  /** Unsent text in the input. */
  draft?: string;
}

export function loadState(): ViewState {
  const s = api.getState();
  return typeof s === 'object' && s !== null ? (s as ViewState) : {};
}

let pending: ViewState | undefined;
let timer: ReturnType<typeof setTimeout> | undefined;

function flush(): void {
  if (timer !== undefined) clearTimeout(timer);
  timer = undefined;
  const s = pending;
  pending = undefined;
  if (s) api.setState(s);
}

/** Merges `patch` into the saved state; writes are coalesced (scrolling saves often). */
export function saveState(patch: Partial<ViewState>): void {
  pending = { ...(pending ?? loadState()), ...patch };
  if (timer === undefined) timer = setTimeout(flush, 150);
}

// Hiding the view destroys the page: write what is pending before it goes.
window.addEventListener('pagehide', flush);
document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'hidden') flush();
});
