import type * as http from 'node:http';

// The two other wire formats the real remote programs speak (issue 13): OpenAI Responses
// SSE (`POST /v1/responses`, Codex) and Anthropic Messages SSE (`POST /v1/messages`, Claude
// Code). The model server answers them from the same scripted `Reply` (text, reasoning,
// tool calls) with the same faults (status, disconnect, stall, malformed SSE, delays) as
// chat completions. Each format is a table of frame builders; one loop streams any of them.

export type Wire = 'chat' | 'responses' | 'messages';

/** Which wire a request path speaks (undefined: no route). `count_tokens` is answered apart. */
export function wireOf(url: string): Wire | 'count_tokens' | undefined {
  const path = url.split('?')[0];
  if (path.endsWith('/chat/completions')) return 'chat';
  if (path.endsWith('/responses')) return 'responses';
  if (path.endsWith('/messages/count_tokens')) return 'count_tokens';
  if (path.endsWith('/messages')) return 'messages';
  return undefined;
}

export interface WireCall {
  id: string;
  name: string;
  arguments: string;
}

export interface WireUsage {
  prompt: number;
  hit: number;
  completion: number;
}

export interface WireReply {
  text?: string;
  reasoning?: string;
  calls: WireCall[];
  finish: 'stop' | 'tool_calls' | 'length';
  fault?: { kind: string; afterChunks?: number; dripEveryMs?: number };
  chunkDelayMs?: number;
  chunkSize?: number;
  raw?: (object | string)[];
}

/** Frames of one streamed reply; each returns SSE text. Stateful per reply (indexes). */
interface Format {
  start(model: string, usage: WireUsage): string;
  reasoningStart(): string;
  reasoning(piece: string): string;
  reasoningEnd(full: string): string;
  textStart(): string;
  text(piece: string): string;
  textEnd(full: string): string;
  callStart(call: WireCall): string;
  callArgs(call: WireCall, piece: string): string;
  callEnd(call: WireCall): string;
  finish(model: string, reply: WireReply, usage: WireUsage): string;
}

const sse = (event: string, data: object): string => `event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`;

function responsesFormat(): Format {
  let index = -1;
  const output: object[] = [];
  const itemId = () => `item_${index}`;
  const response = (model: string, status: string, extra: object = {}) => ({
    id: 'resp_test',
    object: 'response',
    created_at: 0,
    status,
    model,
    output,
    ...extra,
  });
  const done = (item: object) => {
    output.push(item);
    return sse('response.output_item.done', { output_index: index, item });
  };
  return {
    start: (model) => sse('response.created', { response: response(model, 'in_progress') }),
    reasoningStart: () => sse('response.output_item.added', { output_index: ++index, item: { id: itemId(), type: 'reasoning', summary: [] } }),
    reasoning: (piece) => sse('response.reasoning_summary_text.delta', { item_id: itemId(), output_index: index, summary_index: 0, delta: piece }),
    reasoningEnd: (full) => done({ id: itemId(), type: 'reasoning', summary: [{ type: 'summary_text', text: full }] }),
    textStart: () =>
      sse('response.output_item.added', {
        output_index: ++index,
        item: { id: itemId(), type: 'message', status: 'in_progress', role: 'assistant', content: [] },
      }),
    text: (piece) => sse('response.output_text.delta', { item_id: itemId(), output_index: index, content_index: 0, delta: piece }),
    textEnd: (full) =>
      done({ id: itemId(), type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: full, annotations: [] }] }),
    callStart: (c) =>
      sse('response.output_item.added', {
        output_index: ++index,
        item: { id: itemId(), type: 'function_call', status: 'in_progress', call_id: c.id, name: c.name, arguments: '' },
      }),
    callArgs: (_c, piece) => sse('response.function_call_arguments.delta', { item_id: itemId(), output_index: index, delta: piece }),
    callEnd: (c) => done({ id: itemId(), type: 'function_call', status: 'completed', call_id: c.id, name: c.name, arguments: c.arguments }),
    finish: (model, reply, u) =>
      sse('response.completed', {
        response: response(model, reply.finish === 'length' ? 'incomplete' : 'completed', {
          ...(reply.finish === 'length' ? { incomplete_details: { reason: 'max_output_tokens' } } : {}),
          usage: {
            input_tokens: u.prompt,
            input_tokens_details: { cached_tokens: u.hit },
            output_tokens: u.completion,
            output_tokens_details: { reasoning_tokens: 0 },
            total_tokens: u.prompt + u.completion,
          },
        }),
      }),
  };
}

