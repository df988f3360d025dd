import { createHash, type Hash } from 'node:crypto';
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
  /** The chat-completions body as sent: `JSON.stringify` of the body, keys in wire order. */
  text: string;
  bytes: number;
  headBytes: number;
  headHash: string;
  prefixHash: string;
  /** `text` = `before` + `messages` + the tail (cap, stream options): a cap moves only the tail. */
  parts: { before: string; messages: string; fixedBytes: number; stream: boolean };
}

/**
 * A lineage's conversation serialized so far (decision 0064): the messages array's text
 * without its closing bracket, its bytes, and the prefix hash over head + it, kept open.
 * Valid only for the head it was built under.
 */
interface Serialized {
  head: string;
  headBytes: number;
  headHash: string;
  count: number;
  /** The last message serialized: a surface whose message there is another object is not this one's extension. */
  last: DerivedMessage | undefined;
  text: string;
  bytes: number;
  hash: Hash;
}

const serialized = new WeakMap<object, Serialized>();

/**
 * The conversation `[system, ...messages]` for this head: what the lineage's last request
 * serialized, extended by the messages added since (O(Δ)), or serialized whole when there is
 * no lineage, the head changed, or the surface is shorter than what was serialized.
 */
function conversation(h: Head, messages: readonly DerivedMessage[], lineage: object | undefined): Serialized {
  let s = lineage ? serialized.get(lineage) : undefined;
  if (!s || s.head !== h.head || s.count > messages.length || (s.count > 0 && messages[s.count - 1] !== s.last)) {
    s = { head: h.head, headBytes: h.headBytes, headHash: h.headHash, count: 0, last: undefined, text: h.open, bytes: h.openBytes, hash: h.openHash.copy() };
    if (lineage) serialized.set(lineage, s);
  }
  if (s.count < messages.length) {
    let add = '';
    for (let i = s.count; i < messages.length; i++) add += `,${JSON.stringify(messageJson(messages[i]))}`;
    s.text += add;
    s.bytes += Buffer.byteLength(add);
    s.hash.update(add);
    s.count = messages.length;
    s.last = messages[messages.length - 1];
  }
  return s;
}

/**
 * What a request's head serializes to (model, tools sorted and canonical, system message) and
 * what follows from it: its bytes and hash, the body's opening and the prefix hash up to the
 * conversation's first `[`. The same for every request of the same model, system prompt and
 * tools — every step of every child of a fan-out — so it is built once and kept.
 */
interface Head {
  model: string;
  system: string;
  /** The tools it was built from: name, description and schema as they were (compared by identity). */
  tools: readonly (readonly [string, string, JsonSchema])[];
  head: string;
  headBytes: number;
  headHash: string;
  /** `{"model":…,"tools":[…],"messages":` */
  before: string;
  beforeBytes: number;
  /** `[` and the system message: the conversation before its first message. */
  open: string;
  openBytes: number;
  /** sha256 over head, a newline and `open`, not yet digested (copied for each conversation). */
  openHash: Hash;
}

/** The heads built last, newest first: a few system prompts and tool sets at a time (agents, presets, MCP). */
const heads: Head[] = [];
const KEPT_HEADS = 8;

/**
 * The head for this model, system prompt and tools: a kept one when every tool is the same
 * name, description and schema object (a tool's schema is not mutated in place), else built
 * now. A changed description (a tool whose text is computed) or another schema object builds
 * afresh, so the bytes are always those of the request as asked.
 */
function headOf(model: string, systemPrompt: string, toolSpecs: readonly ToolSpec[]): Head {
  const i = heads.findIndex(
    (h) =>
      h.model === model &&
      h.system === systemPrompt &&
      h.tools.length === toolSpecs.length &&
      h.tools.every(([n, d, p], j) => toolSpecs[j].name === n && toolSpecs[j].description === d && toolSpecs[j].parameters === p),
  );
  if (i >= 0) {
    const h = heads[i];
    if (i > 0) heads.unshift(...heads.splice(i, 1));
    return h;
  }
  const tools = [...toolSpecs].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)).map(toolJson);
  const system: Json = { role: 'system', content: systemPrompt };
  const head = JSON.stringify({ model, tools, system });
  const before = `{"model":${JSON.stringify(model)}${tools.length > 0 ? `,"tools":${JSON.stringify(tools)}` : ''},"messages":`;
  const open = `[${JSON.stringify(system)}`;
  const h: Head = {
    model,
    system: systemPrompt,
    tools: toolSpecs.map((t) => [t.name, t.description, t.parameters] as const),
    head,
    headBytes: Buffer.byteLength(head),
    headHash: sha256(head),
    before,
    beforeBytes: Buffer.byteLength(before),
    open,
    openBytes: Buffer.byteLength(open),
    openHash: createHash('sha256').update(head).update('\n').update(open),
  };
  heads.unshift(h);
  if (heads.length > KEPT_HEADS) heads.length = KEPT_HEADS;
  return h;
}

/** What follows the conversation: the cap (a budget's changes per step), then the stream options. */
function tail(model: string, maxTokens: number | undefined, capField: CapFieldSetting, stream: boolean): string {
  const cap = maxTokens === undefined ? '' : `,${JSON.stringify(capFieldFor(model, capField))}:${JSON.stringify(maxTokens)}`;
  return `${cap},"stream":${stream}${stream ? ',"stream_options":{"include_usage":true}' : ''}}`;
}

/**
 * Build the wire body: model, then the stable head (tools, system message), then the
 * conversation, then per-call options. Reasoning text is not sent back (providers reject it).
 * With a lineage only the messages added since its last request are serialized and hashed: a
 * step costs what it added, not the whole history (decision 0064); the bytes are the same.
 */
export function buildRequest(req: ModelRequest, stream: boolean, capField: CapFieldSetting = 'auto'): BuiltRequest {
  const h = headOf(req.model, req.system, req.tools);
  const conv = conversation(h, req.messages, req.lineage);
  const messages = `${conv.text}]`;
  const fixedBytes = h.beforeBytes + conv.bytes + 1;
  const after = tail(req.model, req.maxTokens, capField, stream);
  return {
    text: h.before + messages + after,
    bytes: fixedBytes + Buffer.byteLength(after),
    headBytes: conv.headBytes,
    headHash: conv.headHash,
    prefixHash: conv.hash.copy().update(']').digest('hex').slice(0, 32),
    parts: { before: h.before, messages, fixedBytes, stream },
  };
}

/**
 * The same request with another completion cap (a budget's), without serialising the
 * conversation again: the cap sits after it, so the head and prefix hashes stay, and only the
 * tail changes. Equal to `buildRequest` of the capped request.
 */
export function withCap(built: BuiltRequest, model: string, maxTokens: number | undefined, capField: CapFieldSetting = 'auto'): BuiltRequest {
  const { before, messages, fixedBytes, stream } = built.parts;
  const after = tail(model, maxTokens, capField, stream);
  return { ...built, text: before + messages + after, bytes: fixedBytes + Buffer.byteLength(after) };
}

function sha256(s: string): string {
  return createHash('sha256').update(s).digest('hex').slice(0, 32);
}
