import OpenAI from 'openai';
import type { Usage } from '../session/events';
import { classifyError } from './errors';
import { buildRequest } from './request';
import type { ModelClient, ModelRequest, ModelStreamEvent, RequestInfo } from './types';

export interface OpenAIClientOptions {
  baseURL: string;
  apiKey: string;
  /** Per-request timeout in ms (the SDK's; covers waiting for the first byte). */
  timeoutMs?: number;
  /** SDK retries: only before the body starts (connection errors, 408/409/429/5xx). */
  maxRetries?: number;
  provider?: string;
}

interface RawUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  prompt_cache_hit_tokens?: number;
  prompt_cache_miss_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number } | null;
}

/** DeepSeek reports prompt_cache_hit/miss_tokens; OpenAI prompt_tokens_details.cached_tokens. */
export function normalizeUsage(u: RawUsage): Usage {
  const prompt = u.prompt_tokens ?? 0;
  const hit = u.prompt_cache_hit_tokens ?? u.prompt_tokens_details?.cached_tokens;
  const out: Usage = { promptTokens: prompt, completionTokens: u.completion_tokens ?? 0 };
  if (hit !== undefined) {
    out.cacheHitTokens = hit;
    out.cacheMissTokens = u.prompt_cache_miss_tokens ?? Math.max(0, prompt - hit);
  }
  return out;
}

const FINISH: Record<string, 'stop' | 'tool_calls' | 'length'> = { stop: 'stop', tool_calls: 'tool_calls', length: 'length', function_call: 'tool_calls' };

/** Any OpenAI-compatible chat-completions endpoint (DeepSeek, OpenAI, Ollama, vLLM, LM Studio). */
export class OpenAICompatibleClient implements ModelClient {
  readonly provider: string;
  private readonly client: OpenAI;
  /** The body built by describe() for the request about to stream: built once, sent as is. */
  private lastBuilt: { req: ModelRequest; built: ReturnType<typeof buildRequest> } | undefined;

  constructor(private readonly opts: OpenAIClientOptions) {
    this.provider = opts.provider ?? 'openai-compatible';
    this.client = new OpenAI({ baseURL: opts.baseURL, apiKey: opts.apiKey, timeout: opts.timeoutMs ?? 120_000, maxRetries: opts.maxRetries ?? 2 });
  }

  describe(req: ModelRequest): RequestInfo {
    const b = buildRequest(req, true);
    this.lastBuilt = { req, built: b };
    return { provider: this.provider, model: req.model, bytes: b.bytes, headBytes: b.headBytes, headHash: b.headHash, prefixHash: b.prefixHash };
  }

  async *stream(req: ModelRequest): AsyncIterable<ModelStreamEvent> {
    const { body } = this.lastBuilt?.req === req ? this.lastBuilt.built : buildRequest(req, true);
    this.lastBuilt = undefined;
    let started = false;
    let finish: 'stop' | 'tool_calls' | 'length' | 'other' = 'other';
    try {
      const stream = await this.client.chat.completions.create(body as unknown as OpenAI.ChatCompletionCreateParamsStreaming, { signal: req.signal });
      for await (const chunk of stream) {
        started = true;
        if (chunk.usage) yield { type: 'usage', usage: normalizeUsage(chunk.usage as RawUsage) };
        const choice = chunk.choices?.[0];
        if (!choice) continue;
        const delta = choice.delta as { content?: string | null; reasoning_content?: string | null; tool_calls?: OpenAI.ChatCompletionChunk.Choice.Delta.ToolCall[] };
        if (delta?.reasoning_content) yield { type: 'reasoning', delta: delta.reasoning_content };
        if (delta?.content) yield { type: 'text', delta: delta.content };
        for (const tc of delta?.tool_calls ?? []) {
          yield { type: 'tool-call', index: tc.index, id: tc.id ?? undefined, name: tc.function?.name ?? undefined, argumentsDelta: tc.function?.arguments ?? '' };
        }
        if (choice.finish_reason) finish = FINISH[choice.finish_reason] ?? 'other';
      }
      if (req.signal?.aborted) throw new OpenAI.APIUserAbortError();
      yield { type: 'done', finishReason: finish };
    } catch (err) {
      yield { type: 'error', error: classifyError(err, { baseURL: this.opts.baseURL, model: req.model, midStream: started }) };
    }
  }
}