function messagesFormat(): Format {
  let index = -1;
  const block = (content_block: object) => sse('content_block_start', { index: ++index, content_block });
  const delta = (d: object) => sse('content_block_delta', { index, delta: d });
  const stop = () => sse('content_block_stop', { index });
  return {
    start: (model, u) =>
      sse('message_start', {
        message: {
          id: 'msg_test',
          type: 'message',
          role: 'assistant',
          model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: u.prompt - u.hit, cache_read_input_tokens: u.hit, cache_creation_input_tokens: 0, output_tokens: 1 },
        },
      }),
    reasoningStart: () => block({ type: 'thinking', thinking: '', signature: '' }),
    reasoning: (piece) => delta({ type: 'thinking_delta', thinking: piece }),
    reasoningEnd: () => delta({ type: 'signature_delta', signature: 'sig-test' }) + stop(),
    textStart: () => block({ type: 'text', text: '' }),
    text: (piece) => delta({ type: 'text_delta', text: piece }),
    textEnd: () => stop(),
    callStart: (c) => block({ type: 'tool_use', id: c.id, name: c.name, input: {} }),
    callArgs: (_c, piece) => delta({ type: 'input_json_delta', partial_json: piece }),
    callEnd: () => stop(),
    finish: (_model, reply, u) =>
      sse('message_delta', {
        delta: { stop_reason: reply.finish === 'length' ? 'max_tokens' : reply.finish === 'tool_calls' ? 'tool_use' : 'end_turn', stop_sequence: null },
        usage: { input_tokens: u.prompt - u.hit, cache_read_input_tokens: u.hit, cache_creation_input_tokens: 0, output_tokens: u.completion },
      }) + sse('message_stop', {}),
  };
}

const FORMATS: Record<'responses' | 'messages', () => Format> = { responses: responsesFormat, messages: messagesFormat };

/** A `disconnect` fault struck: the chunks written reach the client, then the connection is cut. */
export class Cut extends Error {}
/** A `stall` fault struck: the reply never finishes (dripping empty deltas, on the chat wire, if asked). */
export class Stall extends Error {
  constructor(readonly dripEveryMs?: number) {
    super('stall');
  }
}

/**
 * Where a reply's fault strikes, the one rule of every wire: a `disconnect` or `stall` lets
 * `afterChunks` content chunks through and strikes at the next. A stall strikes at the finish
 * too, so one whose reply has fewer chunks (no text at all, say) stalls after all of them
 * rather than finishing; a disconnect of such a reply lets it finish.
 */
export function faultGate(fault: WireReply['fault']): { chunk(): void; sent(): void; finish(): void } {
  const stall = fault?.kind === 'stall';
  const cut = fault?.kind === 'disconnect' || stall ? (fault?.afterChunks ?? 0) : Infinity;
  let sent = 0;
  const strike = () => (stall ? new Stall(fault?.dripEveryMs) : new Cut());
  return {
    chunk() {
      if (sent >= cut) throw strike();
    },
    sent() {
      sent++;
    },
    finish() {
      if (stall || sent >= cut) throw strike();
    },
  };
}

