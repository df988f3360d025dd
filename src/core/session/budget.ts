/**
 * A budget on a session's delegation subtree (issue 15, decision 0034): the most tokens
 * (prompt + completion) and/or US dollars the session and every descendant may spend together.
 * At least one limit is set. Checked wherever a budget crosses a boundary: the log (append),
 * the model's tools, the CLI, the panel.
 */
export interface Budget {
  maxTokens?: number;
  maxCostUsd?: number;
}

/** Bounds a budget may take: past these a number is a typo (1e308), not a limit. */
export const BUDGET_LIMITS = { maxTokens: 1e12, maxCostUsd: 1e6 } as const;

export class BudgetInputError extends Error {
  override readonly name = 'BudgetInputError';
  readonly code = 'BAD_BUDGET';
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A budget from untrusted input, or a `BudgetInputError` saying what is wrong: negative, zero,
 * NaN, infinite, absurdly large, a string, an unknown key, or no limit at all.
 */
export function checkBudget(v: unknown, where = 'budget'): Budget {
  if (!isRecord(v))
    throw new BudgetInputError(`${where} must be an object {maxTokens?, maxCostUsd?} with at least one limit; got ${JSON.stringify(v) ?? String(v)}.`);
  const unknown = Object.keys(v).filter((k) => k !== 'maxTokens' && k !== 'maxCostUsd');
  if (unknown.length) throw new BudgetInputError(`${where} has unknown field ${unknown.join(', ')}; known: maxTokens, maxCostUsd.`);
  const out: Budget = {};
  if (v.maxTokens !== undefined) {
    const n = v.maxTokens;
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1 || n > BUDGET_LIMITS.maxTokens)
      throw new BudgetInputError(
        `${where}.maxTokens must be a whole number of tokens from 1 to ${BUDGET_LIMITS.maxTokens}; got ${JSON.stringify(n) ?? String(n)}.`,
      );
    out.maxTokens = n;
  }
  if (v.maxCostUsd !== undefined) {
    const n = v.maxCostUsd;
    if (typeof n !== 'number' || !Number.isFinite(n) || n <= 0 || n > BUDGET_LIMITS.maxCostUsd)
      throw new BudgetInputError(
        `${where}.maxCostUsd must be a number of US dollars above 0 and at most ${BUDGET_LIMITS.maxCostUsd}; got ${JSON.stringify(n) ?? String(n)}.`,
      );
    out.maxCostUsd = n;
  }
  if (out.maxTokens === undefined && out.maxCostUsd === undefined) throw new BudgetInputError(`${where} sets no limit: give maxTokens, maxCostUsd or both.`);
  return out;
}

/** True when `v` is a valid budget (the log's field rule). */
export function isBudget(v: unknown): boolean {
  try {
    checkBudget(v);
    return true;
  } catch {
    return false;
  }
}

/** "50k tokens · $2.00" */
export function describeBudget(b: Budget): string {
  return [...(b.maxTokens !== undefined ? [`${b.maxTokens} tokens`] : []), ...(b.maxCostUsd !== undefined ? [`$${b.maxCostUsd.toFixed(2)}`] : [])].join(' · ');
}

/**
 * A budget as a person types it (`arbor run --budget`, the panel's Set Budget box): tokens as a
 * number with an optional k/M suffix (`50000`, `50k`, `1.5M tokens`), dollars with a `$` or `usd`
 * (`$2`, `2.50 usd`), both separated by a comma or space; `none` (or empty) removes the budget.
 */
export function parseBudgetText(text: string): Budget | null {
  const t = text.trim().toLowerCase();
  if (t === '' || t === 'none' || t === 'off') return null;
  const out: Record<string, number> = {};
  for (const part of t.split(/\s*[,;]\s*|\s+(?=\$)|(?<=tokens?)\s+/)) {
    if (!part) continue;
    const usd = /^\$\s*([0-9]*\.?[0-9]+(?:e[+-]?\d+)?)$|^([0-9]*\.?[0-9]+(?:e[+-]?\d+)?)\s*(?:usd|dollars?)$/.exec(part);
    const tok = /^([0-9]*\.?[0-9]+(?:e[+-]?\d+)?)\s*([km]?)\s*(?:tokens?)?$/.exec(part);
    if (usd) {
      if (out.maxCostUsd !== undefined) throw new BudgetInputError(`"${text}" gives two dollar limits.`);
      out.maxCostUsd = Number(usd[1] ?? usd[2]);
    } else if (tok) {
      if (out.maxTokens !== undefined) throw new BudgetInputError(`"${text}" gives two token limits.`);
      const n = Number(tok[1]) * (tok[2] === 'k' ? 1e3 : tok[2] === 'm' ? 1e6 : 1);
      out.maxTokens = Math.round(n * 1e6) / 1e6;
    } else {
      throw new BudgetInputError(`"${part}" is not a budget: write tokens (50000, 50k, 1.5M) and/or dollars ($2, 2.50 usd), e.g. "50k, $2", or "none".`);
    }
  }
  return checkBudget(out);
}
