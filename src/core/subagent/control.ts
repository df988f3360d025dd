import { storedStatus } from '../session/status';
import type { Agent } from '../agent/agent';
import { descriptorOf } from '../session/folds';
import type { Session } from '../session/session';
import type { SubagentRuntime } from './runtime';
import { SubagentError, type AgentListing, type InterruptOutcome } from './types';

/**
 * interrupt_agent: the direct parent or any live ancestor may interrupt; self, siblings,
 * strangers and stale handles are refused; unknown, one-shot and finished children are
 * accepted no-ops. Interrupt is not dispose: the turn ends, the inbox and the child stay.
 */
export async function interruptAgent(rt: SubagentRuntime, caller: Agent, targetId: string): Promise<InterruptOutcome> {
  if (rt.deps.resident(caller.id) !== caller || caller.isDisposed) return { accepted: false, reason: 'stale-handle' };
  if (targetId === caller.id) return { accepted: false, reason: 'self' };
  if (!rt.deps.store.header(targetId)) return { accepted: true, effect: 'noop', reason: 'unknown' };
  if (!rt.lineage(targetId).slice(1).includes(caller.id)) return { accepted: false, reason: 'not-ancestor' };
  if (rt.residency.isOneShot(targetId)) return { accepted: true, effect: 'noop', reason: 'one-shot' };
  const target = rt.deps.resident(targetId);
  if (!target || !rt.residency.isActive(targetId) || target.status !== 'running') {
    if ((await rt.modeOf(targetId).catch(() => undefined)) === 'one-shot') return { accepted: true, effect: 'noop', reason: 'one-shot' };
    return { accepted: true, effect: 'noop', reason: 'not-running' };
  }
  await target.cancel('interrupted', { keepInbox: true });
  return { accepted: true, effect: 'interrupted' };
}

/** report: child → its direct parent (derived from the durable header), quiet or wakeup. */
export async function reportToParent(rt: SubagentRuntime, childId: string, text: string, mode: 'quiet' | 'wakeup'): Promise<string> {
  const header = rt.deps.store.header(childId);
  if (!header?.parentSession) throw new SubagentError('UNKNOWN_PARENT', `${childId} has no parent to report to.`);
  const label = header.title ?? childId;
  await rt.deliver(header.parentSession, `[report from subagent ${label}]\n${text}`, { kind: 'subagent-report', fromSession: childId, mode }, mode === 'quiet');
  return header.parentSession;
}

/** list_agents: the caller's descendants; an unreadable child is listed with a diagnostic. */
export async function listAgents(rt: SubagentRuntime, callerId: string): Promise<AgentListing[]> {
  const { store } = rt.deps;
  const out: AgentListing[] = [];
  const queue = store.children(callerId);
  while (queue.length > 0) {
    const h = queue.shift()!;
    queue.push(...store.children(h.id));
    const base = { id: h.id, parent: h.parentSession!, depth: Math.max(h.delegationDepth ?? 0, rt.residency.depthOf(h.id)) };
    let session: Session;
    try {
      session = rt.deps.resident(h.id)?.session ?? (await store.inspect(h.id));
    } catch (err) {
      out.push({ ...base, diagnostic: `log unreadable: ${err instanceof Error ? err.message : String(err)}` });
      continue;
    }
    out.push({ ...base, ...summarize(rt, session) });
  }
  return out;
}

/** A child no process runs: its own log decides; an open or interrupted last turn never reads settled. */
function storedListingStatus(s: Session): AgentListing['status'] {
  const { status } = storedStatus(s.header, s.events);
  return status === 'interrupted' ? 'interrupted' : status === 'error' ? 'failed' : 'settled';
}

function summarize(rt: SubagentRuntime, s: Session): Omit<AgentListing, 'id' | 'parent' | 'depth'> {
  const d = descriptorOf(s.header, s.events);
  let lastStopReason: AgentListing['lastStopReason'];
  const tokens = { prompt: 0, completion: 0, cacheHit: 0 };
  let reports = 0;
  for (let i = s.firstLiveSeq; i < s.events.length; i++) {
    const e = s.events[i];
    if (e.type === 'turn/end') lastStopReason = e.stopReason;
    else if (e.type === 'assistant/message' && e.usage) {
      tokens.prompt += e.usage.promptTokens;
      tokens.completion += e.usage.completionTokens;
      tokens.cacheHit += e.usage.cacheHitTokens ?? 0;
    } else if (e.type === 'tool/result' && e.name === 'report' && !e.isError) reports++;
  }
  const agent = rt.deps.resident(s.id);
  const status: AgentListing['status'] =
    agent && agent.status === 'running'
      ? 'running'
      : agent && (rt.residency.isActive(s.id) || rt.residency.isOneShot(s.id)) && !agent.isDisposed
        ? 'waiting'
        : storedListingStatus(s);
  return {
    ...(d ? { provider: d.provider, mode: d.mode, ...(d.label ? { label: d.label } : {}) } : {}),
    status,
    ...(rt.fanout.isQueued(s.id) ? { queued: true } : {}),
    ...(lastStopReason ? { lastStopReason } : {}),
    inbox: s.unclaimedInbox.length,
    tokens,
    reports,
  };
}
