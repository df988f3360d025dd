import { replyAnomaly, replyCut } from '../model/errors';
import type { ModelError, ModelStreamEvent } from '../model/types';
import type { ToolCall, Usage } from '../session/events';

export interface Collected {
  text: string;
  reasoning: string;
  toolCalls: ToolCall[];
  usage?: Usage;
  finishReason?: 'stop' | 'tool_calls' | 'length' | 'other';
  error?: ModelError;
  /** Attempts before the answered one that went out and were answered too late (each may be billed its prompt). */
  resent?: number;
}

/**
 * Tool arguments nested deeper than this are refused as an anomaly: no tool takes more than a
 * few levels, and checking or printing a value 200,000 levels deep overflows the stack.
 */
export const MAX_ARGUMENT_DEPTH = 64;

/** How deep `json` nests (brackets outside strings); stops counting past `limit`. */
export function nestingDepth(json: string, limit = MAX_ARGUMENT_DEPTH): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < json.length; i++) {
    const ch = json.charCodeAt(i);
    if (inString) {
      if (ch === 0x5c)
        i++; // backslash: skip the escaped character
      else if (ch === 0x22) inString = false;
    } else if (ch === 0x22) inString = true;
    else if (ch === 0x5b || ch === 0x7b) {
      if (++depth > max && (max = depth) > limit) return max;
    } else if (ch === 0x5d || ch === 0x7d) depth--;
  }
  return max;
}

/**
 * Fold a model stream into one assistant message; `onDelta` sees text as it streams.
 * Every stream ends in `finishReason` or `error`: one that just stops is cut (decision 0023).
 */
export async function collect(stream: AsyncIterable<ModelStreamEvent>, onDelta?: (kind: 'text' | 'reasoning', delta: string) => void): Promise<Collected> {
  const out: Collected = { text: '', reasoning: '', toolCalls: [] };
  const calls = new Map<number, { id?: string; name: string; arguments: string }>();
  for await (const ev of stream) {
    if (ev.type === 'text') {
      out.text += ev.delta;
      onDelta?.('text', ev.delta);
    } else if (ev.type === 'reasoning') {
      out.reasoning += ev.delta;
      onDelta?.('reasoning', ev.delta);
    } else if (ev.type === 'tool-call') {
      const c = calls.get(ev.index) ?? { name: '', arguments: '' };
      if (ev.id) c.id = ev.id;
      // Some servers repeat the whole name in every chunk of a call: it is taken once.
      if (ev.name && ev.name !== c.name) c.name += ev.name;
      c.arguments += ev.argumentsDelta;
      calls.set(ev.index, c);
    } else if (ev.type === 'usage') out.usage = ev.usage;
    else if (ev.type === 'done') out.finishReason = ev.finishReason;
    else if (ev.type === 'error') out.error = ev.error;
    else if (ev.type === 'resent') out.resent = (out.resent ?? 0) + 1;
  }
  if (!out.finishReason && !out.error) out.error = replyCut(true);
  // Calls without an id get a stable one (index-based) so results can answer them.
  out.toolCalls = [...calls.entries()]
    .sort(([a], [b]) => a - b)
    .filter(([, c]) => c.name)
    .map(([i, c]) => ({ id: c.id ?? `call_${i}`, name: c.name, arguments: c.arguments }));
  const deep = out.error ? undefined : out.toolCalls.find((c) => nestingDepth(c.arguments) > MAX_ARGUMENT_DEPTH);
  if (deep) out.error = replyAnomaly(`arguments of ${deep.name} nested deeper than ${MAX_ARGUMENT_DEPTH} levels`);
  return out;
}
