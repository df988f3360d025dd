import { createHash } from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Cut, errorBody, faultGate, jsonWire, promptText, Stall, streamWire, type Wire, wireOf } from './wire-formats';

// A real HTTP server speaking OpenAI chat-completions (SSE streaming and not) on
// 127.0.0.1, with scripted replies, faults, a record of every request body, and a
// DeepSeek-style prefix cache. Tests, benches and the demo reach it through the real
// `openai` client. The same script also answers OpenAI Responses (`/v1/responses`) and
// Anthropic Messages (`/v1/messages`) streams for the real remote programs (wire-formats.ts).

export interface ScriptedToolCall {
  id?: string;
  name: string;
  /** Object (serialized for you) or raw text (to script invalid JSON). */
  arguments: Record<string, unknown> | string;
}

export type Fault =
  | { kind: 'status'; status: number; message?: string }
  /** Send `afterChunks` content chunks, then cut the connection. */
  | { kind: 'disconnect'; afterChunks: number }
  /**
   * Send `afterChunks` content chunks (all of them, when the reply has fewer), then go silent
   * (or, with `dripEveryMs`, send an empty delta that often) and never finish: the connection
   * stays open until the client leaves. A stall always stalls, a reply with no text too.
   */
  | { kind: 'stall'; afterChunks: number; dripEveryMs?: number }
  | { kind: 'malformed-sse' };

export interface Reply {
  text?: string;
  reasoning?: string;
  toolCalls?: ScriptedToolCall[];
  finishReason?: 'stop' | 'tool_calls' | 'length';
  fault?: Fault;
  /** Wait before the response head (slow first byte). */
  delayMs?: number;
  /** Wait between streamed chunks. */
  chunkDelayMs?: number;
  /** Split text into chunks of this many characters (default 8). */
  chunkSize?: number;
  /**
   * Send exactly these SSE events instead of the scripted reply (no finish, usage or [DONE]
   * added): an object is one `data:` event, a string is written as is. For replies no
   * well-behaved server sends (a numeric call id, a fractional token count, no finish reason).
   */
  raw?: (object | string)[];
  /** Completion tokens to report (set when the server stopped the reply at its cap); default: counted from the reply. */
  completionTokens?: number;
}

/** One streamed chunk as the server would send it, for `Reply.raw`. */
export function rawChunk(delta: object, finishReason: string | null = null, extra: object = {}): object {
  return {
    id: 'chatcmpl-test',
    object: 'chat.completion.chunk',
    created: 0,
    model: 'test-model',
    choices: [{ index: 0, delta, finish_reason: finishReason }],
    ...extra,
  };
}

export type ReplyFn = (body: ChatBody, index: number) => Reply;

export interface ChatBody {
  model: string;
  messages: { role: string; content?: string | null; tool_calls?: unknown[]; tool_call_id?: string }[];
  tools?: unknown[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  [k: string]: unknown;
}

export interface RecordedRequest {
  raw: string;
  body: ChatBody;
  headers: http.IncomingHttpHeaders;
  cacheHitTokens: number;
  promptTokens: number;
  /** Which wire format the request spoke (its path). */
  wire: Wire;
  url: string;
}

/** Approximate tokens: 4 characters each. The cache counts whole blocks of 64 tokens. */
const CHARS_PER_TOKEN = 4;
const CACHE_BLOCK_TOKENS = 64;

export class ModelServer {
  readonly requests: RecordedRequest[] = [];
  private script: (Reply | ReplyFn)[] = [];
  private fallback: ReplyFn = () => ({ text: 'ok' });
  private blocks = new Set<string>();
  private readonly sockets = new Set<import('node:net').Socket>();
  private server: http.Server;
  /** Require this bearer token (401 otherwise) when set. */
  apiKey?: string;
  /** Chat requests being answered now (from the request read to the response's end or its connection's close). */
  inFlight = 0;
  /** The most `inFlight` reached since the last reset. */
  maxInFlight = 0;
  /**
   * Replies still being produced (waiting out `delayMs` or streaming). A reply stops as soon as
   * its client leaves (a Stop closes the connection), so this drops with `inFlight`, not later.
   */
  streaming = 0;

