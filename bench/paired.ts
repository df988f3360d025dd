// Paired rounds for a figure made of a small difference of large, noisy times (decision 0116):
// each round runs every measure once, in an order that rotates through all of them, so no measure
// always follows another's teardown (or a blocked event loop's backlog); the figure is read from
// per-round values with the Hodges–Lehmann estimator, and a bootstrap over the rounds says how far
// the machine's noise could have moved it.

import { rng } from './events';
import { median, percentile } from './support';

/** Every order of `k` measures (k! of them, lexicographic): round `i` runs `orders[i % orders.length]`. */
export function orders(k: number): number[][] {
  if (k <= 1) return [[0]];
  const out: number[][] = [];
  for (const rest of orders(k - 1)) for (let at = 0; at < k; at++) out.push([...rest.slice(0, at), k - 1, ...rest.slice(at)]);
  return out.sort((a, b) => a.join().localeCompare(b.join()));
}

/**
 * The Hodges–Lehmann estimate of a location: the median of the means of every pair (each value
 * with itself included). As robust as the median to a few wild values (a GC, a descheduled git),
 * and nearly as efficient as the mean where the noise is not wild: fewer rounds for the same spread.
 */
export function hodgesLehmann(xs: readonly number[]): number {
  const walsh: number[] = [];
  for (let i = 0; i < xs.length; i++) for (let j = i; j < xs.length; j++) walsh.push((xs[i] + xs[j]) / 2);
  return median(walsh);
}

/**
 * The Hodges–Lehmann estimate of a ratio's location, taken on the log scale: exp of the estimate
 * over the logs. Load noise multiplies a time, so a per-round ratio is skewed (a round whose
 * denominator was descheduled reads 0.3, one whose numerator was reads 3) and pairwise means of
 * the ratios themselves lean above their centre as the noise grows; their logs are symmetric, and
 * the estimate is the same whichever side is the numerator (swapped sides give its reciprocal).
 */
export function hodgesLehmannRatio(ratios: readonly number[]): number {
  return Math.exp(hodgesLehmann(ratios.map(Math.log)));
}

/**
 * A percentile bootstrap interval (5th–95th) of `statistic` over `n` rounds: rounds drawn with
 * replacement, `draws` times, from a fixed seed (the same rounds give the same interval).
 */
export function bootstrapInterval(n: number, statistic: (rounds: readonly number[]) => number, draws = 1000): [number, number] {
  const random = rng(0x5eed);
  const values: number[] = [];
  for (let d = 0; d < draws; d++) {
    const rounds = Array.from({ length: n }, () => Math.floor(random() * n));
    values.push(statistic(rounds));
  }
  return [percentile(values, 5), percentile(values, 95)];
}
