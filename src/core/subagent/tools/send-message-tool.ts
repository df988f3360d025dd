import { ok } from '../../tools/result';
import type { Tool } from '../../tools/tool';
import type { SubagentControl } from '../surface';
import { json, subagentFailure } from './shared';

export function createSendMessageTool(rt: SubagentControl): Tool {
  return {
    name: 'send_message',
    description:
      'Send a follow-up to one of your continuable subagents (by childId). It is queued after its current work (never mixed into a running turn); ' +
      'a child that went idle is resumed from its saved history. Its answer arrives as a settlement notice. ' +
      'delivered "kept" means a Stop of the child overtook the message: it waits queued until the user resumes the child.',
    parameters: {
      type: 'object',
      properties: {
        agentId: { type: 'string', description: 'The childId returned when you started it (see list_agents).' },
        message: { type: 'string', description: 'What to do next.' },
      },
      required: ['agentId', 'message'],
      additionalProperties: false,
    },
    async execute(args, ctx) {
      try {
        const r = await rt.followup(ctx.sessionId, String(args.agentId), String(args.message), ctx.signal);
        return ok(json({ agentId: args.agentId, delivered: r.path, messageId: r.messageId }));
      } catch (err) {
        return subagentFailure('send_message', err);
      }
    },
  };
}