  private constructor() {
    this.server = http.createServer((req, res) => void this.handle(req, res));
    this.server.on('connection', (s) => {
      s.setNoDelay(true); // SSE chunks go out as written, not held back by Nagle
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
  }

  static async start(): Promise<ModelServer> {
    const s = new ModelServer();
    await new Promise<void>((resolve) => s.server.listen(0, '127.0.0.1', resolve));
    return s;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }
  get baseURL(): string {
    return `http://127.0.0.1:${this.port}/v1`;
  }

  /** Queue replies, served in order; when the queue is empty the fallback answers. */
  enqueue(...replies: (Reply | ReplyFn)[]): this {
    this.script.push(...replies);
    return this;
  }
  setFallback(fn: ReplyFn): this {
    this.fallback = fn;
    return this;
  }
  reset(): void {
    this.script = [];
    this.requests.length = 0;
    this.blocks = new Set();
    this.maxInFlight = this.inFlight;
  }
  get pending(): number {
    return this.script.length;
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const wire = req.method === 'POST' && req.url ? wireOf(req.url) : undefined;
    if (!wire) return this.error(res, 404, `No route ${req.method} ${req.url}`);
    const key = req.headers.authorization ?? (req.headers['x-api-key'] ? `Bearer ${req.headers['x-api-key']}` : undefined);
    if (this.apiKey && key !== `Bearer ${this.apiKey}`) return this.error(res, 401, 'Incorrect API key provided', wire);
    let body: ChatBody;
    try {
      body = JSON.parse(raw) as ChatBody;
    } catch {
      return this.error(res, 400, 'Request body is not JSON', wire);
    }
    // Token counting is no model turn: answered at once, not recorded, no script consumed.
    if (wire === 'count_tokens') return this.json(res, { input_tokens: Math.ceil(promptText(body).length / CHARS_PER_TOKEN) });
    // Counted until the response is done or its connection goes (a client that cancels).
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    let counted = true;
    const uncount = () => {
      if (counted) this.inFlight--;
      counted = false;
    };
    res.once('finish', uncount);
    res.once('close', uncount);
    const { hit, prompt } = this.cache(body, wire);
    const index = this.requests.length;
    this.requests.push({ raw, body, headers: req.headers, cacheHitTokens: hit, promptTokens: prompt, wire, url: req.url! });
    const next = this.script.shift() ?? this.fallback;
    const asked = typeof next === 'function' ? next(body, index) : next;
    // A chat endpoint stops a reply at its cap, as real ones do (finish_reason "length").
    const reply = wire === 'chat' ? capReply(asked, capOf(body)) : asked;
    this.streaming++;
    try {
      if (reply.delayMs && !(await waitUnlessGone(res, reply.delayMs))) return;
      if (reply.fault?.kind === 'status') return this.error(res, reply.fault.status, reply.fault.message ?? `scripted ${reply.fault.status}`, wire);
      const usage = usageOf(prompt, hit, reply);
      if (wire !== 'chat') {
        const calls = toolCallsOf(reply, index).map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments }));
        const wr = { ...reply, calls, finish: finishOf(reply) as 'stop' };
        const wu = { prompt, hit, completion: usage.completion_tokens };
        if (body.stream === false) jsonWire(res, wire, String(body.model), wr, wu);
        else await streamWire(res, wire, String(body.model), wr, wu);
      } else if (body.stream) await this.streamReply(res, body, reply, usage);
      else this.jsonReply(res, body, reply, usage);
    } finally {
      this.streaming--;
    }
  }

