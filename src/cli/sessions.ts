import type { PriceBook } from '../core/cost/prices';
import { subtreeTotals } from '../core/cost/rollup';
import { type Spend, spendOf, totalTokens } from '../core/cost/spend';
import { viewOf } from '../core/live/state';
import type { SessionHeader } from '../core/session/events';
import type { SessionStatus } from '../core/session/status';
import type { SessionSummary } from '../core/session/summary';
import type { Store } from '../core/store/store';

/** One line of `arbor sessions --json`: the header, and the summary's figures when the log reads. */
export type SessionListing = SessionHeader & { events: number | null; status: SessionStatus | 'unreadable' } & Record<string, unknown>;

/**
 * `arbor sessions`: every stored session with its status from the one status question
 * (decision 0054) — with nothing live, since no process runs a session here: a turn left open
 * reads `interrupted` (a crash), never settled — and the same fold and prices as the tree and
 * `list_agents`: own cost, subtree total, budget (decision 0033). No log is read when the store
 * keeps its summary.
 */
export async function sessionListing(store: Store, prices: PriceBook): Promise<SessionListing[]> {
  const sums = new Map<string, SessionSummary>();
  for (const h of store.list()) {
    const s = await store.summary(h.id).catch(() => undefined);
    if (s) sums.set(h.id, s);
  }
  const own = new Map([...sums].map(([id, s]) => [id, spendOf(s, prices)] as [string, Spend]));
  const totals = subtreeTotals(
    store.list().flatMap((h) => (own.has(h.id) ? [{ id: h.id, parent: h.parentSession, delegated: sums.get(h.id)!.delegated, spend: own.get(h.id)! }] : [])),
  );
  return store.list().map((h) => {
    const s = sums.get(h.id);
    return {
      ...h,
      events: s ? s.length : null,
      ...(s
        ? {
            status: viewOf(h.id, s).status,
            ...(s.lastStopReason ? { lastStopReason: s.lastStopReason } : {}),
            tokens: s.tokens,
            ...costFields(own.get(h.id)!, totals.get(h.id)!, s),
            reports: s.reports,
          }
        : { status: 'unreadable' as const }),
    };
  });
}

const round6 = (n: number): number => Math.round(n * 1e6) / 1e6;

/** `costUsd`/`savedUsd` (absent for a model with no price), the subtree total and the budget with what it spent. */
function costFields(own: Spend, total: Spend, s: SessionSummary) {
  return {
    ...(own.costUsd !== undefined ? { costUsd: round6(own.costUsd), savedUsd: round6(own.savedUsd ?? 0) } : {}),
    subtree: { tokens: totalTokens(total), ...(total.costUsd !== undefined ? { costUsd: round6(total.costUsd) } : {}) },
    ...(s.budget
      ? { budget: { ...s.budget, spentTokens: totalTokens(total), ...(total.costUsd !== undefined ? { spentUsd: round6(total.costUsd) } : {}) } }
      : {}),
  };
}
