import { describeError } from '../errors';
import { parseToolArguments } from './args';
import { fail } from './result';
import type { Tool, ToolContext, ToolResult } from './tool';

/**
 * Parse a model's raw JSON arguments, then run the tool: bad arguments and a tool that
 * throws anyway both come back as error results the model can act on.
 */
export async function callTool(tool: Tool, rawArguments: string, ctx: ToolContext): Promise<ToolResult> {
  const parsed = parseToolArguments(tool, rawArguments);
  if (!parsed.ok) return fail('INVALID_ARGUMENTS', parsed.message);
  try {
    return await tool.execute(parsed.args, ctx);
  } catch (e) {
    return fail('IO_ERROR', `${tool.name} failed: ${describeError(e)}`);
  }
}
