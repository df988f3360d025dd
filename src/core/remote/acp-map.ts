import type * as acp from '@agentclientprotocol/sdk/unstable';
import type { StopReason, Usage } from '../session/events';
import { blockText, ToolCalls } from './acp-calls';
import { ChunkBuffer } from './acp-chunks';
import { num, record } from './run';
import type { RemoteOutcome, RemoteSink } from './types';

// How an ACP agent's `session/update` notifications and its prompt answer become the child's
// log (decision 0040): one handler per update kind, a table per enum. The driver serialises
// the calls (the SDK dispatches notifications without waiting for the previous one).

type Update = acp.SessionUpdate;
/** What a handler works with: the sink, the chunk buffer, the calls on their way. */
export interface MapState {
  sink: RemoteSink;
  buf: ChunkBuffer;
  calls: ToolCalls;
}
type Handler = (u: Update, st: MapState) => void | Promise<void>;

/** A fresh mapping state over a sink (one per turn: call ids are unique per turn). */
export function mapState(sink: RemoteSink): MapState {
  const buf = new ChunkBuffer(sink);
  return { sink, buf, calls: new ToolCalls(sink, buf) };
}

/** What is held back goes to the sink now: calls still open (with what is known of them), then the joined chunks. */
export async function flushState(st: MapState): Promise<void> {
  await st.calls.writeAll();
  st.buf.flush();
}

/** Claude's adapter tags chatter about itself (not the model's answer) this way: never part of the answer. */
const informational = (u: { _meta?: Record<string, unknown> | null }): boolean => {
  const cc = record(u._meta) && record(u._meta.claudeCode) ? u._meta.claudeCode : undefined;
  return cc?.kind === 'informational';
};

/** A chunk comes after every call announced so far (their input is as complete as it gets). */
async function chunk(kind: 'text' | 'reasoning', u: Update, st: MapState): Promise<void> {
  const c = u as acp.ContentChunk;
  if (kind === 'text' && informational(c)) return st.sink.skipped('informational');
  await st.calls.writeAll();
  st.buf.add(kind, blockText(c.content));
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
  agent_message_chunk: (u, st) => chunk('text', u, st),
  agent_thought_chunk: (u, st) => chunk('reasoning', u, st),
  tool_call: (u, st) => st.calls.start(u as acp.ToolCall),
  tool_call_update: (u, st) => st.calls.update(u as acp.ToolCallUpdate),
  ...Object.fromEntries(IGNORED.map((k) => [k, (_u: Update, st: MapState) => st.sink.skipped(`ignored:${k}`)])),
};

/** One `session/update` of the child's own session into sink calls; an unknown kind is counted, never fatal. */
export async function mapUpdate(u: Update, st: MapState): Promise<void> {
  const handler = UPDATE_HANDLERS[u.sessionUpdate];
  if (!handler) return st.sink.skipped(`unknown:${u.sessionUpdate}`);
  await handler(u, st);
}

/** ACP's stop reasons as Arbor's, with what to tell the parent when it is a failure. */
export const STOP_REASONS: Record<acp.StopReason, { stopReason: StopReason; error?: string }> = {
  end_turn: { stopReason: 'completed' },
  max_tokens: { stopReason: 'max-tokens' },
  max_turn_requests: { stopReason: 'error', error: 'it reached its own limit of model requests for one turn (max_turn_requests)' },
  refusal: { stopReason: 'error', error: 'it refused to go on (refusal)' },
  cancelled: { stopReason: 'interrupted' },
};

/** An ACP stop reason as an outcome (a failure says `<who>: <why>.`), or undefined for one ACP does not define. */
export function stopOutcome(reason: unknown, who: string): RemoteOutcome | undefined {
  const m = typeof reason === 'string' && Object.hasOwn(STOP_REASONS, reason) ? STOP_REASONS[reason as acp.StopReason] : undefined;
  if (!m) return undefined;
  return m.error ? { stopReason: m.stopReason, error: `${who}: ${m.error}.` } : { stopReason: m.stopReason };
}

export function outcomeOf(resp: acp.PromptResponse, label: string): RemoteOutcome {
  return (
    stopOutcome(resp.stopReason, `${label} stopped`) ?? {
      stopReason: 'error',
      error: `${label} ended its turn with an unknown stop reason "${String(resp.stopReason)}".`,
    }
  );
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
