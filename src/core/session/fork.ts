import type { RootAgent, SessionEvent, SessionHeader, SubagentDescriptorEvent } from './events';

/**
 * Where a fork's seed ends, so it never holds half a turn: the index of the `turn/end` that
 * closes the turn holding `seq` (the user forks at a message), or with no `seq` of the last
 * finished turn (a subagent fork of its running parent). -1: that turn has not ended yet.
 */
export function forkPoint(events: readonly SessionEvent[], seq?: number): number {
  if (seq === undefined) {
    for (let i = events.length - 1; i >= 0; i--) if (events[i].type === 'turn/end') return throughCompaction(events, i);
    return -1;
  }
  for (let i = seq; i < events.length; i++) if (events[i].type === 'turn/end') return throughCompaction(events, i);
  return -1;
}

/**
 * A seed that ends at the `turn/end` at `end` takes in a compaction finished right after it,
 * before the next turn started (decision 0003, amended in session 49): the source compacted
 * there and every request it made since starts with the compacted surface. Left out, the fork
 * would find the source's last usage over the threshold and compact again on its own — one more
 * summary request, and a surface (its own summary) that shares no bytes with the source's, so
 * the prompt cache missed the whole history. The index of that compaction's end, else `end`.
 */
export function throughCompaction(events: readonly SessionEvent[], end: number): number {
  let at = end;
  for (let i = end + 1; i < events.length; i++) {
    const e = events[i];
    if (e.type === 'turn/start' || e.type === 'inbox/claimed') break;
    if (e.type === 'compaction/end') at = i;
  }
  return at;
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

/**
 * What a user's fork of a subagent runs as (decision 0006, amended in session 49): the child's
 * own composition — its role, tools and model as its descriptor recorded them — so the fork is
 * the same agent and its first request starts with the child's bytes (the prompt cache holds).
 * Only for a child Arbor's own model loop ran (`spawn`, `fork`): a remote program's model is not
 * this endpoint's. Undefined: nothing to carry (the deployment's composition is the child's).
 * `source` is the child's header: a subagent fork's role is kept there, not in its descriptor.
 */
export function agentOfSubagent(d: SubagentDescriptorEvent | undefined, source: SessionHeader): RootAgent | undefined {
  if (!d || (d.provider !== 'spawn' && d.provider !== 'fork')) return undefined;
  const inherited = d.persona === undefined && source.origin === 'fork' && source.agent?.persona ? source.agent : undefined;
  if (d.persona === undefined && !inherited && d.toolFilter === undefined && d.model === undefined) return undefined;
  return {
    name: d.agent ?? source.agent?.name ?? d.label ?? 'subagent',
    ...(d.persona !== undefined ? { persona: d.persona, ...(d.personaComplete ? { personaComplete: true } : {}) } : {}),
    ...(inherited?.persona ? { persona: inherited.persona, ...(inherited.personaComplete ? { personaComplete: true } : {}) } : {}),
    ...(d.toolFilter ? { toolFilter: [...d.toolFilter] } : {}),
    ...(d.model ? { model: d.model } : {}),
  };
}
