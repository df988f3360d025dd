import { describeError } from '../errors';
import { fail, ok } from '../tools/result';
import type { Tool } from '../tools/tool';
import type { GoalService } from './service';
import { GoalError } from './snapshot';

/**
 * The model's `goal` tool: global, with a static description (a per-root tool or any goal
 * text in the system prompt would break head identity for forks and spawns, seed 003). It
 * reads the goal, notes progress, completes or blocks it — it never arms one: only a human
 * sets or resumes a goal. It refuses in subagents.
 */
export function createGoalTool(goals: GoalService): Tool {
  return {
    name: 'goal',
    description:
      "The goal of this conversation, if the user set one (a goal runs rounds by itself while the user has it armed). Actions: 'status' (the objective, phase, rounds), " +
      "'progress' with a note (where you are, kept with the goal), 'complete' when the objective is achieved (optionally with a note), 'block' with a reason when you cannot go on without the user. " +
      'You cannot set, resume or arm a goal: only the user does. Subagents have no goal.',
    parameters: {
      type: 'object',
      properties: {
        action: { type: 'string', enum: ['status', 'progress', 'complete', 'block'] },
        note: { type: 'string', description: "For 'progress' (required) and 'complete': a short report." },
        reason: { type: 'string', description: "For 'block' (required): why you cannot go on." },
      },
      required: ['action'],
      additionalProperties: false,
    },
    async execute(args, ctx) {
      const action = args.action as 'status' | 'progress' | 'complete' | 'block';
      const note = typeof args.note === 'string' ? args.note.trim() : '';
      const reason = typeof args.reason === 'string' ? args.reason.trim() : '';
      try {
        if (await goals.host.isSubagent(ctx.sessionId))
          return fail('GOAL', 'goal: NOT_ROOT: goals belong to conversations the user owns; a subagent has none. Report to your parent instead.');
        if (action === 'status') {
          const s = await goals.state(ctx.sessionId);
          return ok(JSON.stringify(s.goal ? { ...s.goal, armed: s.armed } : { goal: null }, null, 2));
        }
        if (action === 'progress') {
          if (!note) return fail('INVALID_ARGUMENTS', "goal: 'progress' needs a note saying where you are.");
          const g = await goals.progress(ctx.sessionId, note);
          return ok(`Progress noted (round ${g.roundsStarted} of ${g.maxGoalRounds}).`);
        }
        if (action === 'complete') {
          await goals.complete(ctx.sessionId, note || undefined);
          return ok('Goal complete: no more rounds will start.');
        }
        if (!reason) return fail('INVALID_ARGUMENTS', "goal: 'block' needs a reason the user can act on.");
        await goals.block(ctx.sessionId, reason);
        return ok('Goal blocked: no more rounds start until the user resumes it.');
      } catch (err) {
        if (err instanceof GoalError) return fail('GOAL', `goal: ${err.code}: ${err.message}`);
        return fail('GOAL', `goal: failed: ${describeError(err)}`);
      }
    },
  };
}
