import type { ModelClient, ModelRequest, ModelStreamEvent } from '../src/core/model/types';
import { now } from './support';
import { loopCpu } from './verdicts';

/** A model client that keeps the request of its last stream (no wrapper around the stream itself). */
export class CapturingClient implements ModelClient {
  lastRequest: ModelRequest | undefined;
  /** When the first stream since the last `mark()` began (`now()`), for a fan-out's head. */
  firstAt: number | undefined;
  /**
   * Each stream since the last `mark()`: when it was asked for and when its last event was read
   * (`now()`). Kept only when asked for (`trackSpans`): it wraps every stream in one more generator.
   */
  spans: { start: number; end?: number }[] = [];
  constructor(
    readonly inner: ModelClient,
    private readonly trackSpans = false,
  ) {}
  /** Forget `firstAt` and the spans: the next stream sets them. */
  mark(): void {
    this.firstAt = undefined;
    this.spans = [];
  }
  get provider() {
    return this.inner.provider;
  }
  describe(req: ModelRequest) {
    return this.inner.describe(req);
  }
  stream(req: ModelRequest): AsyncIterable<ModelStreamEvent> {
    this.lastRequest = req;
    this.firstAt ??= now();
    if (!this.trackSpans) return this.inner.stream(req);
    const span: { start: number; end?: number } = { start: now() };
    this.spans.push(span);
    const inner = this.inner.stream(req);
    return (async function* () {
      try {
        yield* inner;
      } finally {
        span.end = now();
      }
    })();
  }
}

/** A fresh copy of `req` (no signal, no lineage) described and streamed through `client` as a turn does, every event read. */
async function replayBare(client: ModelClient, req: ModelRequest): Promise<void> {
  const { signal: _signal, lineage: _lineage, ...rest } = req;
  const copy: ModelRequest = { ...rest, messages: [...req.messages] };
  client.describe(copy);
  for await (const ev of client.stream(copy)) if (ev.type === 'error') throw new Error(`a bare request failed: ${JSON.stringify(ev)}`);
}

/**
 * What the model client alone costs a fan-out child: the event loop's CPU (ms, `loopCpu`) per request for `n`
 * copies of `req` through `client` (described, then streamed, as a turn does), `concurrency` at a
 * time, every event read. Nothing else runs on the loop meanwhile.
 */
export async function clientCpuPerRequest(client: ModelClient, req: ModelRequest, n: number, concurrency: number): Promise<number> {
  const one = () => replayBare(client, req);
  const stop = loopCpu();
  for (let i = 0; i < n; i += concurrency) await Promise.all(Array.from({ length: Math.min(concurrency, n - i) }, one));
  return stop().loopMs / n;
}

/**
 * The same request `n` times through `client`, `concurrency` at a time (each slot takes the next
 * as soon as its stream ends, as a fan-out slot does), nothing else running: the wall time in ms.
 * What a fan-out of `n` children would take with no runtime at all — the ceiling the model
 * server, its latency and the wire leave a fan-out figure on this machine.
 */
export async function bareFanoutMs(client: ModelClient, req: ModelRequest, n: number, concurrency: number): Promise<number> {
  let next = 0;
  const slot = async () => {
    while (next < n) {
      next++;
      await replayBare(client, req);
    }
  };
  const t = now();
  await Promise.all(Array.from({ length: concurrency }, slot));
  return now() - t;
}

/**
 * Wraps a model client, times its stream (request to last event) so benches can tell the
 * model's share from the rest, and keeps the last request so a bench can replay it bare.
 */
export class TimedClient extends CapturingClient {
  modelMs = 0;
  override async *stream(req: ModelRequest): AsyncIterable<ModelStreamEvent> {
    const it = super.stream(req)[Symbol.asyncIterator]();
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
