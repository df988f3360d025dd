import { fail, ok } from '../../tools/result';
import type { Tool } from '../../tools/tool';
import { interruptAgent } from '../control';
import type { SubagentControl } from '../surface';
import { json, subagentFailure } from './shared';

const WHY: Record<string, string> = {
  self: 'you cannot interrupt yourself',
  'not-ancestor': 'only an ancestor of that agent can interrupt it',
  'stale-handle': 'this agent handle is no longer live',
};

export function createInterruptTool(rt: SubagentControl): Tool {
  return {
    name: 'interrupt_agent',
    description:
      'Stop the current turn of one of your descendants (child, grandchild…). Its queued messages are kept and it stays available for send_message; it is not deleted.',
    parameters: {
      type: 'object',
      properties: { agentId: { type: 'string', description: 'The id of the descendant to interrupt.' } },
      required: ['agentId'],
      additionalProperties: false,
    },
    async execute(args, ctx) {
      const caller = rt.resident(ctx.sessionId);
      if (!caller) return subagentFailure('interrupt_agent', new Error(`session ${ctx.sessionId} is not live`));
      const r = await interruptAgent(rt, caller, String(args.agentId));
      if (!r.accepted) return fail('SUBAGENT', `interrupt_agent: refused: ${WHY[r.reason]}.`);
      return ok(json({ agentId: args.agentId, effect: r.effect, ...(r.reason ? { note: r.reason } : {}) }));
    },
  };
}
