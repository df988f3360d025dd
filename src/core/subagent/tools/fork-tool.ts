import type { Tool } from '../../tools/tool';
import type { SubagentControl } from '../surface';
import { BUDGET_PARAM, ISOLATION_PARAM } from './shared';
import { startFromTool } from './subagent-tool';

/**
 * `subagent_fork`: a child that starts from your conversation so far (up to your last
 * finished turn). Bound to one-shot: a continuable child's report tool would change the
 * request head and lose the prompt-cache reuse that is the point of forking.
 */
export function createForkTool(rt: SubagentControl): Tool {
  return {
    name: 'subagent_fork',
    description:
      'Fork yourself: a one-shot child that already knows everything up to your last finished turn (cheap: it reuses the prompt cache). ' +
      'Use it to explore an alternative or do a side task that needs your context. It answers once; it cannot be messaged later.',
    parameters: {
      type: 'object',
      properties: {
        prompt: { type: 'string', description: 'What the fork should do now (it does not see your current turn).' },
        label: { type: 'string', description: 'A short name shown in the agent tree.' },
        mode: { type: 'string', enum: ['wait', 'background'], description: "'wait' (default) for its answer now, or 'background'." },
        budget: BUDGET_PARAM,
        isolation: ISOLATION_PARAM,
      },
      required: ['prompt'],
      additionalProperties: false,
    },
    async execute(args, ctx) {
      return startFromTool(rt, 'fork', { ...args, mode: args.mode === 'background' ? 'background' : 'wait' }, ctx, 'subagent_fork');
    },
  };
}
