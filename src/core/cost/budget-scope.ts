import type { Budget } from '../session/budget';
import { describeBudget } from '../session/budget';
import type { ScopeState } from './completion-cap';
import { formatUsd, type Spend, totalTokens } from './spend';

// One budgeted scope of the budget guard (decision 0034) — a session's lineage or a workflow
// run — and its arithmetic: what it spent, what requests in flight hold in it, what is left in
// it, and whether it is used up.

export interface Scope {
  budget: Budget;
  /** Spent by every session under it (reported usage and estimates, as the summaries say). */
  spent: Spend;
  /** In-flight requests' upper bounds (prompt estimate + the cap each carries) under it. */
  reservedTokens: number;
  reservedUsd: number;
  /** A display name for messages. */
  name: string;
}

/** A request in flight: the scopes it is held in, and how much. */
export interface Reservation {
  /** The session whose request it is. */
  session: string;
  scopes: string[];
  tokens: number;
  usd: number;
  /** A remote program's turn (`fixed`): it spends until its turn ends, whatever it writes before. */
  wholeTurn: boolean;
}

/** What a delegating parent may still hand on: the least remaining over its budgeted scopes. */
export interface Remaining {
  tokens?: number;
  /** Absent with a cost budget: a model with no price spent here, so no dollars can be counted. */
  usd?: number;
  /** Some scope has a cost budget. */
  costLimited: boolean;
}

/** A scope as the completion cap sees it. */
export function stateOf(s: Scope): ScopeState {
  return { budget: s.budget, spentTokens: totalTokens(s.spent), spentUsd: s.spent.costUsd, reservedTokens: s.reservedTokens, reservedUsd: s.reservedUsd };
}

/** A request's bound held in the scope. */
export function hold(s: Scope, tokens: number, usd: number): void {
  s.reservedTokens += tokens;
  s.reservedUsd += usd;
}

/** A request's bound no longer held in the scope. */
export function unhold(s: Scope, tokens: number, usd: number): void {
  s.reservedTokens = Math.max(0, s.reservedTokens - tokens);
  s.reservedUsd = Math.max(0, s.reservedUsd - usd);
}

/** The scope's spent moved by the delta of one member's own spend (`before` → `now`). */
export function moveSpent(s: Scope, before: Spend, now: Spend): void {
  s.spent = {
    tokens: {
      prompt: s.spent.tokens.prompt + now.tokens.prompt - before.tokens.prompt,
      completion: s.spent.tokens.completion + now.tokens.completion - before.tokens.completion,
      cacheHit: s.spent.tokens.cacheHit + now.tokens.cacheHit - before.tokens.cacheHit,
    },
    ...(s.spent.costUsd !== undefined && now.costUsd !== undefined && before.costUsd !== undefined
      ? { costUsd: s.spent.costUsd + now.costUsd - before.costUsd }
      : {}),
  };
}

/** The least left over the scopes (each its budget minus spent and held). */
export function leftIn(scopes: readonly Scope[]): Remaining {
  const out: Remaining = { costLimited: false };
  let usdKnown = true;
  for (const s of scopes) {
    if (s.budget.maxTokens !== undefined) {
      const left = Math.max(0, s.budget.maxTokens - totalTokens(s.spent) - s.reservedTokens);
      out.tokens = out.tokens === undefined ? left : Math.min(out.tokens, left);
    }
    if (s.budget.maxCostUsd !== undefined) {
      out.costLimited = true;
      if (s.spent.costUsd === undefined) usdKnown = false;
      else {
        const left = Math.max(0, s.budget.maxCostUsd - s.spent.costUsd - s.reservedUsd);
        out.usd = out.usd === undefined ? left : Math.min(out.usd, left);
      }
    }
  }
  if (!usdKnown) delete out.usd;
  return out;
}

/** Why no more can be spent in the scope (its budget is used up), or undefined. */
export function usedUp(s: Scope): string | undefined {
  const b = s.budget;
  const used = totalTokens(s.spent);
  const why =
    b.maxTokens !== undefined && used >= b.maxTokens
      ? `${used} tokens are spent`
      : b.maxCostUsd !== undefined && s.spent.costUsd === undefined
        ? 'a model with no price spent under it, so its cost is unknown'
        : b.maxCostUsd !== undefined && s.spent.costUsd! >= b.maxCostUsd
          ? `${formatUsd(s.spent.costUsd!)} is spent`
          : undefined;
  if (!why) return undefined;
  return `The budget of ${s.name} (${describeBudget(b)}) is used up: ${why}. A human can raise the budget (Set Budget on its node, or 'arbor send --budget'); then a message goes on from here.`;
}
