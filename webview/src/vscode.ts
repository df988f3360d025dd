// The one place that calls acquireVsCodeApi(): VS Code allows it once per webview.
// Only types cross from src/protocol.ts (DESIGN §1); nothing of the host is bundled here.
import type { HostToWebview, WebviewToHost } from '../../src/protocol';

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
