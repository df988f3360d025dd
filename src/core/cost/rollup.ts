import { addSpend, type Spend } from './spend';

/** One session for a roll-up: its own spend, its parent, and whether it counts in its parent's subtree. */
export interface RollupEntry {
  id: string;
  parent?: string;
  /** A delegated child counts in its parent's subtree; a root or a user fork starts its own. */
  delegated: boolean;
  spend: Spend;
}

/**
 * Each session's subtree total (itself and its delegated descendants, what its budget covers),
 * in one pass over any order: used by `list_agents` and `arbor sessions` (the tree keeps its own
 * cached roll-up over the same rule).
 */
export function subtreeTotals(entries: readonly RollupEntry[]): Map<string, Spend> {
  const byId = new Map(entries.map((e) => [e.id, e]));
  const totals = new Map<string, Spend>();
  for (const e of entries) totals.set(e.id, e.spend);
  // Add each entry's own spend to every counted ancestor (depth is small: a few levels).
  for (const e of entries) {
    let cur = e;
    for (let n = 0; cur.delegated && cur.parent && n < 1000; n++) {
      const up = byId.get(cur.parent);
      if (!up) break;
      totals.set(up.id, addSpend(totals.get(up.id)!, e.spend));
      cur = up;
    }
  }
  return totals;
}