/** Stream `reply` in `wire`'s format, applying its faults as the chat server does. */
export async function streamWire(res: http.ServerResponse, wire: 'responses' | 'messages', model: string, reply: WireReply, usage: WireUsage): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  if (reply.raw) {
    for (const r of reply.raw) res.write(typeof r === 'string' ? r : `data: ${JSON.stringify(r)}\n\n`);
    res.end();
    return;
  }
  const f = FORMATS[wire]();
  const size = reply.chunkSize ?? 8;
  const pieces = (s: string) => (s.length === 0 ? [] : (s.match(new RegExp(`[\\s\\S]{1,${size}}`, 'g')) ?? []));
  const fault = reply.fault;
  const gate = faultGate(fault);
  const write = async (frame: string) => {
    res.write(frame);
    if (reply.chunkDelayMs) await sleep(reply.chunkDelayMs);
  };
  /** A content chunk: counted against the fault's cut. */
  const chunk = async (frame: string) => {
    gate.chunk();
    await write(frame);
    gate.sent();
  };
  try {
    await write(f.start(model, usage));
    if (fault?.kind === 'malformed-sse') {
      res.write('data: {"type": "response.output_text.delta", this is not json\n\n');
      res.end();
      return;
    }
    if (reply.reasoning) {
      await write(f.reasoningStart());
      for (const p of pieces(reply.reasoning)) await chunk(f.reasoning(p));
      await write(f.reasoningEnd(reply.reasoning));
    }
    if (reply.text) {
      await write(f.textStart());
      for (const p of pieces(reply.text)) await chunk(f.text(p));
      await write(f.textEnd(reply.text));
    }
    for (const c of reply.calls) {
      await chunk(f.callStart(c));
      for (const p of pieces(c.arguments)) await chunk(f.callArgs(c, p));
      await write(f.callEnd(c));
    }
    gate.finish();
    await write(f.finish(model, reply, usage));
    res.end();
  } catch (err) {
    if (err instanceof Stall) {
      await new Promise<void>((r) => res.once('close', () => r()));
      return;
    }
    if (!(err instanceof Cut)) throw err;
    await new Promise<void>((r) => res.write('', () => r()));
    await sleep(20);
    res.socket?.destroy();
  }
}

/** The error body each wire's clients parse. */
export function errorBody(wire: Wire | 'count_tokens', status: number, message: string): object {
  if (wire === 'messages' || wire === 'count_tokens')
    return { type: 'error', error: { type: status === 429 ? 'rate_limit_error' : status >= 500 ? 'api_error' : 'invalid_request_error', message } };
  return { error: { message, type: 'scripted_error', code: status } };
}

/** The text a cache is keyed on, whatever the wire: tools, system, then the conversation. */
export function promptText(body: Record<string, unknown>): string {
  return JSON.stringify(body.tools ?? []) + JSON.stringify(body.system ?? body.instructions ?? '') + JSON.stringify(body.messages ?? body.input ?? []);
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** A non-streamed reply (`stream` false: Claude Code's retry after a cut stream); a disconnect fault cuts it too. */
export function jsonWire(res: http.ServerResponse, wire: 'responses' | 'messages', model: string, reply: WireReply, u: WireUsage): void {
  if (reply.fault?.kind === 'disconnect' || reply.fault?.kind === 'stall') {
    res.socket?.destroy();
    return;
  }
  const body =
    wire === 'messages'
      ? {
          id: 'msg_test',
          type: 'message',
          role: 'assistant',
          model,
          content: [
            ...(reply.reasoning ? [{ type: 'thinking', thinking: reply.reasoning, signature: 'sig-test' }] : []),
            ...(reply.text ? [{ type: 'text', text: reply.text }] : []),
            ...reply.calls.map((c) => ({ type: 'tool_use', id: c.id, name: c.name, input: JSON.parse(c.arguments || '{}') })),
          ],
          stop_reason: reply.finish === 'length' ? 'max_tokens' : reply.finish === 'tool_calls' ? 'tool_use' : 'end_turn',
          stop_sequence: null,
          usage: { input_tokens: u.prompt - u.hit, cache_read_input_tokens: u.hit, cache_creation_input_tokens: 0, output_tokens: u.completion },
        }
      : {
          id: 'resp_test',
          object: 'response',
          status: 'completed',
          model,
          output: [...(reply.text ? [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: reply.text }] }] : [])],
          usage: { input_tokens: u.prompt, input_tokens_details: { cached_tokens: u.hit }, output_tokens: u.completion },
        };
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
