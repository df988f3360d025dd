import assert from 'node:assert/strict';
import type { HarnessConfig } from '../../../src/core/harness';
import { BudgetInputError } from '../../../src/core/session/budget';
import type { SessionEvent } from '../../../src/core/session/events';
import { onEvents } from '../../support/changes';
import { eventsOf, hold, ofType, stopReasons, subagentWorld } from '../subagent/helpers';

// Issue 15.3–15.4: budgets on a delegation subtree, set by the human or a delegating parent,
// durable in the log, checked before every model request; a request that cannot fit ends the
// turn with stop reason `budget`, and nothing restarts by itself.

const PRICES = { 'test-model': { input: 1, cacheHit: 0.1, output: 2 } };
const spawn = (tag: string, extra: Record<string, unknown> = {}) => ({
  name: 'subagent',
  arguments: { prompt: `[[${tag}]] task ${tag}`, label: tag, ...extra },
});
const loop = (key: string, n: number) => Array.from({ length: n }, () => ({ toolCalls: [hold(key)] }));

/** The root's call of a workflow of 20 agents one after another, run with a budget of `maxTokens`. */
function stepsWorkflow(maxTokens: number) {
  return {
    toolCalls: [
      {
        name: 'workflow',
        arguments: {
          // biome-ignore lint/suspicious/noTemplateCurlyInString: the workflow script's own template, run in its process
          script: 'const out = []; for (let i = 0; i < 20; i++) out.push(await agent(`[[wa]] step ${i}`)); return out;',
          meta: { name: 'steps', description: 'one after another' },
          budget: { maxTokens },
        },
      },
    ],
  };
}

