import { forkPoint } from '../session/fork';
import { SubagentError, type SubagentProvider } from './types';

/**
 * A child seeded with the parent's history up to its last `turn/end` — never a half
 * turn — so the child's first request shares the parent's prefix (and prompt cache).
 */
export const forkProvider: SubagentProvider = {
  name: 'fork',
  capabilities: { outputSchema: true, depthLimit: true, toolFilter: true, persona: true },
  inheritsParentContext: true,
  prepare(parent) {
    const events = parent.events;
    const last = forkPoint(events);
    if (last < 0) throw new SubagentError('BAD_REQUEST', 'Nothing to fork yet: the conversation has no finished turn. Use a spawned subagent instead.');
    return { seed: events.slice(0, last + 1) };
  },
};
