import { ok } from '../../tools/result';
import type { Tool } from '../../tools/tool';
import { listAgents } from '../control';
import type { SubagentControl } from '../surface';
import { json, subagentFailure } from './shared';

export function createListAgentsTool(rt: SubagentControl): Tool {
  return {
    name: 'list_agents',
    description:
      'List your subagents and theirs: id, parent, depth, provider, label, status (running; queued = waiting for a free slot under the limit on subagents running at once, no request made yet; approval = waiting for a human to approve; waiting = for its own children; settled; failed; interrupted), resident (true: not yet released, it may still report), last stop reason, queued messages, tokens and cache hits.',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    async execute(_args, ctx) {
      try {
        return ok(json(await listAgents(rt, ctx.sessionId)));
      } catch (err) {
        return subagentFailure('list_agents', err);
      }
    },
  };
}
