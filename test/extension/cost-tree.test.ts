import assert from 'node:assert/strict';
import { statusBarView } from '../../src/extension/presenter/status-bar';
import type { TreeNode } from '../../src/protocol';
import { Script, waitFor } from '../core/subagent/helpers';
import { panelPerTest } from '../support/panel';

const PRICE = { input: 1, cacheHit: 0.1, output: 2 };
const usd = (t: TreeNode['tokens']) => ((t.prompt - t.cacheHit) * PRICE.input + t.cacheHit * PRICE.cacheHit + t.completion * PRICE.output) / 1e6;
const near = (a: number | undefined, b: number, what: string) => assert.ok(a !== undefined && Math.abs(a - b) < 1e-9, `${what}: ${a} vs ${b}`);

// Issue 15.2 and 15.5: each node's own cost, its subtree's total, its budget bar — from the
// one summary fold, priced once — and the status bar carrying the same figures.
describe('extension: cost and budgets in the tree', () => {
  const w = panelPerTest({ harness: { prices: { 'test-model': PRICE } } });
  let script: Script;
  beforeEach(() => {
    script = new Script(w.server);
  });

  it('each node shows its own cost and cache saving, ancestors their subtree total, a budgeted node its bar; the status bar sums it all', async () => {
    const { c, port, t } = w;
    const spawn = (tag: string) => ({ name: 'subagent', arguments: { prompt: `[[${tag}]] go`, label: tag } });
    script.on('root', { toolCalls: [spawn('child')] }, { text: 'root done' });
    script.on('child', { toolCalls: [spawn('grand')] }, { text: 'child done' });
    await c.receive(port, { type: 'chat/send', id: 'r1', text: '[[root]] delegate twice' });
    await t.h.settle();
    const root = t.h.store.list().find((h) => !h.parentSession)!.id;
    await c.receive(port, { type: 'budget/set', id: 'b1', sessionId: root, budget: { maxTokens: 1_000_000, maxCostUsd: 5 } });
    assert.ok(port.of('request/done').some((m) => m.id === 'b1' && m.ok));
    const child = t.h.store.list().find((h) => h.title === 'child')!.id;
    const grand = t.h.store.list().find((h) => h.title === 'grand')!.id;
    await waitFor(() => port.node(root)?.budget !== undefined, 'the budget bar');

    const [r, ch, g] = [port.node(root)!, port.node(child)!, port.node(grand)!];
    for (const n of [r, ch, g]) {
      near(n.costUsd, usd(n.tokens), `${n.id} own cost`);
      near(n.savedUsd, (n.tokens.cacheHit * (PRICE.input - PRICE.cacheHit)) / 1e6, `${n.id} saving`);
    }
    assert.ok(r.tokens.cacheHit > 0, 'the test server reports cache hits');
    assert.equal(g.subtree, undefined, 'a leaf has no subtree total');
    const sum = (...ns: TreeNode[]) => ns.reduce((x, n) => x + n.tokens.prompt + n.tokens.completion, 0);
    assert.equal(ch.subtree!.tokens, sum(ch, g));
    assert.equal(r.subtree!.tokens, sum(r, ch, g));
    near(r.subtree!.costUsd, usd(r.tokens) + usd(ch.tokens) + usd(g.tokens), 'root subtree cost');
    assert.equal(r.budget!.maxTokens, 1_000_000);
    assert.equal(r.budget!.spentTokens, sum(r, ch, g));
    near(r.budget!.spentUsd, r.subtree!.costUsd!, 'budget spent');

    // The status bar carries the same total.
    const bar = statusBarView(c.statusCounts(), c.totalSpend());
    assert.match(bar.text, new RegExp(`· \\$${r.subtree!.costUsd!.toFixed(4).replace('.', '\\.')}$`));
    assert.match(bar.tooltip, /saved \$0\.\d+ by cache hits/);

    // A bad amount from the panel is refused with what is wrong.
    await c.receive(port, { type: 'budget/set', id: 'b2', sessionId: root, budget: { maxTokens: -1 } });
    const refused = port.of('request/done').find((m) => m.id === 'b2');
    assert.ok(refused && !refused.ok && /maxTokens must be a whole number/.test(refused.error));
  });

  // Issue 21.7: a window reload keeps the status bar's total: it comes from the stored
  // summaries (the durable fold), shown once they are folded, with no new turn.
  it('after a reopen on the same store, the status bar shows the same total before any turn', async () => {
    script.on('root', { toolCalls: [{ name: 'subagent', arguments: { prompt: '[[child]] go', label: 'child' } }] }, { text: 'root done' });
    script.on('child', { text: 'child done' });
    await w.c.receive(w.port, { type: 'chat/send', id: 'r1', text: '[[root]] delegate' });
    await w.t.h.settle();
    const before = statusBarView(w.c.statusCounts(), w.c.totalSpend()).text;
    assert.match(before, / · \$\d/);
    const requests = w.server.requests.length;
    await w.reopen({ storeDir: w.t.storeDir });
    await waitFor(() => w.statusBar.length > 0, 'the status bar after the first fold');
    assert.equal(w.statusBar.at(-1), before);
    assert.equal(w.server.requests.length, requests, 'no request was made');

    // A deletion moves it too, without an event.
    const root = w.t.h.store.list().find((h) => !h.parentSession)!.id;
    await w.c.deleteSession(root);
    assert.equal(w.statusBar.at(-1), '$(type-hierarchy) Arbor');
  });

  it('a model with no price shows tokens only, never a made-up cost', async () => {
    await w.reopen({ prices: undefined });
    const { c, port, t } = w;
    script.on('root', { text: 'hi' });
    await c.receive(port, { type: 'chat/send', id: 'r1', text: '[[root]] hello' });
    await t.h.settle();
    const n = port.of('tree/node').pop()!.node;
    assert.ok(n.tokens.prompt > 0);
    assert.equal(n.costUsd, undefined);
    assert.equal(n.savedUsd, undefined);
    assert.doesNotMatch(statusBarView({}, c.totalSpend()).text, /\$\d/);
    assert.match(statusBarView({}, c.totalSpend()).text, / · [\d.]+[kM]? tok$/);
  });
});
