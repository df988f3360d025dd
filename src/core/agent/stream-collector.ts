import type { ModelError, ModelStreamEvent } from '../model/types';
import type { ToolCall, Usage } from '../session/events';

export interface Collected {
  text: string;
  reasoning: string;
  toolCalls: ToolCall[];
  usage?: Usage;
  finishReason?: 'stop' | 'tool_calls' | 'length' | 'other';
  error?: ModelError;
}

/** Fold a model stream into one assistant message; `onDelta` sees text as it streams. */
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
      if (ev.name) c.name += ev.name;
      c.arguments += ev.argumentsDelta;
      calls.set(ev.index, c);
    } else if (ev.type === 'usage') out.usage = ev.usage;
    else if (ev.type === 'done') out.finishReason = ev.finishReason;
    else if (ev.type === 'error') out.error = ev.error;
  }
  // Calls without an id get a stable one (index-based) so results can answer them.
  out.toolCalls = [...calls.entries()]
    .sort(([a], [b]) => a - b)
    .filter(([, c]) => c.name)
    .map(([i, c]) => ({ id: c.id ?? `call_${i}`, name: c.name, arguments: c.arguments }));
  return out;
}
