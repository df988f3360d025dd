import { describeError } from '../../errors';
import { BudgetInputError } from '../../session/budget';
import { fail } from '../../tools/result';
import type { ToolResult } from '../../tools/tool';
import { SubagentError } from '../types';

/** The `budget` argument of the delegation tools (checked by `checkBudget`, then against what the caller has left). */
export const BUDGET_PARAM = {
  type: 'object' as const,
  description:
    "Optional budget for the child and everything it delegates: {maxTokens?, maxCostUsd?}; at most what your own budget has left. Past it, the child's turn stops with 'budget'.",
  properties: { maxTokens: { type: 'integer' as const, minimum: 1 }, maxCostUsd: { type: 'number' as const, minimum: 0 } },
  additionalProperties: false,
};

/** A subagent failure as a result the model can act on: the code and what to do. */
export function subagentFailure(tool: string, err: unknown): ToolResult {
  if (err instanceof SubagentError) return fail('SUBAGENT', `${tool}: ${err.code}: ${err.message}`);
  if (err instanceof BudgetInputError) return fail('SUBAGENT', `${tool}: BAD_BUDGET: ${err.message}`);
  return fail('SUBAGENT', `${tool}: failed: ${describeError(err)}`);
}

/** The `isolation` argument of the delegation tools (decision 0060). */
export const ISOLATION_PARAM = {
  type: 'string' as const,
  enum: ['worktree'],
  description:
    "Optional. 'worktree': the child works in its own git worktree (a copy of the workspace as it is now, on its own branch arbor/…); the workspace itself is read-only to it. The user reviews its changes and applies or discards them.",
};

export const json = (v: unknown): string => JSON.stringify(v, null, 2);