  /**
   * Longest shared prefix with any earlier request, rendered from the parsed body, in whole
   * blocks of 64 tokens: like a provider cache, every block is keyed by the hash of the whole
   * prefix up to it, so a request hits as many leading blocks as some earlier one stored.
   */
  private cache(body: ChatBody, wire: Wire): { hit: number; prompt: number } {
    const text = wire === 'chat' ? JSON.stringify(body.tools ?? []) + JSON.stringify(body.messages ?? []) : promptText(body);
    const block = CHARS_PER_TOKEN * CACHE_BLOCK_TOKENS;
    // Keyed by model, as a provider's cache is: the same prefix sent to another model misses.
    let h = createHash('sha1')
      .update(String(body.model ?? ''))
      .digest('base64');
    let hits = 0;
    let missed = false;
    for (let off = 0; off + block <= text.length; off += block) {
      h = createHash('sha1')
        .update(h)
        .update(text.slice(off, off + block))
        .digest('base64');
      if (!missed && this.blocks.has(h)) hits++;
      else missed = true;
      this.blocks.add(h);
    }
    const prompt = Math.ceil(text.length / CHARS_PER_TOKEN);
    return { hit: Math.min(hits * CACHE_BLOCK_TOKENS, prompt), prompt };
  }

  private error(res: http.ServerResponse, status: number, message: string, wire: Wire | 'count_tokens' = 'chat'): void {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(errorBody(wire, status, message)));
  }

  private json(res: http.ServerResponse, body: object): void {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  }

  private jsonReply(res: http.ServerResponse, body: ChatBody, reply: Reply, usage: object): void {
    const calls = toolCallsOf(reply, this.requests.length - 1);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        id: 'chatcmpl-test',
        object: 'chat.completion',
        created: 0,
        model: body.model,
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: reply.text ?? '', reasoning_content: reply.reasoning, tool_calls: calls.length ? calls : undefined },
            finish_reason: finishOf(reply),
          },
        ],
        usage,
      }),
    );
  }

  private async streamReply(res: http.ServerResponse, body: ChatBody, reply: Reply, usage: object): Promise<void> {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    if (reply.raw) {
      for (const r of reply.raw) res.write(typeof r === 'string' ? r : `data: ${JSON.stringify(r)}\n\n`);
      res.end();
      return;
    }
    // A client that left (a Stop) ends the reply: nothing more is written or waited for.
    const send = async (delta: object, finish: string | null = null) => {
      if (res.destroyed) throw new Gone();
      res.write(
        `data: ${JSON.stringify({ id: 'chatcmpl-test', object: 'chat.completion.chunk', created: 0, model: body.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`,
      );
      if (reply.chunkDelayMs && !(await waitUnlessGone(res, reply.chunkDelayMs))) throw new Gone();
    };
    const size = reply.chunkSize ?? 8;
    const pieces = (s: string) => (s.length === 0 ? [] : (s.match(new RegExp(`[\\s\\S]{1,${size}}`, 'g')) ?? []));
    const gate = faultGate(reply.fault);
    const chunk = async (delta: object) => {
      gate.chunk();
      await send(delta);
      gate.sent();
    };
    try {
      await send({ role: 'assistant', content: '' });
      if (reply.fault?.kind === 'malformed-sse') {
        res.write('data: {"choices": [ this is not json\n\n');
        res.end();
        return;
      }
      for (const p of pieces(reply.reasoning ?? '')) await chunk({ reasoning_content: p });
      for (const p of pieces(reply.text ?? '')) await chunk({ content: p });
      const calls = toolCallsOf(reply, this.requests.length - 1);
      for (let i = 0; i < calls.length; i++) {
        const c = calls[i];
        await chunk({ tool_calls: [{ index: i, id: c.id, type: 'function', function: { name: c.function.name, arguments: '' } }] });
        for (const p of pieces(c.function.arguments)) await chunk({ tool_calls: [{ index: i, function: { arguments: p } }] });
      }
      gate.finish();
      await send({}, finishOf(reply));
      if (body.stream_options?.include_usage)
        res.write(`data: ${JSON.stringify({ id: 'chatcmpl-test', object: 'chat.completion.chunk', created: 0, model: body.model, choices: [], usage })}\n\n`);
      res.write('data: [DONE]\n\n');
      res.end();
    } catch (err) {
      if (err instanceof Gone) return;
      if (err instanceof Stall) return stall(res, err.dripEveryMs, () => (res.destroyed ? Promise.resolve() : send({})));
      if (!(err instanceof Cut)) throw err;
      // Let the chunks already written reach the client, then cut the connection mid-body.
      await new Promise<void>((r) => res.write('', () => r()));
      await sleep(20);
      res.socket?.destroy();
    }
  }
}

