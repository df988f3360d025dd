import type { IncomingHttpHeaders } from 'node:http';

// When a request is tried again, and after how long (decision 0094; the rules the openai SDK
// applied before it, decision 0004): only before the response body starts — a refused or reset
// connection, a response head that did not come in time, or a status that says "later" (408,
// 409, 429, 5xx) — unless the server says otherwise in `x-should-retry`.

const header = (h: IncomingHttpHeaders, name: string): string | undefined => {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
};

/** Whether a response with this status (and headers) is worth another attempt. */
export function retryableStatus(status: number, headers: IncomingHttpHeaders): boolean {
  const said = header(headers, 'x-should-retry');
  if (said === 'true') return true;
  if (said === 'false') return false;
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** Longest wait a server may ask for before an attempt; asked for more, the request fails and its error says to wait. */
export const MAX_ASKED_WAIT_MS = 60_000;

/**
 * How long to wait before the next attempt: what the server asked (`retry-after-ms`, then
 * `retry-after` in seconds or as a date), else 0.5 s doubling per attempt made, at most 8 s,
 * less up to a quarter at random (so a crowd of children spreads out). Undefined when the server
 * asked for longer than a minute: not worth holding a turn for.
 */
export function retryDelayMs(attemptsMade: number, headers: IncomingHttpHeaders | undefined, random = Math.random): number | undefined {
  let asked: number | undefined;
  const ms = headers && header(headers, 'retry-after-ms');
  if (ms !== undefined && !Number.isNaN(Number.parseFloat(ms))) asked = Number.parseFloat(ms);
  const after = headers && header(headers, 'retry-after');
  if (asked === undefined && after !== undefined) {
    const seconds = Number.parseFloat(after);
    asked = Number.isNaN(seconds) ? Date.parse(after) - Date.now() : seconds * 1000;
  }
  if (asked !== undefined && asked > MAX_ASKED_WAIT_MS) return undefined;
  if (asked !== undefined && asked >= 0) return asked;
  return Math.min(500 * 2 ** attemptsMade, 8_000) * (1 - random() * 0.25);
}

/** Resolves after `ms`, or rejects at once when `signal` aborts (with the signal's reason). */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
