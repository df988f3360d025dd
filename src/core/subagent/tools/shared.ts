import { describeError } from '../../errors';
import { fail } from '../../tools/result';
import type { ToolResult } from '../../tools/tool';
import { SubagentError } from '../types';

/** A subagent failure as a result the model can act on: the code and what to do. */
export function subagentFailure(tool: string, err: unknown): ToolResult {
  if (err instanceof SubagentError) return fail('SUBAGENT', `${tool}: ${err.code}: ${err.message}`);
  return fail('SUBAGENT', `${tool}: failed: ${describeError(err)}`);
}

export const json = (v: unknown): string => JSON.stringify(v, null, 2);
