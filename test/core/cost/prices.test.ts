import assert from 'node:assert/strict';
import { cacheSavingOf, checkPriceOverrides, costOf, PriceBook, PriceError } from '../../../src/core/cost/prices';
import { subtreeTotals } from '../../../src/core/cost/rollup';
import { spendOf } from '../../../src/core/cost/spend';
import { BudgetInputError, checkBudget, parseBudgetText } from '../../../src/core/session/budget';
import type { EventDraft, SessionEvent, SessionHeader } from '../../../src/core/session/events';
import { summarize } from '../../../src/core/session/summary';

// Issue 15.1: prices per model, cost from the one summary fold; budgets as input.

const H: SessionHeader = { id: 's-1', createdAt: '2025-06-01T09:00:00.000Z', origin: 'user' };
const at = '2025-06-01T09:00:00.000Z';
const log = (drafts: EventDraft[]): SessionEvent[] => drafts.map((d, seq) => ({ ...d, seq, at }) as SessionEvent);
const msg = (model: string, promptTokens: number, completionTokens: number, cacheHitTokens: number, costUsd?: number): EventDraft => ({
  type: 'assistant/message',
  text: 'x',
  model,
  usage: { promptTokens, completionTokens, cacheHitTokens, ...(costUsd !== undefined ? { costUsd } : {}) },
});
const close = (a: number, b: number) => assert.ok(Math.abs(a - b) < 1e-12, `${a} ≠ ${b}`);

describe('cost: prices and the cost fold', () => {
  const deepseek = new PriceBook().of('deepseek-chat')!;

  it('prices cache misses, cache hits and completion tokens apart (hand-computed, DeepSeek defaults)', () => {
    // 1M prompt tokens of which 800k hit the cache, 100k completion:
    // 200k × $0.28 + 800k × $0.028 + 100k × $0.42 per million = 0.056 + 0.0224 + 0.042
    close(costOf({ prompt: 1_000_000, cacheHit: 800_000, completion: 100_000 }, deepseek), 0.1204);
    // The same prompt with no cache hit costs more by 800k × (0.28 − 0.028) / 1M.
    close(costOf({ prompt: 1_000_000, cacheHit: 0, completion: 100_000 }, deepseek), 0.322);
    close(cacheSavingOf({ prompt: 1_000_000, cacheHit: 800_000, completion: 100_000 }, deepseek), 0.2016);
    // A hit count above the prompt (a confused provider) never bills more hits than prompt tokens.
    close(costOf({ prompt: 100, cacheHit: 500, completion: 0 }, { input: 1, cacheHit: 0.5, output: 2 }), 0.00005);
  });

  it('finds a model by its dated or suffixed name, case-insensitively; overrides win and null removes a default', () => {
    const book = new PriceBook(
      checkPriceOverrides({ 'gpt-4o': { input: 9, cacheHit: 1, output: 9 }, 'deepseek-reasoner': null, 'my-local': { input: 0.1, output: 0.2 } }),
    );
    assert.deepEqual(book.of('GPT-4o-2024-08-06'), { input: 9, cacheHit: 1, output: 9 });
    assert.equal(book.of('gpt-4o-mini')?.input, 0.15, 'the longer default row wins over its stem');
    assert.equal(book.of('deepseek-reasoner'), undefined);
    assert.deepEqual(book.of('my-local'), { input: 0.1, cacheHit: 0.1, output: 0.2 }, 'no cacheHit: hits cost what misses do');
    assert.equal(book.of('llama3:8b'), undefined);
  });

  it('refuses a bad price table with the row and field that are wrong', () => {
    const bad: [unknown, RegExp][] = [
      [[], /must be an object/],
      [{ m: { input: -1, output: 1 } }, /m\.input must be a number from 0/],
      [{ m: { input: 1, output: 1e308 } }, /m\.output/],
      [{ m: { input: '1', output: 1 } }, /m\.input/],
      [{ m: { input: 1, output: 1, cacheHit: Number.NaN } }, /m\.cacheHit/],
      [{ m: { input: 1, output: 1, perRequest: 2 } }, /unknown field perRequest/],
      [{ m: 3 }, /m must be \{input, cacheHit, output\}/],
    ];
    for (const [v, re] of bad)
      assert.throws(
        () => checkPriceOverrides(v),
        (e: unknown) => e instanceof PriceError && re.test(e.message),
        JSON.stringify(v),
      );
  });

  it('a summary is priced per model that served it; a model with no price leaves the cost unknown, never invented', () => {
    const priced = summarize(
      H,
      log([{ type: 'turn/start', turnId: 't' }, msg('deepseek-chat', 1_000_000, 100_000, 800_000), msg('gpt-4o-mini', 1000, 1000, 0)]),
    );
    const s = spendOf(priced, new PriceBook());
    close(s.costUsd!, 0.1204 + (1000 * 0.15 + 1000 * 0.6) / 1e6);
    close(s.savedUsd!, 0.2016);
    assert.deepEqual(s.tokens, { prompt: 1_001_000, completion: 101_000, cacheHit: 800_000 });

    const mixed = summarize(H, log([{ type: 'turn/start', turnId: 't' }, msg('deepseek-chat', 10, 10, 0), msg('llama3:8b', 10, 10, 0)]));
    const m = spendOf(mixed, new PriceBook());
    assert.equal(m.costUsd, undefined);
    assert.equal(m.savedUsd, undefined);
    assert.equal(m.tokens.prompt, 20, 'tokens are still counted');
  });

  it('a provider that reports its own cost is taken at its word (remote programs)', () => {
    const s = summarize(H, log([{ type: 'turn/start', turnId: 't' }, msg('remote-thing', 5000, 500, 0, 0.25), msg('deepseek-chat', 1_000_000, 0, 0)]));
    close(spendOf(s, new PriceBook()).costUsd!, 0.25 + 0.28);
  });

  it('an estimated request (no usage) is priced at its model, and marked estimated', () => {
    const s = summarize(
      H,
      log([
        { type: 'turn/start', turnId: 't' },
        { type: 'request/header', model: 'deepseek-chat', provider: 'p', bytes: 4_000_000, headBytes: 1, headHash: 'h', prefixHash: 'p' },
        { type: 'turn/end', turnId: 't', stopReason: 'interrupted' },
      ]),
    );
    const sp = spendOf(s, new PriceBook());
    assert.equal(sp.estimated, true);
    close(sp.costUsd!, 0.28);
  });

  it('subtree totals add delegated children up every level, and a user fork starts its own', () => {
    const sp = (n: number) => ({ tokens: { prompt: n, completion: 0, cacheHit: 0 }, costUsd: n / 100, savedUsd: 0 });
    const t = subtreeTotals([
      { id: 'r', delegated: false, spend: sp(1) },
      { id: 'r.a', parent: 'r', delegated: true, spend: sp(10) },
      { id: 'r.a.b', parent: 'r.a', delegated: true, spend: sp(100) },
      { id: 'r.f', parent: 'r', delegated: false, spend: sp(1000) },
    ]);
    assert.equal(t.get('r')!.tokens.prompt, 111);
    assert.equal(t.get('r.a')!.tokens.prompt, 110);
    close(t.get('r')!.costUsd!, 1.11);
    assert.equal(t.get('r.f')!.tokens.prompt, 1000);
  });
});

