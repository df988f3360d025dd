import { StringDecoder } from 'node:string_decoder';
import type { CapFieldSetting } from './cap-field';
import { DescribedBodies } from './described';
import { classifyError, errorText, replyCut, replyStalled, StatusError, StreamError, statusSaid } from './errors';
import { PostFailure, type PostResponse, post, readText } from './http-post';
import { retryableStatus, retryDelayMs, sleep } from './retry';
import { SseReader } from './sse';
import { STALLED, tooBig, Watchdog } from './stream-limits';
import type { ModelClient, ModelRequest, ModelStreamEvent, RequestInfo } from './types';
import { normalizeUsage, readChunk } from './wire-chunk';

export interface OpenAIClientOptions {
  baseURL: string;
  apiKey: string;
  /**
   * Timeout in ms, both for the response head (per attempt) and for the longest gap without
   * progress once the stream has begun. Default 120 s.
   */
  timeoutMs?: number;
  /** Retries, only before the body starts (connection errors, a late head, 408/409/429/5xx; retry.ts). Default 2. */
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

/** `<baseURL>/chat/completions`, or why the base URL cannot be one. */
function endpointOf(baseURL: string): URL | PostFailure {
  let url: URL | undefined;
  try {
    url = new URL(`${baseURL.replace(/\/+$/, '')}/chat/completions`);
  } catch {
    // not a URL at all
  }
  if (url?.protocol === 'http:' || url?.protocol === 'https:') return url;
  return new PostFailure('connection', `the base URL ${JSON.stringify(baseURL)} is not an http:// or https:// URL`);
}

/** Error bodies are read this far (a provider's error is a few hundred bytes). */
const ERROR_BODY_BYTES = 64 * 1024;

/** Told once per attempt answered too late and sent again. */
const RESENT: ModelStreamEvent = Object.freeze({ type: 'resent' });

/**
 * Any OpenAI-compatible chat-completions endpoint (DeepSeek, OpenAI, Ollama, vLLM, LM Studio),
 * streamed over node:http with its own SSE reader (decision 0094: the openai SDK's web streams,
 * Headers and parser cost 0.6–0.9 ms of CPU a request; this costs ~0.3).
 */
export class OpenAICompatibleClient implements ModelClient {
  readonly provider: string;
  /** Where requests go; a base URL that is not one fails each request with a clear error (settings can be fixed live). */
  private readonly url: URL | PostFailure;
  private readonly headers: Record<string, string>;
  private readonly timeoutMs: number;
  private readonly maxRetries: number;
  private readonly maxReplyBytes: number;
  /** The bodies describe() built, until their requests stream (decision 0069). */
  private readonly described = new DescribedBodies();

