import type { ModelClient, ModelRequest, ModelStreamEvent } from '../src/core/model/types';
import { now } from './support';

/** Wraps a model client and times its stream (request to last event) so benches can subtract it. */
export class TimedClient implements ModelClient {
  modelMs = 0;
  constructor(private readonly inner: ModelClient) {}
  get provider() {
    return this.inner.provider;
  }
  describe(req: ModelRequest) {
    return this.inner.describe(req);
  }
  async *stream(req: ModelRequest): AsyncIterable<ModelStreamEvent> {
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
