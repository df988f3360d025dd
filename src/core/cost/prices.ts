/**
 * What a model costs (issue 15, decision 0033): US dollars per million tokens for prompt
 * tokens the provider's prefix cache missed (`input`), prompt tokens it hit (`cacheHit`), and
 * completion tokens (`output`). A model with no price shows tokens only: no reader ever
 * invents a cost for it.
 */
export interface ModelPrice {
  input: number;
  cacheHit: number;
  output: number;
}

export type PriceTable = Readonly<Record<string, ModelPrice>>;

/**
 * Defaults, as the providers published them (2025); a deployment overrides or removes any
 * row (`arbor.prices`, `arbor run --prices FILE`). DeepSeek bills cache hits at a tenth of a miss.
 */
export const DEFAULT_PRICES: PriceTable = {
  'deepseek-chat': { input: 0.28, cacheHit: 0.028, output: 0.42 },
  'deepseek-reasoner': { input: 0.28, cacheHit: 0.028, output: 0.42 },
  'gpt-5': { input: 1.25, cacheHit: 0.125, output: 10 },
  'gpt-5-mini': { input: 0.25, cacheHit: 0.025, output: 2 },
  'gpt-5-nano': { input: 0.05, cacheHit: 0.005, output: 0.4 },
  'gpt-4.1': { input: 2, cacheHit: 0.5, output: 8 },
  'gpt-4.1-mini': { input: 0.4, cacheHit: 0.1, output: 1.6 },
  'gpt-4.1-nano': { input: 0.1, cacheHit: 0.025, output: 0.4 },
  'gpt-4o': { input: 2.5, cacheHit: 1.25, output: 10 },
  'gpt-4o-mini': { input: 0.15, cacheHit: 0.075, output: 0.6 },
  o3: { input: 2, cacheHit: 0.5, output: 8 },
  'o3-mini': { input: 1.1, cacheHit: 0.55, output: 4.4 },
  'o4-mini': { input: 1.1, cacheHit: 0.275, output: 4.4 },
};

/** The most a price may say (USD per million tokens): a typo like 1e308 is refused, not multiplied. */
export const MAX_PRICE_PER_MILLION = 10_000;

export class PriceError extends Error {
  override readonly name = 'PriceError';
  readonly code = 'BAD_PRICE';
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const price = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= MAX_PRICE_PER_MILLION;

/**
 * Overrides as a user writes them: `{"model": {input, cacheHit, output}}`, or `null` to remove
 * a default (that model then shows tokens only). `cacheHit` may be left out: then hits cost
 * what misses do. Anything else is refused with the row and field that are wrong.
 */
export function checkPriceOverrides(v: unknown, where = 'prices'): Record<string, ModelPrice | null> {
  if (!isRecord(v)) throw new PriceError(`${where} must be an object of model name → {input, cacheHit, output} (USD per million tokens).`);
  const out: Record<string, ModelPrice | null> = Object.create(null);
  for (const [model, row] of Object.entries(v)) {
    if (model.trim() === '') throw new PriceError(`${where}: a model name is empty.`);
    if (row === null) {
      out[model] = null;
      continue;
    }
    if (!isRecord(row)) throw new PriceError(`${where}.${model} must be {input, cacheHit, output} in USD per million tokens, or null to remove it.`);
    const unknown = Object.keys(row).filter((k) => !['input', 'cacheHit', 'output'].includes(k));
    if (unknown.length) throw new PriceError(`${where}.${model} has unknown field ${unknown.join(', ')}; known: input, cacheHit, output.`);
    for (const k of ['input', 'output'] as const) {
      if (!price(row[k]))
        throw new PriceError(
          `${where}.${model}.${k} must be a number from 0 to ${MAX_PRICE_PER_MILLION} (USD per million tokens); got ${JSON.stringify(row[k])}.`,
        );
    }
    if (row.cacheHit !== undefined && !price(row.cacheHit))
      throw new PriceError(
        `${where}.${model}.cacheHit must be a number from 0 to ${MAX_PRICE_PER_MILLION} (USD per million tokens); got ${JSON.stringify(row.cacheHit)}.`,
      );
    out[model] = { input: row.input as number, output: row.output as number, cacheHit: (row.cacheHit as number | undefined) ?? (row.input as number) };
  }
  return out;
}

/** Prices by model name: the defaults with a deployment's overrides on top. */
export class PriceBook {
  private readonly rows = new Map<string, ModelPrice>();

  constructor(overrides: Readonly<Record<string, ModelPrice | null>> = {}, defaults: PriceTable = DEFAULT_PRICES) {
    for (const [k, v] of Object.entries(defaults)) this.rows.set(k.toLowerCase(), v);
    for (const [k, v] of Object.entries(overrides)) {
      if (v === null) this.rows.delete(k.toLowerCase());
      else this.rows.set(k.toLowerCase(), v);
    }
  }

  /**
   * The price of a model: its row, else the longest row that is a dated or suffixed form's
   * stem (`gpt-4o-2024-08-06` → `gpt-4o`), else none. Case-insensitive.
   */
  of(model: string): ModelPrice | undefined {
    const m = model.toLowerCase();
    const exact = this.rows.get(m);
    if (exact) return exact;
    let best: string | undefined;
    for (const k of this.rows.keys()) if (m.startsWith(`${k}-`) && (!best || k.length > best.length)) best = k;
    return best ? this.rows.get(best) : undefined;
  }
}

/** Tokens of some requests to one model. */
export interface TokenCounts {
  prompt: number;
  completion: number;
  cacheHit: number;
}

/** USD of these tokens at this price: misses at `input`, hits at `cacheHit`, completion at `output`. */
export function costOf(t: TokenCounts, p: ModelPrice): number {
  const hit = Math.min(t.cacheHit, t.prompt);
  return ((t.prompt - hit) * p.input + hit * p.cacheHit + t.completion * p.output) / 1_000_000;
}

/** USD the cache hits saved against paying them as misses. */
export function cacheSavingOf(t: TokenCounts, p: ModelPrice): number {
  return (Math.min(t.cacheHit, t.prompt) * Math.max(0, p.input - p.cacheHit)) / 1_000_000;
}
