import type * as acp from '@agentclientprotocol/sdk/unstable';
import type { Harness } from '../core/harness';
import { viewOf } from '../core/live/state';
import type { StopReason } from '../core/session/events';
import type { SessionStatus } from '../core/session/status';

// The delegation tree for ACP's (unstable) `subagent_update`: who a session's ancestors are,
// and a child's work state from the one status fold (src/core/session/status.ts).

/** The session's parent in the delegation tree, or undefined for a root (a user's fork is a root). */
export async function treeParent(h: Harness, id: string): Promise<string | undefined> {
  const header = h.resident(id)?.session.header ?? h.store.header(id);
  if (!header?.parentSession) return undefined;
  return (await h.isSubagent(id)) ? header.parentSession : undefined;
}

/** The child and its ancestors, nearest first, up to and including its root. */
export async function lineageOf(h: Harness, id: string): Promise<string[]> {
  const out = [id];
  for (let cur = await treeParent(h, id); cur !== undefined; cur = await treeParent(h, cur)) out.push(cur);
  return out;
}

/**
 * The Arbor status of a session now: the harness's one status question (decision 0054).
 * `ended`: read at its turn/end, whose agent loop has not yet returned: the status as of just
 * after that event (a `released` or `idle` change follows and says the same).
 */
export async function statusOf(h: Harness, id: string, ended?: StopReason): Promise<SessionStatus> {
  const view = await h.viewOf(id);
  if (!ended) return view.status;
  return viewOf(id, { ...view.summary, openTurn: false, lastStopReason: ended }, { ...view.live, running: false, awaitingApproval: false }).status;
}

/** ACP's state snapshot for an Arbor status. */
const STATES: Record<SessionStatus, acp.StateUpdate> = {
  running: { state: 'running' },
  queued: { state: 'running', _meta: { arbor: { status: 'queued' } } },
  waiting: { state: 'running', _meta: { arbor: { status: 'waiting' } } },
  approval: { state: 'requires_action' },
  idle: { state: 'idle', stopReason: 'end_turn' },
  settled: { state: 'idle', stopReason: 'end_turn' },
  interrupted: { state: 'idle', stopReason: 'cancelled' },
  failed: { state: 'idle', stopReason: 'error' },
};

export function stateOf(status: SessionStatus): acp.StateUpdate {
  const s = STATES[status];
  return { ...s, _meta: { ...(s._meta ?? {}), arbor: { status } } };
}

/** The first `subagent_update` for a child: title = its label, where it works, what a client may do. */
export async function announcement(h: Harness, id: string): Promise<acp.SubagentUpdate> {
  const summary = await h.store.summary(id);
  const header = h.resident(id)?.session.header ?? h.store.header(id);
  const title = summary.label ?? header?.title ?? id;
  return {
    sessionId: id,
    title,
    ...(summary.provider ? { description: `${summary.provider}${summary.mode ? ` · ${summary.mode}` : ''}` } : {}),
    capabilities: { cancel: {} },
    ...(header?.cwd ? { cwd: header.cwd } : {}),
    state: stateOf(await statusOf(h, id)),
    _meta: { arbor: { label: summary.label ?? null, provider: summary.provider ?? null, parent: header?.parentSession ?? null } },
  };
}
