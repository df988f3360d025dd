import type { SessionEvent, SessionHeader } from './events';

/**
 * Where a fork's seed ends, so it never holds half a turn: the index of the `turn/end` that
 * closes the turn holding `seq` (the user forks at a message), or with no `seq` of the last
 * finished turn (a subagent fork of its running parent). -1: that turn has not ended yet.
 */
export function forkPoint(events: readonly SessionEvent[], seq?: number): number {
  if (seq === undefined) {
    for (let i = events.length - 1; i >= 0; i--) if (events[i].type === 'turn/end') return i;
    return -1;
  }
  for (let i = seq; i < events.length; i++) if (events[i].type === 'turn/end') return i;
  return -1;
}

/** The header of a session made from another (a user's fork, a subagent): it works where its source works, under its preset. */
export function headerFrom(source: SessionHeader, own: Pick<SessionHeader, 'id' | 'origin' | 'parentSession' | 'delegationDepth' | 'title'>): SessionHeader {
  return {
    id: own.id,
    createdAt: new Date().toISOString(),
    origin: own.origin,
    parentSession: own.parentSession,
    delegationDepth: own.delegationDepth,
    ...(own.title ? { title: own.title } : {}),
    ...(source.cwd ? { cwd: source.cwd } : {}),
    ...(source.agentPreset ? { agentPreset: source.agentPreset } : {}),
    // A fork is the same agent (its request head must stay the source's); a spawned child is not.
    ...(source.agent && own.origin === 'fork' ? { agent: { ...source.agent } } : {}),
  };
}
