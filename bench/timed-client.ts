import type { ModelClient, ModelRequest, ModelStreamEvent } from '../src/core/model/types';
import { now } from './support';

/**
 * Wraps a model client, times its stream (request to last event) so benches can tell the
 * model's share from the rest, and keeps the last request so a bench can replay it bare.
 */
export class TimedClient implements ModelClient {
  modelMs = 0;
  /** The request of the most recent stream() call. */
  lastRequest: ModelRequest | undefined;
  constructor(readonly inner: ModelClient) {}
  get provider() {
    return this.inner.provider;
  }
  describe(req: ModelRequest) {
    return this.inner.describe(req);
  }
  async *stream(req: ModelRequest): AsyncIterable<ModelStreamEvent> {
    this.lastRequest = req;
    const it = this.inner.stream(req)[Symbol.asyncIterator]();
    for (;;) {
      const t = now();
      const r = await it.next();
      this.modelMs += now() - t;
      if (r.done) return;
      yield r.value;
    }
  }
}

/**
 * The bare streamed request: `req` through the same client to the same server, every event
 * read, nothing else. Milliseconds from the call to the end of the stream. A stream that
 * fails is an error here (the bench's denominator must be a real request).
 */
export async function bareRequestMs(client: ModelClient, req: ModelRequest): Promise<number> {
  const t = now();
  for await (const ev of client.stream(req)) {
    if (ev.type === 'error') throw new Error(`the bare request failed: ${JSON.stringify(ev)}`);
  }
  return now() - t;
}
