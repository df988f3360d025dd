import type { Usage } from '../session/events';
import type { ModelStreamEvent } from './types';

// One streamed chat-completions chunk, read as untrusted input (STYLE: validate at the
// boundary). Whatever a server sends either becomes well-typed stream events or a
// ReplyAnomaly that names what was wrong: nothing ill-typed goes on towards the log,
// where it would be refused mid-turn and leave the turn open.

/** A reply that breaks the wire contract; `what` names the anomaly for the user. */
export class ReplyAnomaly extends Error {
  constructor(
    readonly what: string,
    /** What arrived before it is not kept either (it is too large to send back). */
    readonly discardPartial = false,
  ) {
    super(what);
    this.name = 'ReplyAnomaly';
  }
}

export interface RawUsage {
  prompt_tokens?: unknown;
  completion_tokens?: unknown;
  prompt_cache_hit_tokens?: unknown;
  prompt_cache_miss_tokens?: unknown;
  prompt_tokens_details?: { cached_tokens?: unknown } | null;
}

export interface ReadChunk {
  events: ModelStreamEvent[];
  /** The wire finish reason, when this chunk carries one. */
  finish?: string;
}

const record = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const absent = (v: unknown): v is null | undefined => v === undefined || v === null;

/** A value for a message, without serialising it (it may be nested arbitrarily deep). */
function shown(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
  if (Array.isArray(v)) return 'a list';
  if (record(v)) return 'an object';
  return String(v);
}

/** `v` as a string field: text, or absent (null counts as absent); anything else is an anomaly. */
function text(v: unknown, what: string): string | undefined {
  if (absent(v)) return undefined;
  if (typeof v !== 'string') throw new ReplyAnomaly(`${what} that is not text (${shown(v)})`);
  return v;
}

function count(field: string, v: unknown): number | undefined {
  if (absent(v)) return undefined;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0)
    throw new ReplyAnomaly(`a token count that is not a whole number of zero or more (usage.${field} = ${shown(v)})`);
  return v;
}

/** DeepSeek reports prompt_cache_hit/miss_tokens; OpenAI prompt_tokens_details.cached_tokens. Counts must be whole and non-negative. */
export function normalizeUsage(u: RawUsage): Usage {
  const prompt = count('prompt_tokens', u.prompt_tokens) ?? 0;
  const details = record(u.prompt_tokens_details) ? u.prompt_tokens_details : undefined;
  const hit = count('prompt_cache_hit_tokens', u.prompt_cache_hit_tokens) ?? count('prompt_tokens_details.cached_tokens', details?.cached_tokens);
  const out: Usage = { promptTokens: prompt, completionTokens: count('completion_tokens', u.completion_tokens) ?? 0 };
  if (hit !== undefined) {
    out.cacheHitTokens = hit;
    out.cacheMissTokens = count('prompt_cache_miss_tokens', u.prompt_cache_miss_tokens) ?? Math.max(0, prompt - hit);
  }
  return out;
}

function toolCallEvents(calls: unknown): ModelStreamEvent[] {
  if (absent(calls)) return [];
  if (!Array.isArray(calls)) throw new ReplyAnomaly(`tool_calls that are not a list (${shown(calls)})`);
  return calls.map((tc: unknown, position): ModelStreamEvent => {
    if (!record(tc)) throw new ReplyAnomaly(`a tool call that is not an object (${shown(tc)})`);
    // Some servers leave the index out when they send one call per chunk: its place stands in.
    const index = absent(tc.index) ? position : tc.index;
    if (typeof index !== 'number' || !Number.isSafeInteger(index) || index < 0)
      throw new ReplyAnomaly(`a tool call index that is not a whole number (${shown(index)})`);
    const fn = absent(tc.function) ? {} : tc.function;
    if (!record(fn)) throw new ReplyAnomaly(`a tool call function that is not an object (${shown(fn)})`);
    const id = text(tc.id, 'a tool call id');
    const name = text(fn.name, 'a tool name');
    return { type: 'tool-call', index, id: id || undefined, name: name || undefined, argumentsDelta: text(fn.arguments, 'tool call arguments') ?? '' };
  });
}

/** Read one parsed chunk into stream events; throws ReplyAnomaly for anything ill-typed. */
export function readChunk(chunk: unknown): ReadChunk {
  if (!record(chunk)) throw new ReplyAnomaly(`a chunk that is not a JSON object (${shown(chunk)})`);
  const events: ModelStreamEvent[] = [];
  if (!absent(chunk.usage)) {
    if (!record(chunk.usage)) throw new ReplyAnomaly(`usage that is not an object (${shown(chunk.usage)})`);
    events.push({ type: 'usage', usage: normalizeUsage(chunk.usage) });
  }
  if (absent(chunk.choices)) return { events };
  if (!Array.isArray(chunk.choices)) throw new ReplyAnomaly(`choices that are not a list (${shown(chunk.choices)})`);
  const choice: unknown = chunk.choices[0];
  if (choice === undefined) return { events };
  if (!record(choice)) throw new ReplyAnomaly(`a choice that is not an object (${shown(choice)})`);
  const delta = absent(choice.delta) ? {} : choice.delta;
  if (!record(delta)) throw new ReplyAnomaly(`a delta that is not an object (${shown(delta)})`);
  const reasoning = text(delta.reasoning_content, 'reasoning');
  if (reasoning) events.push({ type: 'reasoning', delta: reasoning });
  const content = text(delta.content, 'content');
  if (content) events.push({ type: 'text', delta: content });
  events.push(...toolCallEvents(delta.tool_calls));
  const finish = text(choice.finish_reason, 'a finish reason');
  return finish ? { events, finish } : { events };
}
