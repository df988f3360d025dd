import OpenAI from 'openai';
import type { Stream } from 'openai/streaming';
import type { CapFieldSetting } from './cap-field';
import { DescribedBodies } from './described';
import { classifyError, replyCut, replyStalled } from './errors';
import { byteLimitedHttpFetch, STALLED, Watchdog } from './stream-limits';
import type { ModelClient, ModelRequest, ModelStreamEvent, RequestInfo } from './types';
import { normalizeUsage, readChunk } from './wire-chunk';

export interface OpenAIClientOptions {
  baseURL: string;
  apiKey: string;
  /**
   * Timeout in ms, both for the response head (the SDK's, per attempt) and for the longest
   * gap without progress once the stream has begun (ours). Default 120 s.
   */
  timeoutMs?: number;
  /** SDK retries: only before the body starts (connection errors, 408/409/429/5xx). */
  maxRetries?: number;
  provider?: string;
  /** Bytes one response may carry on the wire before it is refused (default 64 MiB). */
  maxReplyBytes?: number;
  /** The body field of the completion cap: `auto` (default) decides by model name (cap-field.ts). */
  capField?: CapFieldSetting;
}

export const DEFAULT_TIMEOUT_MS = 120_000;
/** Far above any real reply (128k tokens at ~250 bytes of SSE per token chunk is ~32 MB). */
export const DEFAULT_MAX_REPLY_BYTES = 64 * 1024 * 1024;

export { normalizeUsage };

const FINISH: Record<string, 'stop' | 'tool_calls' | 'length'> = { stop: 'stop', tool_calls: 'tool_calls', length: 'length', function_call: 'tool_calls' };

/** Any OpenAI-compatible chat-completions endpoint (DeepSeek, OpenAI, Ollama, vLLM, LM Studio). */
export class OpenAICompatibleClient implements ModelClient {
  readonly provider: string;
  private readonly client: OpenAI;
  private readonly timeoutMs: number;
  /** The bodies describe() built, until their requests stream (decision 0069). */
  private readonly described = new DescribedBodies();

  constructor(private readonly opts: OpenAIClientOptions) {
    this.provider = opts.provider ?? 'openai-compatible';
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.client = new OpenAI({
      baseURL: opts.baseURL,
      apiKey: opts.apiKey,
      timeout: this.timeoutMs,
      maxRetries: opts.maxRetries ?? 2,
      fetch: byteLimitedHttpFetch(opts.maxReplyBytes ?? DEFAULT_MAX_REPLY_BYTES),
    });
  }

  describe(req: ModelRequest): RequestInfo {
    const b = this.described.describe(req, this.opts.capField);
    return { provider: this.provider, model: req.model, bytes: b.bytes, headBytes: b.headBytes, headHash: b.headHash, prefixHash: b.prefixHash };
  }

  /**
   * Every way a stream can end is one last event (decision 0023): `done` only with a finish
   * reason; a stream that ends without one is `cut`, one that goes quiet `stalled`, a chunk
   * that breaks the wire contract `bad-response`, naming what was wrong.
   */
  async *stream(req: ModelRequest): AsyncIterable<ModelStreamEvent> {
    const { text } = this.described.take(req, this.opts.capField);
    const own = new AbortController();
    const signal = req.signal ? AbortSignal.any([req.signal, own.signal]) : own.signal;
    const watchdog = new Watchdog(this.timeoutMs, () => own.abort(STALLED));
    const stalled = () => own.signal.reason === STALLED && !req.signal?.aborted;
    let started = false;
    let drained = false; // the body was read to its end: the connection is back in the pool, nothing to close
    let finish: 'stop' | 'tool_calls' | 'length' | 'other' | undefined;
    try {
      // The body goes as the text describe() measured and hashed (what `chat.completions.create`
      // would send for it, without serializing the whole conversation again: decision 0064).
      const stream = await this.client.post<Stream<OpenAI.ChatCompletionChunk>>('/chat/completions', {
        body: text,
        headers: { 'content-type': 'application/json' },
        stream: true,
        signal,
      });
      watchdog.reset();
      for await (const chunk of stream) {
        started = true;
        const read = readChunk(chunk);
        // Empty deltas and keep-alives are not progress: a drip of them ends like silence.
        if (read.events.length > 0 || read.finish) watchdog.reset();
        yield* read.events;
        if (read.finish) finish = FINISH[read.finish] ?? 'other';
      }
      drained = true;
      // The SDK ends an aborted stream quietly: say why it ended.
      if (stalled()) yield { type: 'error', error: replyStalled(this.timeoutMs, started) };
      else if (req.signal?.aborted) throw new OpenAI.APIUserAbortError();
      else if (finish === undefined) yield { type: 'error', error: replyCut(started) };
      else yield { type: 'done', finishReason: finish };
    } catch (err) {
      const error = stalled()
        ? replyStalled(this.timeoutMs, started)
        : classifyError(err, { baseURL: this.opts.baseURL, model: req.model, midStream: started });
      yield { type: 'error', error };
    } finally {
      watchdog.stop();
      // A consumer that stopped early (or an error) closes the connection. A body read to its end
      // has nothing to close: aborting it anyway cost three DOMExceptions (ours, the SDK's, the
      // fetch's), ~0.1 ms a request (decision 0088).
      if (!drained) own.abort();
    }
  }
}
