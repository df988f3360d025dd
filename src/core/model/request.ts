import { createHash } from 'node:crypto';
import type { DerivedMessage } from '../session/derive';
import { type CapFieldSetting, capFieldFor } from './cap-field';
import type { JsonSchema } from './json-schema';
import type { ModelRequest, ToolSpec } from './types';

// Provider prefix caches key on bytes: the same head must serialize to the same bytes
// every time. So keys are emitted in a fixed order, tools sorted by name, and nothing
// per-request (time, ids) is placed ahead of the stable part.

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** Deep copy with object keys sorted: equal values give equal bytes. */
export function canonical(v: unknown): Json {
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === 'object') {
    const out: { [k: string]: Json } = {};
    for (const k of Object.keys(v).sort()) {
      const x = (v as Record<string, unknown>)[k];
      if (x !== undefined) out[k] = canonical(x);
    }
    return out;
  }
  return v as Json;
}

function toolJson(t: ToolSpec): Json {
  return { type: 'function', function: { name: t.name, description: t.description, parameters: canonical(t.parameters as JsonSchema) } };
}

function messageJson(m: DerivedMessage): Json {
  if (m.role === 'user') return { role: 'user', content: m.content };
  if (m.role === 'tool') return { role: 'tool', tool_call_id: m.toolCallId, content: m.content };
  const out: { [k: string]: Json } = { role: 'assistant', content: m.content };
  if (m.toolCalls?.length) out.tool_calls = m.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }));
  return out;
}

/**
 * The most bytes a completion cap adds to a body (`,"max_completion_tokens":` and 13 digits):
 * a budget check measures a body before its cap is known and counts this much on top.
 */
export const MAX_CAP_FIELD_BYTES = 39;

export interface BuiltRequest {
  /** The chat-completions body, keys in wire order. */
  body: { [k: string]: Json };
  bytes: number;
  headBytes: number;
  headHash: string;
  prefixHash: string;
}

/**
 * Build the wire body: model, then the stable head (tools, system message), then the
 * conversation, then per-call options. Reasoning text is not sent back (providers reject it).
 */
export function buildRequest(req: ModelRequest, stream: boolean, capField: CapFieldSetting = 'auto'): BuiltRequest {
  const tools = [...req.tools].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)).map(toolJson);
  const system: Json = { role: 'system', content: req.system };
  const body: { [k: string]: Json } = { model: req.model };
  if (tools.length > 0) body.tools = tools;
  body.messages = [system, ...req.messages.map(messageJson)];
  // After the conversation: a cap that changes per step (a budget's) leaves the prefix as it was.
  if (req.maxTokens !== undefined) body[capFieldFor(req.model, capField)] = req.maxTokens;
  body.stream = stream;
  if (stream) body.stream_options = { include_usage: true };
  const head = JSON.stringify({ model: req.model, tools, system });
  // The conversation is serialized once: the body's bytes are its parts joined in wire
  // order (JSON.stringify(body) gives the same text), and the prefix hash reuses it.
  const messages = JSON.stringify(body.messages);
  const parts: string[] = [];
  for (const [k, v] of Object.entries(body)) parts.push(`${JSON.stringify(k)}:${k === 'messages' ? messages : JSON.stringify(v)}`);
  const bytes = Buffer.byteLength(`{${parts.join(',')}}`);
  return {
    body,
    bytes,
    headBytes: Buffer.byteLength(head),
    headHash: sha256(head),
    prefixHash: createHash('sha256').update(head).update('\n').update(messages).digest('hex').slice(0, 32),
  };
}

/**
 * The same request with another completion cap (a budget's), without serialising the
 * conversation again: the cap sits after it, so the head and prefix hashes stay, and the
 * body's bytes move by the cap field's own. Equal to `buildRequest` of the capped request.
 */
export function withCap(built: BuiltRequest, model: string, maxTokens: number | undefined, capField: CapFieldSetting = 'auto'): BuiltRequest {
  const field = capFieldFor(model, capField);
  const fieldBytes = (b: BuiltRequest['body']) => {
    const key = 'max_tokens' in b ? 'max_tokens' : 'max_completion_tokens' in b ? 'max_completion_tokens' : undefined;
    return key === undefined ? 0 : Buffer.byteLength(`,${JSON.stringify(key)}:${JSON.stringify(b[key])}`);
  };
  const body: { [k: string]: Json } = {};
  for (const [k, v] of Object.entries(built.body)) {
    if (k === 'max_tokens' || k === 'max_completion_tokens') continue;
    if (k === 'stream' && maxTokens !== undefined) body[field] = maxTokens;
    body[k] = v;
  }
  return { ...built, body, bytes: built.bytes - fieldBytes(built.body) + fieldBytes(body) };
}

function sha256(s: string): string {
  return createHash('sha256').update(s).digest('hex').slice(0, 32);
}
