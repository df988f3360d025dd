import type { Harness } from '../../core/harness';
import { PLACED_PREFIX } from '../../core/subagent/placed';
import type { HandlerContext, RequestHandlers } from './context';

/** The configured placements' names (a provider `placed:<name>` each, decision 0074). */
export function placementNames(h: Harness): string[] {
  return h.subagents.providerNames.filter((p) => p.startsWith(PLACED_PREFIX)).map((p) => p.slice(PLACED_PREFIX.length));
}

/**
 * A human's task for a node, run on a placement (decision 0074): a continuable child of that
 * node, so the human (or the node) can follow up; an unknown placement is refused with
 * UNKNOWN_PLACEMENT listing the configured ones, as for the model's tools.
 */
export async function startPlaced(h: Harness, sessionId: string, placement: string, prompt: string): Promise<string> {
  // A subagent node is the caller as itself (its parent's tools and roots), resumed by the runtime
  // if it rests; never opened as a root, which would give it the deployment's tools.
  const caller = h.resident(sessionId) ?? (await ((await h.isSubagent(sessionId)) ? h.subagents.activate(sessionId) : h.openSession(sessionId)));
  const label = prompt.trim().split('\n')[0].slice(0, 40) || placement;
  const r = await h.subagents.startContinuable(caller, 'spawn', { prompt, placement, label });
  return r.childId;
}

/** "Run on a placement…" from the tree (the command asks; a view may send it too). */
export function placementRequests(c: HandlerContext): Pick<RequestHandlers, 'placement/start'> {
  return {
    'placement/start': async (_port, m) => ({ childId: await startPlaced(await c.ensure(), m.sessionId, m.placement, m.prompt) }),
  };
}