describe('cost: budgets that hold', () => {
  const w = subagentWorld({}, { perTest: true });
  /** A harness whose requests carry max_tokens 256 (the completion cap a budget check reserves and the server honours). */
  const setup = (more: Partial<HarnessConfig> = {}) =>
    w.setup({
      model: { baseURL: w.server.baseURL, name: 'test-model', apiKey: 'test', maxRetries: 0, timeoutMs: 10_000, maxTokens: 256 },
      prices: PRICES,
      ...more,
    });
  /** The tokens (bytes / 4, rounded up) of a one-message request with an agent's tools: the unit the budgets below are sized in. */
  const probeTokens = () =>
    Math.ceil(
      w.t.h.model.describe({
        model: 'test-model',
        system: 'x',
        tools: w.t.h.tools.view({ own: 'agent:x' }),
        messages: [{ role: 'user', content: 'x', source: { kind: 'user' }, seq: 0 }],
      }).bytes / 4,
    );
  const idOf = (label: string) => w.t.h.store.list().find((h) => h.title === label)!.id;
  const subtreeTokens = (ids: string[]) =>
    ids.reduce((n, id) => n + (w.t.h.store.summaryRef(id)!.tokens.prompt + w.t.h.store.summaryRef(id)!.tokens.completion), 0);

  it('a turn whose next request cannot fit ends with stop reason budget before asking the model; raising the budget resumes nothing until a message', async () => {
    await setup();
    await w.t.h.setBudget(w.root.id, { maxTokens: 50 });
    await w.root.accept('[[root]] hello');
    await w.t.h.settle();
    assert.deepEqual(stopReasons(w.root.session.events), ['budget']);
    const end = ofType(w.root.session.events, 'turn/end')[0];
    assert.match(end.error ?? '', /budget of .* \(50 tokens\) cannot take the next request: 50 tokens are left and this request may take \d+/);
    assert.match(end.error ?? '', /raise the budget/);
    assert.equal(w.server.requests.length, 0, 'no request was made');
    assert.equal(w.t.h.store.summaryRef(w.root.id)!.lastStopReason, 'budget');

    await w.t.h.setBudget(w.root.id, { maxTokens: 1_000_000 });
    await w.t.h.settle();
    assert.equal(w.server.requests.length, 0, 'raising the budget started nothing');
    await w.root.accept('[[root]] go on');
    await w.t.h.settle();
    assert.deepEqual(stopReasons(w.root.session.events), ['budget', 'completed']);
  });

  it('three levels with parallel children crossing the budget: every turn stops within one step, spending stays within the budget, every parent is told once', async () => {
    await setup();
    w.gates.release('go'); // the leaves' tool answers at once: they just keep asking the model
    const events: { id: string; e: SessionEvent }[] = [];
    onEvents(w.t.h, (id, e) => events.push({ id, e }));
    w.script.on('root', { toolCalls: [spawn('m1'), spawn('m2')] }, { text: 'root done' });
    w.script.on('m1', { toolCalls: [spawn('l1'), spawn('l2')] }, { text: 'm1 done' });
    w.script.on('m2', { toolCalls: [spawn('l3'), spawn('l4')] }, { text: 'm2 done' });
    for (const l of ['l1', 'l2', 'l3', 'l4']) w.script.on(l, ...loop('go', 49));
    // Room for the root, the two middles and a few steps of each leaf: the budget falls mid-run.
    const budget = probeTokens() * 20;
    await w.t.h.setBudget(w.root.id, { maxTokens: budget });
    await w.root.accept('[[root]] fan out');
    await w.t.h.settle();

    const all = [w.root.id, ...['m1', 'm2', 'l1', 'l2', 'l3', 'l4'].map(idOf)];
    for (const id of all)
      assert.equal(stopReasons(await eventsOf(w.t.h, id)).pop(), 'budget', `${w.t.h.store.header(id)!.title ?? 'root'} stopped on the budget`);
    const spent = subtreeTokens(all);
    assert.ok(spent <= budget, `spent ${spent} of a ${budget}-token budget`);
    assert.ok(spent > budget / 2, `the budget was used (${spent} of ${budget})`);
    assert.equal(
      w.t.h.cost.budgets.spent(w.root.id)!.tokens.prompt + w.t.h.cost.budgets.spent(w.root.id)!.tokens.completion,
      spent,
      'the guard counts what the summaries say',
    );
    assert.ok(
      ['l1', 'l2', 'l3', 'l4'].some((l) => w.script.bodies(l).length >= 2),
      'leaves worked for some steps',
    );

    // Within one step: after the first budget stop, no session made more than one more request.
    const first = events.findIndex(({ e }) => e.type === 'turn/end' && e.stopReason === 'budget');
    const after = new Map<string, number>();
    for (const { id, e } of events.slice(first)) if (e.type === 'request/header') after.set(id, (after.get(id) ?? 0) + 1);
    for (const [id, n] of after) assert.ok(n <= 1, `${id} made ${n} requests after the first budget stop`);

    // Every parent heard once per child, and heard "budget".
    for (const [parent, kids] of [
      [w.root.id, 2],
      [idOf('m1'), 2],
      [idOf('m2'), 2],
    ] as const) {
      const results = ofType(await eventsOf(w.t.h, parent), 'tool/result').filter((r) => r.name === 'subagent');
      assert.equal(results.length, kids);
      for (const r of results) assert.match(r.content, /"stopReason": "budget"/);
    }
  });

  it("a child's budget can never exceed what its parent has left; bad budgets are refused with a clear error", async () => {
    await setup();
    await w.t.h.setBudget(w.root.id, { maxTokens: 1_000_000 });
    w.script.on(
      'root',
      {
        toolCalls: [
          spawn('big', { budget: { maxTokens: 2_000_000 } }),
          spawn('ok', { budget: { maxTokens: 300_000 } }),
          spawn('huge', { budget: { maxCostUsd: 1e308 } }),
          spawn('text', { budget: { maxTokens: '5000' } }),
          spawn('neg', { budget: { maxTokens: -5 } }),
        ],
      },
      { text: 'root done' },
    );
    w.script.on('ok', { toolCalls: [spawn('grand', { budget: { maxTokens: 400_000 } })] }, { text: 'ok done' });
    await w.root.accept('[[root]] delegate with budgets');
    await w.t.h.settle();
    const results = ofType(w.root.session.events, 'tool/result');
    assert.match(results[0].content, /BAD_BUDGET: budget\.maxTokens 2000000 is more than the \d+ tokens your budget has left/);
    assert.ok(!results[1].isError, results[1].content);
    assert.match(results[2].content, /BAD_BUDGET: budget\.maxCostUsd must be a number of US dollars above 0 and at most 1000000/);
    assert.match(results[3].content, /budget\.maxTokens/);
    assert.ok(results[3].isError);
    assert.match(results[4].content, /budget\.maxTokens/);
    assert.ok(results[4].isError);
    assert.equal(w.t.h.store.list().filter((h) => ['big', 'huge', 'text', 'neg', 'grand'].includes(h.title ?? '')).length, 0, 'no refused child was created');
    const ok = await eventsOf(w.t.h, idOf('ok'));
    assert.deepEqual(
      ofType(ok, 'budget/set').map((e) => [e.budget, e.source]),
      [[{ maxTokens: 300_000 }, 'delegation']],
    );
    assert.match(
      ofType(ok, 'tool/result')[0].content,
      /budget\.maxTokens 400000 is more than the \d+ tokens your budget has left/,
      "a grandchild is held to its parent's budget",
    );
    await assert.rejects(w.t.h.setBudget(w.root.id, { maxCostUsd: Number.NaN }), BudgetInputError);
    await assert.rejects(w.t.h.setBudget(w.root.id, { maxTokens: '5000' } as never), BudgetInputError);
  });

  it('a fork starts with no budget and none of the source spending; only an explicit budget carries', async () => {
    await setup();
    await w.root.accept('[[root]] spend a little');
    await w.t.h.settle();
    await w.t.h.setBudget(w.root.id, { maxTokens: 10 }); // exhausted for the source
    const end = ofType(w.root.session.events, 'turn/end')[0].seq;

    const free = await w.t.h.forkSession(w.root.id, end);
    const s = w.t.h.store.summaryRef(free.id)!;
    assert.equal(s.budget, undefined);
    assert.deepEqual(s.tokens, { prompt: 0, completion: 0, cacheHit: 0 }, 'the seed spending is the source s');
    await free.accept('[[fork]] work');
    await w.t.h.settle();
    assert.deepEqual(stopReasons(free.session.events.slice(s.seedLength)), ['completed'], "the source's budget does not hold a user fork");

    const held = await w.t.h.forkSession(w.root.id, end, { budget: { maxTokens: 10 } });
    assert.deepEqual(
      ofType(held.session.events.slice(held.session.header.seedLength), 'budget/set').map((e) => e.source),
      ['fork'],
    );
    await held.accept('[[fork]] work');
    await w.t.h.settle();
    assert.deepEqual(stopReasons(held.session.events.slice(held.session.header.seedLength ?? 0)), ['budget']);
  });

  it('a workflow with a budget ends with BUDGET once its agents cannot fit', async () => {
    await setup();
    const budget = probeTokens() * 3;
    w.script.on('root', stepsWorkflow(budget), { text: 'root done' });
    await w.root.accept('[[root]] run the workflow');
    await w.t.h.settle();
    const result = ofType(w.root.session.events, 'tool/result').find((r) => r.name === 'workflow')!;
    assert.ok(result.isError);
    assert.match(result.content, /workflow: BUDGET: Agent \d+ was stopped by its budget/);
    const endEv = ofType(w.root.session.events, 'workflow/end')[0] as unknown as { data: { code: string; agents: number } };
    assert.equal(endEv.data.code, 'BUDGET');
    assert.ok(endEv.data.agents >= 2 && endEv.data.agents < 20, `${endEv.data.agents} agents ran`);
    const start = ofType(w.root.session.events, 'workflow/start')[0] as unknown as { data: { budget: unknown } };
    assert.deepEqual(start.data.budget, { maxTokens: budget });
    // The run's own budget is more than the root has left: refused before anything starts.
    await w.t.h.setBudget(w.root.id, { maxTokens: 1_000_000 });
    w.script.on(
      'root',
      { toolCalls: [{ name: 'workflow', arguments: { script: 'return 1;', meta: { name: 'x', description: 'y' }, budget: { maxTokens: 2_000_000 } } }] },
      { text: 'ok' },
    );
    await w.root.accept('[[root]] again');
    await w.t.h.settle();
    const second = ofType(w.root.session.events, 'tool/result').filter((r) => r.name === 'workflow')[1];
    assert.match(second.content, /BAD_INPUT: budget\.maxTokens 2000000 is more than the \d+ tokens your budget has left/);
  });

  it("a workflow run's budget survives a price change while the run goes: its agents still stop at it (session 48)", async () => {
    await setup();
    const budget = probeTokens() * 3;
    w.script.on('root', stepsWorkflow(budget), { text: 'root done' });
    // The settings' prices change as the run's first agent asks the model (the budget only counts tokens).
    let repriced = false;
    const off = onEvents(w.t.h, (id, e) => {
      if (repriced || e.type !== 'request/header' || !w.t.h.store.summaryRef(id)?.workflowRun) return;
      repriced = true;
      w.t.h.setPrices({ 'test-model': { input: 3, cacheHit: 0.3, output: 6 } });
    });
    try {
      await w.root.accept('[[root]] run the workflow');
      await w.t.h.settle();
    } finally {
      off();
    }
    assert.ok(repriced, 'the prices changed during the run');
    const endEv = ofType(w.root.session.events, 'workflow/end')[0] as unknown as { data: { code: string; agents: number } };
    assert.equal(endEv.data.code, 'BUDGET', `the run ended ${endEv.data.code} after ${endEv.data.agents} agents`);
    assert.ok(endEv.data.agents < 20, `${endEv.data.agents} agents ran`);
  });

  it('list_agents carries each child s cost, its subtree total and its budget from the same fold', async () => {
    await setup();
    w.script.on('root', { toolCalls: [spawn('a', { mode: 'continuable', budget: { maxTokens: 500_000 } })] }, { text: 'started' });
    w.script.on('a', { toolCalls: [spawn('b')] }, { text: 'a done' });
    await w.root.accept('[[root]] start a');
    await w.t.h.settle();
    w.script.on('root', { toolCalls: [{ name: 'list_agents', arguments: {} }] }, { text: 'listed' });
    await w.root.accept('[[root]] list');
    await w.t.h.settle();
    const listed = JSON.parse(ofType(w.root.session.events, 'tool/result').filter((r) => r.name === 'list_agents')[0].content) as {
      id: string;
      label?: string;
      tokens: { prompt: number; completion: number; cacheHit: number };
      costUsd?: number;
      subtree?: { tokens: number; costUsd?: number };
      budget?: { maxTokens?: number; spentTokens: number; spentUsd?: number };
    }[];
    const a = listed.find((l) => l.label === 'a')!;
    const b = listed.find((l) => l.label === 'b')!;
    const own = (l: typeof a) => l.tokens.prompt + l.tokens.completion;
    const price = (l: typeof a) => ((l.tokens.prompt - l.tokens.cacheHit) * 1 + l.tokens.cacheHit * 0.1 + l.tokens.completion * 2) / 1e6;
    assert.ok(Math.abs(a.costUsd! - price(a)) < 1e-6, `${a.costUsd} vs ${price(a)}`);
    assert.equal(a.subtree!.tokens, own(a) + own(b));
    assert.ok(Math.abs(a.subtree!.costUsd! - (price(a) + price(b))) < 2e-6);
    assert.equal(a.budget!.maxTokens, 500_000);
    assert.equal(a.budget!.spentTokens, own(a) + own(b));
    assert.ok(Math.abs(a.budget!.spentUsd! - a.subtree!.costUsd!) < 2e-6);
  });
});
