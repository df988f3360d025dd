import { PriceBook } from '../../core/cost/prices';
import { addSpend, type Spend, spendOf } from '../../core/cost/spend';
import type { SessionHeader } from '../../core/session/events';
import type { SessionSummary } from '../../core/session/summary';
import type { BudgetView, SpendView } from '../../protocol';

/**
 * Cost in the tree (issue 15, decision 0033): each node's own spend — the one summary fold,
 * priced with the deployment's table — and its subtree's total over its delegated descendants
 * (what its budget covers; a user fork below starts its own), kept in a cache that a change
 * clears up the parent chain, so a 1,000-node tree is not re-summed for every event.
 */
export class CostRollup {
  private readonly kids = new Map<string, Set<string>>();
  private readonly totals = new Map<string, Spend>();
  private prices = new PriceBook();

  constructor(
    private readonly header: (id: string) => Readonly<SessionHeader> | undefined,
    private readonly fold: (id: string) => SessionSummary | undefined,
  ) {}

  /** New prices: every figure is recomputed. */
  setPrices(prices: PriceBook): void {
    this.prices = prices;
    this.totals.clear();
  }

  added(h: Readonly<SessionHeader>): void {
    if (h.parentSession) {
      let set = this.kids.get(h.parentSession);
      if (!set) this.kids.set(h.parentSession, (set = new Set()));
      set.add(h.id);
    }
    this.changed(h.id);
  }

  removed(id: string): void {
    this.changed(id);
    const p = this.header(id)?.parentSession;
    if (p) this.kids.get(p)?.delete(id);
    this.kids.delete(id);
  }

  /** A session's spend changed: its total and every ancestor's are stale. Returns the ancestors (nearest first). */
  changed(id: string): string[] {
    const up: string[] = [];
    this.totals.delete(id);
    for (let p = this.header(id)?.parentSession, n = 0; p && n < 1000; p = this.header(p)?.parentSession, n++) {
      this.totals.delete(p);
      up.push(p);
    }
    return up;
  }

  own(id: string): Spend | undefined {
    const f = this.fold(id);
    return f ? spendOf(f, this.prices) : undefined;
  }

  /** The session and its delegated descendants together. */
  subtree(id: string): Spend | undefined {
    const known = this.totals.get(id);
    if (known) return known;
    let total = this.own(id);
    if (!total) return undefined;
    for (const k of this.kids.get(id) ?? []) {
      if (!this.fold(k)?.delegated) continue;
      const t = this.subtree(k);
      if (t) total = addSpend(total, t);
    }
    this.totals.set(id, total);
    return total;
  }

  /** What the node shows: its own cost and saving, its subtree's total (with children), its budget bar. */
  view(id: string): { costUsd?: number; savedUsd?: number; subtree?: SpendView; budget?: BudgetView } {
    const own = this.own(id);
    if (!own) return {};
    const hasKids = [...(this.kids.get(id) ?? [])].some((k) => this.fold(k)?.delegated);
    const total = hasKids || this.fold(id)?.budget ? this.subtree(id) : own;
    const budget = this.fold(id)?.budget;
    return {
      ...(own.costUsd !== undefined ? { costUsd: own.costUsd, savedUsd: own.savedUsd ?? 0 } : {}),
      ...(hasKids && total ? { subtree: spendView(total) } : {}),
      ...(budget && total
        ? {
            budget: {
              ...budget,
              spentTokens: total.tokens.prompt + total.tokens.completion,
              ...(total.costUsd !== undefined ? { spentUsd: total.costUsd } : {}),
            },
          }
        : {}),
    };
  }
}

export function spendView(s: Spend): SpendView {
  return {
    tokens: s.tokens.prompt + s.tokens.completion,
    cacheHit: s.tokens.cacheHit,
    ...(s.costUsd !== undefined ? { costUsd: s.costUsd, savedUsd: s.savedUsd ?? 0 } : {}),
  };
}
