import { checkBudget } from '../../session/budget';
import { ok } from '../../tools/result';
import type { Tool, ToolContext } from '../../tools/tool';
import type { SubagentControl } from '../surface';
import type { SubagentRequest } from '../types';
import { runOneShot } from './one-shot';
import { BUDGET_PARAM, ISOLATION_PARAM, json, subagentFailure } from './shared';

const PARAMS = {
  type: 'object' as const,
  properties: {
    prompt: { type: 'string' as const, description: 'The whole task: the child sees none of your conversation.' },
    label: { type: 'string' as const, description: 'A short name shown in the agent tree, e.g. "tests".' },
    mode: {
      type: 'string' as const,
      enum: ['wait', 'background', 'continuable'],
      description:
        "'wait' (default): run it now and get its final answer as this tool's result. 'background': you go on; its answer arrives later as a notice. " +
        "'continuable': a child you can message later with send_message; it reports progress and you get a settlement notice when it goes idle.",
    },
    tools: { type: 'array' as const, items: { type: 'string' as const }, description: 'Optional allow-list of your tools the child may use.' },
    persona: { type: 'string' as const, description: 'Optional role instructions for the child.' },
    agent: {
      type: 'string' as const,
      description: 'Optional name of an agent defined in a file (see "Agents defined in files"): the child takes its role, tools and model.',
    },
    outputSchema: { type: 'object' as const, description: "Optional JSON schema (type object) of a structured result ('wait' and 'background' only)." },
    budget: BUDGET_PARAM,
    isolation: ISOLATION_PARAM,
  },
  required: ['prompt'],
  additionalProperties: false,
};

/**
 * `placement`, advertised only when placements are configured (decision 0074): the names are
 * the deployment's, fixed when the harness is built, so the request head stays the same per deployment.
 */
function withPlacements(names: readonly string[]) {
  if (!names.length) return PARAMS;
  return {
    ...PARAMS,
    properties: {
      ...PARAMS.properties,
      placement: {
        type: 'string' as const,
        enum: [...names],
        description:
          "Optional. Run the child on this configured placement (another machine or a container) instead of here: it works in its own git worktree copied there, and its changes come back for review like a worktree child's. A workflow script's agent(prompt, {placement}) takes the same names.",
      },
    },
  };
}

/** `subagent`: delegate to a fresh child (empty history) — one-shot or continuable; with `placements`, on one of them. */
export function createSubagentTool(rt: SubagentControl, placements: readonly string[] = []): Tool {
  return {
    name: 'subagent',
    description:
      'Delegate a self-contained task to a new subagent with an empty history and your tools. Use it for independent work ' +
      '(research, a separate file, tests) so your own context stays small. The child cannot widen your permissions.',
    parameters: withPlacements(placements),
    async execute(args, ctx) {
      return startFromTool(rt, 'spawn', args, ctx, 'subagent');
    },
  };
}

export async function startFromTool(rt: SubagentControl, provider: string, args: Record<string, unknown>, ctx: ToolContext, tool: string) {
  const caller = rt.resident(ctx.sessionId);
  if (!caller) return subagentFailure(tool, new Error(`session ${ctx.sessionId} is not live`));
  const request: SubagentRequest = { prompt: String(args.prompt) };
  if (typeof args.label === 'string') request.label = args.label;
  if (Array.isArray(args.tools)) request.toolFilter = args.tools.map(String);
  if (typeof args.persona === 'string') request.persona = { text: args.persona };
  if (typeof args.agent === 'string') request.agent = args.agent;
  if (args.isolation !== undefined) request.isolation = args.isolation as 'worktree';
  if (args.placement !== undefined) request.placement = args.placement as string;
  if (args.outputSchema !== undefined) request.outputSchema = args.outputSchema as SubagentRequest['outputSchema'];
  try {
    if (args.budget !== undefined) request.budget = checkBudget(args.budget);
    if (args.mode === 'continuable') {
      const r = await rt.startContinuable(caller, provider, request, { signal: ctx.signal });
      return ok(
        json({
          childId: r.childId,
          status: 'started',
          next: 'It works on its own; you get a settlement notice when it goes idle. Use send_message to follow up, interrupt_agent to stop its turn.',
        }),
      );
    }
    return await runOneShot(rt, caller, provider, request, args.mode === 'background', ctx.signal);
  } catch (err) {
    return subagentFailure(tool, err);
  }
}
