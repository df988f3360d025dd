import { describeError } from '../errors';
import { type ParsedArguments, parseToolArguments } from './args';
import { fail } from './result';
import type { Tool, ToolContext, ToolResult } from './tool';

/**
 * Parse a model's raw JSON arguments (or take them parsed already), then run the tool: bad
 * arguments and a tool that throws anyway both come back as coded error results the model
 * can act on. The one way a tool call runs (the agent's tool runner, the workflow engine).
 */
export async function callTool(tool: Tool, args: string | ParsedArguments, ctx: ToolContext): Promise<ToolResult> {
  const parsed = typeof args === 'string' ? parseToolArguments(tool, args) : args;
  if (!parsed.ok) return fail('INVALID_ARGUMENTS', parsed.message);
  try {
    return await tool.execute(parsed.args, ctx);
  } catch (e) {
    // A tool must not throw; if one does, the model still gets an answer it can act on.
    return fail('IO_ERROR', `${tool.name} failed: ${describeError(e)}`);
  }
}
