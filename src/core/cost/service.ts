import { type Budget, BudgetInputError, checkBudget } from '../session/budget';
import type { Store } from '../store/store';
import { BudgetGuard } from './guard';
import { checkPriceOverrides, type ModelPrice, PriceBook } from './prices';

/**
 * Prices and budgets of one harness (decisions 0033, 0034): the price book readers count
 * with, and the guard that checks every model request against each budgeted ancestor.
 */
export class CostService {
  /** Prices per model (defaults + the deployment's overrides); live: `setPrices`. */
  prices: PriceBook;
  /** Subtree budgets, checked before every model request. */
  readonly budgets: BudgetGuard;

  constructor(
    readonly store: Store,
    overrides: Record<string, ModelPrice | null> | undefined,
  ) {
    this.prices = new PriceBook(overrides ? checkPriceOverrides(overrides) : {});
    this.budgets = new BudgetGuard(
      store,
      () => this.prices,
      (id) => store.summaryRef(id)?.label ?? store.header(id)?.title ?? id,
    );
  }

  /** New prices (a settings change): every reader and every budget counts at them from now. */
  setPrices(overrides: Record<string, ModelPrice | null>): void {
    this.prices = new PriceBook(checkPriceOverrides(overrides));
    this.budgets.repriced();
  }

  /** A budget as given by a human or a tool, checked (throws `BudgetInputError` saying what is wrong). */
  check(budget: Budget): Budget {
    return checkBudget(budget);
  }

  /**
   * A delegating parent may hand a child (or a workflow run) at most what it has left: a
   * budget over the least remaining of its budgeted ancestors is refused with what is left.
   */
  checkChildBudget(parentId: string, budget: Budget): void {
    const left = this.budgets.remaining(parentId);
    if (!left) return;
    if (budget.maxTokens !== undefined && left.tokens !== undefined && budget.maxTokens > left.tokens)
      throw new BudgetInputError(
        `budget.maxTokens ${budget.maxTokens} is more than the ${left.tokens} tokens your budget has left; give at most ${left.tokens}.`,
      );
    if (budget.maxCostUsd !== undefined && left.costLimited) {
      if (left.usd === undefined)
        throw new BudgetInputError('budget.maxCostUsd cannot be checked: a model with no price spent under your budget; give a token budget instead.');
      if (budget.maxCostUsd > left.usd)
        throw new BudgetInputError(`budget.maxCostUsd ${budget.maxCostUsd} is more than the $${left.usd.toFixed(4)} your budget has left; give at most that.`);
    }
  }
}
