import type { ToolCall } from '../session/events';
import { parseToolArguments } from '../tools/args';
import type { Tool, ToolContext, ToolResult } from '../tools/tool';

/**
 * Run a step's tool calls in parallel; results come back in call order so the log (and
 * the next request's bytes) do not depend on which tool finished first.
 */
export async function runToolCalls(calls: readonly ToolCall[], tools: readonly Tool[], ctx: ToolContext): Promise<ToolResult[]> {
  const byName = new Map(tools.map((t) => [t.name, t]));
  return Promise.all(
    calls.map(async (call): Promise<ToolResult> => {
      const tool = byName.get(call.name);
      if (!tool) {
        const names = [...byName.keys()].join(', ');
        return { isError: true, content: `Unknown tool "${call.name}". Available tools: ${names || 'none'}.` };
      }
      const parsed = parseToolArguments(tool, call.arguments);
      if (!parsed.ok) return { isError: true, content: parsed.message };
      try {
        return await tool.execute(parsed.args, { ...ctx, callId: call.id });
      } catch (err) {
        // A tool must not throw; if one does, the model still gets an answer it can act on.
        return { isError: true, content: `${call.name} failed: ${err instanceof Error ? err.message : String(err)}` };
      }
    }),
  );
}
