import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { arbor } from '../support/cli';
import { ModelServer } from '../support/model-server';

// Issue 15: `arbor run --budget`, `arbor send --budget` (a human raises it), `--prices`, and
// `arbor sessions --json` carrying the cost figures of the one fold.
describe('cli: budgets and cost in real processes', () => {
  let server: ModelServer;
  let dir: string;
  let common: string[];
  let store: string;
  let prices: string;
  before(async () => (server = await ModelServer.start()));
  after(() => server.stop());
  beforeEach(() => {
    server.reset();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-cli-budget-'));
    const ws = path.join(dir, 'ws');
    store = path.join(dir, 'store');
    fs.mkdirSync(ws);
    prices = path.join(dir, 'prices.json');
    fs.writeFileSync(prices, JSON.stringify({ 'test-model': { input: 2, cacheHit: 0.5, output: 4 } }));
    common = ['--store', store, '--workspace', ws, '--base-url', server.baseURL, '--model', 'test-model', '--max-tokens', '64', '--prices', prices];
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('--budget stops the turn with budget before any request; send --budget raises it and the work goes on; sessions --json shows the figures', async () => {
    const r = await arbor(['run', ...common, '--budget', '100', 'hello']);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /turn ended: budget — The budget of .* \(100 tokens\) cannot take the next request/);
    assert.equal(server.requests.length, 0);
    const id = /session (\S+)/.exec(r.stderr)![1];

    server.enqueue({ text: 'done now' });
    const more = await arbor(['send', ...common, '--budget', '50k, $1', id, 'go on']);
    assert.equal(more.code, 0, more.stderr);
    assert.equal(server.requests.length, 1);

    const list = JSON.parse((await arbor(['sessions', '--json', '--store', store, '--prices', prices])).stdout) as {
      id: string;
      tokens: { prompt: number; completion: number; cacheHit: number };
      costUsd?: number;
      savedUsd?: number;
      subtree: { tokens: number; costUsd?: number };
      budget?: { maxTokens?: number; maxCostUsd?: number; spentTokens: number; spentUsd?: number };
    }[];
    const s = list.find((x) => x.id === id)!;
    const { prompt, completion, cacheHit } = s.tokens;
    const expected = ((prompt - cacheHit) * 2 + cacheHit * 0.5 + completion * 4) / 1e6;
    assert.ok(prompt > 0);
    assert.ok(Math.abs(s.costUsd! - expected) < 2e-6, `${s.costUsd} vs ${expected}`);
    assert.equal(s.subtree.tokens, prompt + completion);
    assert.deepEqual({ ...s.budget, spentUsd: undefined }, { maxTokens: 50_000, maxCostUsd: 1, spentTokens: prompt + completion, spentUsd: undefined });

    // Without the price file the same session shows tokens only: test-model has no default price.
    const bare = JSON.parse((await arbor(['sessions', '--json', '--store', store])).stdout) as {
      id: string;
      costUsd?: number;
      subtree: { costUsd?: number };
    }[];
    assert.equal(bare.find((x) => x.id === id)!.costUsd, undefined);
    assert.equal(bare.find((x) => x.id === id)!.subtree.costUsd, undefined);
  });

  it('refuses bad budgets and bad price files with a clear error (exit 2)', async () => {
    for (const b of ['-5', 'NaN', '$1e308', 'lots']) {
      const r = await arbor(['run', ...common, '--budget', b, 'hello']);
      assert.equal(r.code, 2, `${b}: ${r.stderr}`);
      assert.match(r.stderr, /--budget: /);
    }
    fs.writeFileSync(prices, JSON.stringify({ 'test-model': { input: -1, output: 1 } }));
    const r = await arbor(['run', ...common, 'hello']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /prices\.json\.test-model\.input must be a number from 0/);
    assert.equal(server.requests.length, 0);
  });
});