describe('cost: budgets as input', () => {
  it('reads budgets as people type them', () => {
    assert.deepEqual(parseBudgetText('50000'), { maxTokens: 50_000 });
    assert.deepEqual(parseBudgetText('50k'), { maxTokens: 50_000 });
    assert.deepEqual(parseBudgetText('1.5M tokens'), { maxTokens: 1_500_000 });
    assert.deepEqual(parseBudgetText('$2'), { maxCostUsd: 2 });
    assert.deepEqual(parseBudgetText('2.50 usd'), { maxCostUsd: 2.5 });
    assert.deepEqual(parseBudgetText('200k, $1.50'), { maxTokens: 200_000, maxCostUsd: 1.5 });
    assert.deepEqual(parseBudgetText('200k $1.50'), { maxTokens: 200_000, maxCostUsd: 1.5 });
    assert.equal(parseBudgetText('none'), null);
  });

  it('refuses negative, NaN, 1e308, strings, fractions of a token and empty budgets with a clear error', () => {
    const bad: [unknown, RegExp][] = [
      [{ maxTokens: -5 }, /maxTokens must be a whole number of tokens from 1/],
      [{ maxCostUsd: Number.NaN }, /maxCostUsd must be a number of US dollars above 0/],
      [{ maxCostUsd: 1e308 }, /at most 1000000/],
      [{ maxTokens: 1e308 }, /maxTokens/],
      [{ maxTokens: '5000' }, /maxTokens .* got "5000"/],
      [{ maxTokens: 10.5 }, /whole number/],
      [{ maxCostUsd: 0 }, /above 0/],
      [{}, /sets no limit/],
      ['5000', /must be an object/],
      [{ maxTokens: 5, requests: 2 }, /unknown field requests/],
    ];
    for (const [v, re] of bad)
      assert.throws(
        () => checkBudget(v),
        (e: unknown) => e instanceof BudgetInputError && re.test(e.message),
        JSON.stringify(v),
      );
    for (const text of ['-5', 'lots', '$-1', '5k, 6k', '$1e308']) assert.throws(() => parseBudgetText(text), BudgetInputError, text);
  });
});