  constructor(private readonly opts: OpenAIClientOptions) {
    this.provider = opts.provider ?? 'openai-compatible';
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.maxRetries = opts.maxRetries ?? 2;
    this.maxReplyBytes = opts.maxReplyBytes ?? DEFAULT_MAX_REPLY_BYTES;
    this.url = endpointOf(opts.baseURL);
    this.headers = {
      'content-type': 'application/json',
      accept: 'application/json', // as the openai SDK sent it: a provider that checks it knows this one
      authorization: `Bearer ${opts.apiKey}`,
      'user-agent': 'arbor',
    };
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
    // One signal for the request: ours (the watchdog, a consumer gone), which the caller's aborts
    // too (a listener, not AbortSignal.any: ~25 µs less a request).
    const own = new AbortController();
    const signal = own.signal;
    const outer = req.signal;
    const relay = () => own.abort(outer?.reason);
    if (outer?.aborted) relay();
    else outer?.addEventListener('abort', relay, { once: true });
    const watchdog = new Watchdog(this.timeoutMs, () => own.abort(STALLED));
    const stalled = () => own.signal.reason === STALLED && !req.signal?.aborted;
    let started = false;
    let finish: 'stop' | 'tool_calls' | 'length' | 'other' | undefined;
    let res: PostResponse | undefined;
    /** Attempts that went out and were answered too late, not yet told (`resent` events). */
    const resent = { n: 0 };
    // An abort once the body flows ends it: the reader below fails and says why.
    const onAbort = () => res?.body.destroy(Object.assign(new Error('The request was cancelled.'), { name: 'AbortError' }));
    try {
      // The body goes as the text describe() measured and hashed (decision 0064).
      res = await this.open(text, signal, resent);
      for (; resent.n > 0; resent.n--) yield RESENT;
      signal.addEventListener('abort', onAbort, { once: true });
      if (signal.aborted) onAbort();
      watchdog.reset();
      const sse = new SseReader();
      const utf8 = new StringDecoder('utf8');
      let seen = 0;
      let done = false;
      for await (const bytes of res.body as AsyncIterable<Buffer>) {
        seen += bytes.byteLength;
        if (seen > this.maxReplyBytes) throw tooBig(this.maxReplyBytes);
        for (const ev of sse.push(utf8.write(bytes))) {
          if (done) continue;
          if (ev.data.startsWith('[DONE]')) {
            done = true;
            continue;
          }
          const chunk: unknown = JSON.parse(ev.data);
          if (chunk && typeof chunk === 'object' && 'error' in chunk && chunk.error) throw new StreamError(errorText(chunk.error));
          started = true;
          const read = readChunk(chunk);
          // Empty deltas and keep-alives are not progress: a drip of them ends like silence.
          if (read.events.length > 0 || read.finish) watchdog.reset();
          yield* read.events;
          if (read.finish) finish = FINISH[read.finish] ?? 'other';
        }
      }
      if (finish === undefined) yield { type: 'error', error: replyCut(started) };
      else yield { type: 'done', finishReason: finish };
    } catch (err) {
      const error = stalled()
        ? replyStalled(this.timeoutMs, started)
        : req.signal?.aborted
          ? classifyError(new PostFailure('aborted', 'The request was cancelled.'), this.ctx(req, started))
          : classifyError(err, this.ctx(req, started));
      for (; resent.n > 0; resent.n--) yield RESENT;
      yield { type: 'error', error };
    } finally {
      watchdog.stop();
      signal.removeEventListener('abort', onAbort);
      outer?.removeEventListener('abort', relay);
      // A consumer that stopped early (or an error) closes the connection; a body read to its end is back in the pool.
      if (res && !res.body.readableEnded) res.body.destroy();
    }
  }

  private ctx(req: ModelRequest, midStream: boolean) {
    return { baseURL: this.opts.baseURL, model: req.model, midStream };
  }

  /**
   * The response head of a 2xx answer, after up to `maxRetries` more attempts (retry.ts): a
   * refused connection, a late head and a status that says "later" are tried again; any other
   * status fails with what the provider said.
   */
  private async open(body: string, signal: AbortSignal, resent: { n: number }): Promise<PostResponse> {
    const url = this.url;
    if (url instanceof PostFailure) throw url;
    for (let attempt = 0; ; attempt++) {
      const more = attempt < this.maxRetries;
      let res: PostResponse;
      try {
        res = await post(url, { headers: this.headers, body, signal, headTimeoutMs: this.timeoutMs });
      } catch (err) {
        if (!more || !(err instanceof PostFailure) || (err.kind !== 'connection' && err.kind !== 'timeout')) throw err;
        // A late head: the request went out and the provider may be working on it (and bill it).
        if (err.kind === 'timeout') resent.n++;
        await sleep(retryDelayMs(attempt, undefined) ?? 0, signal);
        continue;
      }
      if (res.status >= 200 && res.status < 300) return res;
      const wait = more && retryableStatus(res.status, res.headers) ? retryDelayMs(attempt, res.headers) : undefined;
      if (wait !== undefined) {
        res.body.destroy();
        await sleep(wait, signal);
        continue;
      }
      const location = res.status >= 300 && res.status < 400 ? res.headers.location : undefined;
      const said = location ? `${res.status} moved to ${location}` : statusSaid(res.status, await readText(res.body, ERROR_BODY_BYTES));
      throw new StatusError(res.status, said);
    }
  }
}
