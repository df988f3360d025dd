import { describeError } from '../errors';
import type { ToolCall } from '../session/events';
import { parseToolArguments } from '../tools/args';
import { fileKey } from '../tools/paths';
import type { Tool, ToolContext, ToolResult } from '../tools/tool';

/**
 * Run a step's tool calls in parallel, except that calls touching the same file (by its
 * real path, see `Tool.pathArguments`) wait for the ones before them: seven edits of one
 * file apply one after another, each to the text the previous one left, and every edit
 * reported is in the file. Results come back in call order so the log (and the next
 * request's bytes) do not depend on which tool finished first.
 */
export async function runToolCalls(calls: readonly ToolCall[], tools: readonly Tool[], ctx: ToolContext): Promise<ToolResult[]> {
  const byName = new Map(tools.map((t) => [t.name, t]));
  const prepared = calls.map((call) => {
    const tool = byName.get(call.name);
    return { call, tool, parsed: tool ? parseToolArguments(tool, call.arguments) : undefined };
  });
  const keys = await Promise.all(
    prepared.map(async ({ tool, parsed }) => {
      if (!tool?.pathArguments || !parsed?.ok) return [];
      const found = await Promise.all(tool.pathArguments.map((name) => fileKey(ctx, parsed.args[name])));
      return [...new Set(found.filter((k): k is string => k !== undefined))];
    }),
  );

  // The last call queued on each file; a call starts once every call before it on its files has ended.
  const queue = new Map<string, Promise<unknown>>();
  return Promise.all(
    prepared.map(({ call, tool, parsed }, i): Promise<ToolResult> => {
      const before = keys[i].map((k) => queue.get(k)).filter((p) => p !== undefined);
      const run = Promise.all(before).then(async (): Promise<ToolResult> => {
        if (!tool) {
          const names = [...byName.keys()].join(', ');
          return { isError: true, content: `Unknown tool "${call.name}". Available tools: ${names || 'none'}.` };
        }
        if (!parsed!.ok) return { isError: true, content: parsed!.message };
        try {
          return await tool.execute(parsed!.args, { ...ctx, callId: call.id });
        } catch (err) {
          // A tool must not throw; if one does, the model still gets an answer it can act on.
          return { isError: true, content: `${call.name} failed: ${describeError(err)}` };
        }
      });
      for (const k of keys[i]) queue.set(k, run);
      return run;
    }),
  );
}
