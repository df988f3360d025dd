import { describeError } from '../errors';
import type { ToolCall } from '../session/events';
import { type ParsedArguments, parseToolArguments } from '../tools/args';
import { callTool } from '../tools/call';
import { fileKey } from '../tools/paths';
import { fail } from '../tools/result';
import type { Tool, ToolContext, ToolResult } from '../tools/tool';
import type { ToolCallHooks } from './config';

/**
 * Run a step's tool calls in parallel, except that calls touching the same file (by its
 * real path, see `Tool.pathArguments`) wait for the ones before them: seven edits of one
 * file apply one after another, each to the text the previous one left, and every edit
 * reported is in the file. Results come back in call order so the log (and the next
 * request's bytes) do not depend on which tool finished first.
 */
export async function runToolCalls(calls: readonly ToolCall[], tools: readonly Tool[], ctx: ToolContext, hooks: ToolCallHooks = {}): Promise<ToolResult[]> {
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
        const args = parsed?.ok ? parsed.args : undefined;
        const result = await answer(call, tool, parsed, ctx, hooks, byName);
        return hooks.afterToolCall ? checkAfter(hooks.afterToolCall, { call, args, result, ctx }) : result;
      });
      for (const k of keys[i]) queue.set(k, run);
      return run;
    }),
  );
}

/** One call's answer: unknown tool, bad arguments, a block by `beforeToolCall`, or the tool's own result (through `callTool`). */
async function answer(
  call: ToolCall,
  tool: Tool | undefined,
  parsed: ParsedArguments | undefined,
  ctx: ToolContext,
  hooks: ToolCallHooks,
  byName: Map<string, Tool>,
): Promise<ToolResult> {
  if (!tool || !parsed) {
    const names = [...byName.keys()].join(', ');
    return fail('UNKNOWN_TOOL', `Unknown tool "${call.name}". Available tools: ${names || 'none'}.`);
  }
  const blocked =
    parsed.ok && hooks.beforeToolCall ? await checkBefore(hooks.beforeToolCall, { call, args: parsed.args, ctx: { ...ctx, callId: call.id } }) : undefined;
  if (blocked) return blocked;
  return callTool(tool, parsed, { ...ctx, callId: call.id, ...(hooks.onProgress ? { progress: progressOf(hooks.onProgress, call) } : {}) });
}

/** A `beforeToolCall` answer; a throw or a rejection blocks the call (fail closed). */
async function checkBefore(
  hook: NonNullable<ToolCallHooks['beforeToolCall']>,
  c: { call: ToolCall; args: Record<string, unknown>; ctx: ToolContext },
): Promise<ToolResult | undefined> {
  try {
    return (await hook(c)) ?? undefined;
  } catch (err) {
    return fail('BLOCKED', `${c.call.name} was not run: a check before it failed (${describeError(err)}).`);
  }
}

/** An `afterToolCall` replacement; a throw or a rejection keeps the tool's own result. */
async function checkAfter(
  hook: NonNullable<ToolCallHooks['afterToolCall']>,
  c: { call: ToolCall; args?: Record<string, unknown>; result: ToolResult; ctx: ToolContext },
): Promise<ToolResult> {
  try {
    return (await hook(c)) ?? c.result;
  } catch {
    return c.result;
  }
}

/** A call's progress reporter: a listener that throws cannot reach the tool. */
function progressOf(onProgress: NonNullable<ToolCallHooks['onProgress']>, call: ToolCall): (text: string) => void {
  return (text) => {
    try {
      onProgress({ callId: call.id, tool: call.name, text: String(text) });
    } catch {
      // a view's bug is not the tool's failure
    }
  };
}
