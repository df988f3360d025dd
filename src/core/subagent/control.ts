import type { Agent } from '../agent/agent';
import { subtreeTotals } from '../cost/rollup';
import { type Spend, spendOf, totalTokens } from '../cost/spend';
import { describeError } from '../errors';
import { viewOf } from '../live/state';
import type { SessionSummary } from '../session/summary';
import type { SubagentControl } from './surface';
import { type AgentListing, type InterruptOutcome, SubagentError } from './types';

/**
 * interrupt_agent: the direct parent or any live ancestor may interrupt; self, siblings,
 * strangers and stale handles are refused; unknown, one-shot and finished children are
 * accepted no-ops — except a running remote one-shot child (decision 0044): a program that
 * floods or never ends must be stoppable by the agent that started it, so its one turn ends
 * `interrupted` and its program is stopped the way any interrupt stops it (the run's signal).
 * Interrupt is not dispose: the turn ends, the inbox and the child stay.
 */
export async function interruptAgent(rt: SubagentControl, caller: Agent, targetId: string): Promise<InterruptOutcome> {
  if (rt.resident(caller.id) !== caller || caller.isDisposed) return { accepted: false, reason: 'stale-handle' };
  if (targetId === caller.id) return { accepted: false, reason: 'self' };
  if (!rt.header(targetId)) return { accepted: true, effect: 'noop', reason: 'unknown' };
  if (!rt.lineage(targetId).slice(1).includes(caller.id)) return { accepted: false, reason: 'not-ancestor' };
  if (rt.isOneShot(targetId)) {
    const once = rt.resident(targetId);
    if (!rt.isRemote(targetId) || !once || once.activity !== 'running') return { accepted: true, effect: 'noop', reason: 'one-shot' };
    await once.cancel('interrupted', { keepInbox: false, why: `Its parent ${caller.id} stopped it (interrupt_agent).` });
    return { accepted: true, effect: 'interrupted' };
  }
  const target = rt.resident(targetId);
  if (!target || !rt.isActive(targetId) || target.activity !== 'running') {
    if ((await rt.modeOf(targetId).catch(() => undefined)) === 'one-shot') return { accepted: true, effect: 'noop', reason: 'one-shot' };
    return { accepted: true, effect: 'noop', reason: 'not-running' };
  }
  await target.cancel('interrupted', { keepInbox: true });
  return { accepted: true, effect: 'interrupted' };
}

/** report: child → its direct parent (derived from the durable header), quiet or wakeup. */
export async function reportToParent(rt: SubagentControl, childId: string, text: string, mode: 'quiet' | 'wakeup'): Promise<string> {
  const header = rt.header(childId);
  if (!header?.parentSession) throw new SubagentError('UNKNOWN_PARENT', `${childId} has no parent to report to.`);
  const label = header.title ?? childId;
  await rt.deliver(header.parentSession, `[report from subagent ${label}]\n${text}`, { kind: 'subagent-report', fromSession: childId, mode }, mode === 'quiet');
  return header.parentSession;
}

/** list_agents: the caller's descendants; an unreadable child is listed with a diagnostic. */
export async function listAgents(rt: SubagentControl, callerId: string): Promise<AgentListing[]> {
  const out: AgentListing[] = [];
  const spends = new Map<string, Spend>();
  for (const h of rt.descendants(callerId)) {
    const base = { id: h.id, parent: h.parentSession!, depth: Math.max(h.delegationDepth ?? 0, rt.depthOf(h.id)) };
    let summary: SessionSummary;
    try {
      summary = await rt.readSummary(h.id);
    } catch (err) {
      out.push({ ...base, diagnostic: `log unreadable: ${describeError(err)}` });
      continue;
    }
    out.push({ ...base, ...describeChild(rt, h.id, summary) });
    const prices = rt.priceBook();
    if (summary.delegated) spends.set(h.id, prices ? spendOf(summary, prices) : { tokens: { ...summary.tokens } });
  }
  return withCosts(rt, out, spends);
}

/**
 * Each listing's own cost, its subtree's total (itself and its delegated descendants, as the
 * tree shows it collapsed) and its budget: the same fold and prices as the tree (decision 0033).
 */
function withCosts(rt: SubagentControl, out: AgentListing[], own: Map<string, Spend>): AgentListing[] {
  const totals = subtreeTotals(
    out.flatMap((l) => {
      const spend = own.get(l.id);
      return spend ? [{ id: l.id, parent: l.parent, delegated: true, spend }] : [];
    }),
  );
  for (const l of out) {
    const mine = own.get(l.id);
    const total = totals.get(l.id);
    if (mine?.costUsd !== undefined) l.costUsd = round6(mine.costUsd);
    if (total) l.subtree = { tokens: totalTokens(total), ...(total.costUsd !== undefined ? { costUsd: round6(total.costUsd) } : {}) };
    const state = rt.budgetState(l.id);
    if (state) {
      const { budget, spent } = state;
      l.budget = { ...budget, spentTokens: totalTokens(spent), ...(spent.costUsd !== undefined ? { spentUsd: round6(spent.costUsd) } : {}) };
    }
  }
  return out;
}

const round6 = (n: number): number => Math.round(n * 1e6) / 1e6;

/** One child as list_agents shows it: the store's summary and the one status question (decision 0054). */
function describeChild(rt: SubagentControl, id: string, s: SessionSummary): Omit<AgentListing, 'id' | 'parent' | 'depth'> {
  const view = viewOf(id, s, rt.liveOf(id));
  const status = view.status;
  return {
    ...(s.provider ? { provider: s.provider, ...(s.mode ? { mode: s.mode } : {}), ...(s.label ? { label: s.label } : {}) } : {}),
    ...(s.remote ? { remote: { ...s.remote } } : {}),
    status,
    // In memory and not released: its parent may still hear from it (a one-shot child until its result is taken).
    resident: view.live.resident,
    ...(s.lastStopReason ? { lastStopReason: s.lastStopReason } : {}),
    inbox: s.inbox,
    tokens: { ...s.tokens },
    ...(s.estimated ? { tokensEstimated: true } : {}),
    reports: s.reports,
  };
}
