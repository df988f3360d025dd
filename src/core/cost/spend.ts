import type { SessionSummary } from '../session/summary';
import { cacheSavingOf, costOf, type PriceBook, type TokenCounts } from './prices';

/**
 * What a session (or a subtree) spent, as every reader shows it: tokens, and — only when
 * every model that served them has a price — US dollars and the cache saving (decision 0033).
 */
export interface Spend {
  tokens: TokenCounts;
  /** Absent: some tokens came from a model with no price (tokens only, never a made-up cost). */
  costUsd?: number;
  /** What cache hits saved against paying them as misses (absent with `costUsd`). */
  savedUsd?: number;
  /** Some tokens are estimates (requests without reported usage). */
  estimated?: boolean;
}

export const zeroSpend = (): Spend => ({ tokens: { prompt: 0, completion: 0, cacheHit: 0 }, costUsd: 0, savedUsd: 0 });

/** A summary's own spend at today's prices. */
export function spendOf(s: SessionSummary, prices: PriceBook): Spend {
  const out: Spend = { tokens: { ...s.tokens }, ...(s.estimated ? { estimated: true } : {}) };
  let cost = s.reportedCostUsd ?? 0;
  let saved = 0;
  let priced = s.models !== undefined;
  for (const row of s.models ?? []) {
    if (row.prompt + row.completion === 0) continue;
    const p = prices.of(row.model);
    if (!p) {
      priced = false;
      break;
    }
    cost += costOf(row, p);
    saved += cacheSavingOf(row, p);
  }
  // A summary from before the cost fold that already spent tokens cannot be priced.
  if (s.models === undefined && s.tokens.prompt + s.tokens.completion === 0) priced = true;
  if (priced) {
    out.costUsd = cost;
    out.savedUsd = saved;
  }
  return out;
}

/** `a + b` (a cost stays known only when both are known). */
export function addSpend(a: Spend, b: Spend): Spend {
  const out: Spend = {
    tokens: {
      prompt: a.tokens.prompt + b.tokens.prompt,
      completion: a.tokens.completion + b.tokens.completion,
      cacheHit: a.tokens.cacheHit + b.tokens.cacheHit,
    },
    ...(a.estimated || b.estimated ? { estimated: true } : {}),
  };
  if (a.costUsd !== undefined && b.costUsd !== undefined) {
    out.costUsd = a.costUsd + b.costUsd;
    out.savedUsd = (a.savedUsd ?? 0) + (b.savedUsd ?? 0);
  }
  return out;
}

export const totalTokens = (s: Spend): number => s.tokens.prompt + s.tokens.completion;

/** "$0.41" (4 decimals under a cent, so a cheap child does not read $0.00). */
export function formatUsd(usd: number): string {
  if (usd === 0) return '$0.00';
  if (usd < 0.01) return `$${usd.toFixed(4)}`;
  return `$${usd.toFixed(2)}`;
}
