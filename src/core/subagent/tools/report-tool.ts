import { ok } from '../../tools/result';
import type { Tool } from '../../tools/tool';
import { reportToParent } from '../control';
import type { SubagentControl } from '../surface';
import { subagentFailure } from './shared';

/**
 * Registered only in a continuable child's own scope. The recipient is derived from the
 * durable parentSession and the sender from the calling session: neither can be named.
 */
export function createReportTool(rt: SubagentControl): Tool {
  return {
    name: 'report',
    description:
      'Send a progress note to the agent that started you (your direct parent), while you keep working. ' +
      "mode 'quiet' adds it to the parent's history without interrupting it; 'wakeup' gives the parent a turn to react. " +
      'A report does not end your turn and is not your result: your final message is delivered when you finish.',
    parameters: {
      type: 'object',
      properties: {
        message: { type: 'string', description: 'What the parent should know now.' },
        mode: { type: 'string', enum: ['quiet', 'wakeup'], description: "'quiet' (default) or 'wakeup'." },
      },
      required: ['message'],
      additionalProperties: false,
    },
    async execute(args, ctx) {
      try {
        const mode = args.mode === 'wakeup' ? 'wakeup' : 'quiet';
        const to = await reportToParent(rt, ctx.sessionId, String(args.message), mode);
        return ok(`Reported to ${to} (${mode}). Keep working; your final message is your result.`);
      } catch (err) {
        return subagentFailure('report', err);
      }
    },
  };
}
