import type * as acp from '@agentclientprotocol/sdk/unstable';
import type { StopReason, Usage } from '../session/events';
import { num, record, str } from './run';
import type { RemoteOutcome, RemoteSink } from './types';

// How an ACP agent's `session/update` notifications and its prompt answer become the child's
// log (decision 0040): one handler per update kind, a table per enum. The driver serialises
// the calls (the SDK dispatches notifications without waiting for the previous one).

/**
 * Message and thought chunks arrive a few characters at a time: they stream live at once and
 * are joined here, then handed to the sink as one piece before a tool call and at the end
 * (the sink separates pieces it is given with a blank line; chunks must not be).
 */
export class ChunkBuffer {
  private text = '';
  private reasoning = '';

  constructor(private readonly sink: RemoteSink) {}

  add(kind: 'text' | 'reasoning', piece: string): void {
    if (!piece) return;
    this.sink.delta(kind, piece);
    if (kind === 'text') this.text += piece;
    else this.reasoning += piece;
  }

  flush(): void {
    if (this.reasoning) this.sink.reasoning(this.reasoning);
    if (this.text) this.sink.text(this.text);
    this.text = this.reasoning = '';
  }
}

type Update = acp.SessionUpdate;
type Handler = (u: Update, sink: RemoteSink, buf: ChunkBuffer) => void | Promise<void>;

/** The text of a content block (text as is; anything else named, never dropped silently). */
export function blockText(c: acp.ContentBlock | undefined): string {
  if (!c) return '';
  if (c.type === 'text') return c.text;
  if (c.type === 'resource_link') return `[${c.name}](${c.uri})`;
  if (c.type === 'resource') return 'text' in c.resource ? c.resource.text : `[resource ${c.resource.uri}]`;
  return `[${c.type}]`;
}

/** A finished tool call's result: its content blocks, then a terminal's output in `_meta`, then `rawOutput`. */
export function toolResultText(u: { content?: acp.ToolCallContent[] | null; rawOutput?: unknown; _meta?: Record<string, unknown> | null }): string {
  const parts: string[] = [];
  for (const c of u.content ?? []) {
    if (c.type === 'content') parts.push(blockText(c.content));
    else if (c.type === 'diff') parts.push(`diff ${c.path}`);
    else if (c.type === 'terminal') parts.push(`terminal ${c.terminalId}`);
  }
  const meta = record(u._meta) ? u._meta : {};
  const terminal = record(meta.terminal_output) ? str(meta.terminal_output.data) : str(meta.terminal_output);
  if (terminal) parts.push(terminal);
  if (!parts.length && u.rawOutput !== undefined && u.rawOutput !== null)
    parts.push(typeof u.rawOutput === 'string' ? u.rawOutput : JSON.stringify(u.rawOutput));
  return parts.filter(Boolean).join('\n');
}

/** Claude's adapter tags chatter about itself (not the model's answer) this way: never part of the answer. */
const informational = (u: { _meta?: Record<string, unknown> | null }): boolean => {
  const cc = record(u._meta) && record(u._meta.claudeCode) ? u._meta.claudeCode : undefined;
  return cc?.kind === 'informational';
};

async function callOf(u: acp.ToolCall, sink: RemoteSink, buf: ChunkBuffer): Promise<void> {
  buf.flush();
  const input = record(u.rawInput) ? u.rawInput : u.rawInput === undefined || u.rawInput === null ? {} : { input: u.rawInput };
  await sink.toolCall(u.toolCallId, u.kind ?? 'other', { title: u.title, ...input });
  if (u.status === 'completed' || u.status === 'failed') await sink.toolResult(u.toolCallId, toolResultText(u), u.status === 'failed');
}

/** Kinds that carry nothing for the log (the agent's plan, its usage so far, its commands, mode and info changes). */
const IGNORED = [
  'user_message_chunk',
  'plan',
  'usage_update',
  'available_commands_update',
  'session_info_update',
  'current_mode_update',
  'config_option_update',
];

export const UPDATE_HANDLERS: Record<string, Handler> = {
  agent_message_chunk: (u, sink, buf) => {
    const c = u as acp.ContentChunk;
    if (informational(c)) return sink.skipped('informational');
    buf.add('text', blockText(c.content));
  },
  agent_thought_chunk: (u, _sink, buf) => buf.add('reasoning', blockText((u as acp.ContentChunk).content)),
  tool_call: (u, sink, buf) => callOf(u as acp.ToolCall, sink, buf),
  tool_call_update: async (u, sink, buf) => {
    const t = u as acp.ToolCallUpdate;
    // Only a finished call has a result; updates on the way (title, input, progress) are not history.
    if (t.status !== 'completed' && t.status !== 'failed') return;
    buf.flush();
    await sink.toolResult(t.toolCallId, toolResultText(t), t.status === 'failed');
  },
  ...Object.fromEntries(IGNORED.map((k) => [k, (_u: Update, sink: RemoteSink) => sink.skipped(`ignored:${k}`)])),
};

/** One `session/update` of the child's own session into sink calls; an unknown kind is counted, never fatal. */
export async function mapUpdate(u: Update, sink: RemoteSink, buf: ChunkBuffer): Promise<void> {
  const handler = UPDATE_HANDLERS[u.sessionUpdate];
  if (!handler) return sink.skipped(`unknown:${u.sessionUpdate}`);
  await handler(u, sink, buf);
}

/** ACP's stop reasons as Arbor's, with what to tell the parent when it is a failure. */
export const STOP_REASONS: Record<acp.StopReason, { stopReason: StopReason; error?: string }> = {
  end_turn: { stopReason: 'completed' },
  max_tokens: { stopReason: 'max-tokens' },
  max_turn_requests: { stopReason: 'error', error: 'it reached its own limit of model requests for one turn (max_turn_requests)' },
  refusal: { stopReason: 'error', error: 'it refused to go on (refusal)' },
  cancelled: { stopReason: 'interrupted' },
};

export function outcomeOf(resp: acp.PromptResponse, label: string): RemoteOutcome {
  const m = STOP_REASONS[resp.stopReason];
  if (!m) return { stopReason: 'error', error: `${label} ended its turn with an unknown stop reason "${String(resp.stopReason)}".` };
  return m.error ? { stopReason: m.stopReason, error: `${label} stopped: ${m.error}.` } : { stopReason: m.stopReason };
}

/**
 * ACP usage (unstable) as Arbor's. Whether `inputTokens` already counts the cache differs by
 * agent; `totalTokens` ("sum of all token types") tells: when it covers the cache on top of
 * input and output, the cache is counted apart and is added to the prompt.
 */
export function usageOf(u: acp.Usage | null | undefined): Usage | undefined {
  if (!u) return undefined;
  const input = num(u.inputTokens);
  const output = num(u.outputTokens);
  const read = num(u.cachedReadTokens);
  const write = num(u.cachedWriteTokens);
  const apart = read + write > 0 && num(u.totalTokens) >= input + output + read + write;
  return { promptTokens: apart ? input + read + write : input, completionTokens: output, cacheHitTokens: read };
}