/** The client left mid-reply. */
class Gone extends Error {}

/** Waits `ms`; resolves false at once when the client has left (or leaves meanwhile), true otherwise. */
function waitUnlessGone(res: http.ServerResponse, ms: number): Promise<boolean> {
  if (res.destroyed) return Promise.resolve(false);
  return new Promise((resolve) => {
    const gone = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      res.off('close', gone);
      resolve(!res.destroyed);
    }, ms);
    res.once('close', gone);
  });
}
/** Keep the response open without finishing it (dripping empty deltas if asked) until the client goes away. */
async function stall(res: http.ServerResponse, dripEveryMs: number | undefined, drip: () => Promise<void>): Promise<void> {
  const gone = new Promise<void>((r) => res.once('close', () => r()));
  const timer = dripEveryMs ? setInterval(() => void drip(), dripEveryMs) : undefined;
  await gone;
  clearInterval(timer);
}

function toolCallsOf(reply: Reply, request: number) {
  return (reply.toolCalls ?? []).map((c, i) => ({
    id: c.id ?? `call_${request}_${i}`,
    type: 'function' as const,
    function: { name: c.name, arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments) },
  }));
}

function finishOf(reply: Reply): string {
  return reply.finishReason ?? (reply.toolCalls?.length ? 'tool_calls' : 'stop');
}

/** The completion cap a chat body carries (`max_completion_tokens` wins, as on OpenAI), if any. */
export function capOf(body: ChatBody): number | undefined {
  const cap = body.max_completion_tokens ?? body.max_tokens;
  return typeof cap === 'number' && Number.isInteger(cap) && cap > 0 ? cap : undefined;
}

/** The tokens a reply's completion counts (4 characters a token: reasoning, text, tool calls). */
function completionTokens(reply: Reply): number {
  return Math.ceil(((reply.text ?? '').length + (reply.reasoning ?? '').length + JSON.stringify(reply.toolCalls ?? []).length) / CHARS_PER_TOKEN);
}

/**
 * A reply stopped at `cap` completion tokens: reasoning first, then text, then tool calls (a call
 * cut mid-arguments keeps its raw prefix, as a real stream leaves it), finish reason `length`.
 * A reply within its cap, a fault or a raw script is sent as it is.
 */
export function capReply(reply: Reply, cap: number | undefined): Reply {
  if (cap === undefined || reply.raw || reply.fault || completionTokens(reply) <= cap) return reply;
  let room = cap * CHARS_PER_TOKEN;
  const take = (s: string | undefined) => {
    const out = (s ?? '').slice(0, Math.max(0, room));
    room -= out.length;
    return out;
  };
  const reasoning = take(reply.reasoning);
  const text = take(reply.text);
  const toolCalls: ScriptedToolCall[] = [];
  for (const c of reply.toolCalls ?? []) {
    if (room <= c.name.length) break;
    room -= c.name.length;
    toolCalls.push({
      ...(c.id ? { id: c.id } : {}),
      name: c.name,
      arguments: take(typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments)),
    });
  }
  return {
    ...reply,
    ...(reply.reasoning !== undefined ? { reasoning } : {}),
    text,
    ...(toolCalls.length ? { toolCalls } : { toolCalls: undefined }),
    finishReason: 'length',
    completionTokens: cap,
  };
}

function usageOf(prompt: number, hit: number, reply: Reply) {
  const completion = reply.completionTokens ?? completionTokens(reply);
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_cache_hit_tokens: hit,
    prompt_cache_miss_tokens: prompt - hit,
    prompt_tokens_details: { cached_tokens: hit },
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
