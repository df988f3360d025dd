import type { SessionSummary } from '../session/summary';
import type { PriceBook } from './prices';
import { addSpend, type Spend, spendOf, zeroSpend } from './spend';

/**
 * What these sessions spent together (each counted once) at `prices`, from their summaries;
 * each one's own part is recorded in `own`, against which the guard takes later deltas.
 */
export function spendOfSessions(
  ids: Iterable<string>,
  summary: (id: string) => Readonly<SessionSummary> | undefined,
  prices: PriceBook,
  own: Map<string, Spend>,
): Spend {
  let spent = zeroSpend();
  for (const id of ids) {
    const sum = summary(id);
    const mine = sum ? spendOf(sum as SessionSummary, prices) : zeroSpend();
    own.set(id, mine);
    spent = addSpend(spent, mine);
  }
  return spent;
}
