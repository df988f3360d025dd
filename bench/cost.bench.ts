// budget.overshoot: tokens a budgeted subtree spent ÷ its token budget, with 20 parallel
// children at depth 2 that keep asking a zero-latency model (the real test server through the
// real client) until the budget stops them; the budget falls mid-run (about 8 steps a child).
//
// budget.overshoot.long_replies: the same ratio when the replies are long and parallel: 8
// children, each asked by the model for a 30,000-token reply, under a 40,000-token budget. The
// requests carry the cap the guard reserved (decision 0043) and the test server stops a reply
// there, as real endpoints do. Run with the deployment's maxTokens unset (the 4,096 default cap)
// and set to 32,000; the figure is the worse of the two. For context, a note prints the same case
// with the cap reserved but not sent (the behaviour before decision 0043).
//
// budget.check.vs_step: what the budget guard costs per model step (the check before the
// request, and the fold of the step's answer into the subtree totals) at a 1,000-node tree,
// ÷ the agent's own per-step overhead (a step's wall time minus the model's stream) measured
// on the same machine with a zero-latency model.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { BudgetGuard } from '../src/core/cost/guard';
import { Harness } from '../src/core/harness';
import { OpenAICompatibleClient } from '../src/core/model/openai-client';
import type { ModelClient, ModelRequest, ModelStreamEvent, RequestInfo } from '../src/core/model/types';
import type { SessionEvent, SessionHeader } from '../src/core/session/events';
import type { Tool } from '../src/core/tools/tool';
import { type ChatBody, ModelServer } from '../test/support/model-server';
import { type BenchOptions, type Figure, type FigureSpec, fmt, median, now, tempDir } from './support';
import { TimedClient } from './timed-client';

export const name = 'cost';

const OVERSHOOT: FigureSpec = { id: 'budget.overshoot', op: '<=', target: 1.1 };
const OVERSHOOT_LONG: FigureSpec = { id: 'budget.overshoot.long_replies', op: '<=', target: 1.1 };
const CHECK_VS_STEP: FigureSpec = { id: 'budget.check.vs_step', op: '<=', target: 0.05 };
export const figures: readonly FigureSpec[] = [OVERSHOOT, OVERSHOOT_LONG, CHECK_VS_STEP];

const NOOP: Tool = {
  name: 'noop',
  description: 'Does nothing.',
  parameters: { type: 'object', properties: {}, additionalProperties: false },
  execute: async () => ({ content: 'ok', isError: false }),
};
const noop = { toolCalls: [{ name: 'noop', arguments: {} }] };
const said = (body: ChatBody, tag: string) => body.messages.some((m) => m.role === 'user' && String(m.content ?? '').includes(tag));
const answered = (body: ChatBody) => body.messages.some((m) => m.role === 'tool');

async function overshoot(opts: BenchOptions, server: ModelServer, dir: string): Promise<number> {
  const children = 20;
  server.reset();
  server.setFallback((body) => {
    if (said(body, '[[leaf]]')) return noop;
    if (said(body, '[[mid]]'))
      return answered(body)
        ? { text: 'mid done' }
        : { toolCalls: Array.from({ length: children }, (_, i) => ({ name: 'subagent', arguments: { prompt: `[[leaf]] part ${i}`, label: `leaf ${i}` } })) };
    return answered(body) ? { text: 'root done' } : { toolCalls: [{ name: 'subagent', arguments: { prompt: '[[mid]] split it', label: 'mid' } }] };
  });
  const ws = path.join(dir, 'ws-overshoot');
  fs.mkdirSync(ws);
  const client = new OpenAICompatibleClient({ baseURL: server.baseURL, apiKey: 'k', maxRetries: 0 });
  const h = await Harness.open({
    storeDir: path.join(dir, 'store-overshoot'),
    workspace: [ws],
    model: { client, name: 'bench', maxTokens: 1024 },
    sandbox: 'workspace-write',
    approval: 'never',
    maxConcurrentChildren: children,
    maxSteps: 50,
  });
  h.tools.register(NOOP);
  try {
    const root = await h.createSession();
    const step = Math.ceil(
      h.model.describe({
        model: 'bench',
        system: 'x',
        tools: h.tools.view({ own: 'agent:x' }),
        messages: [{ role: 'user', content: 'x', source: { kind: 'user' }, seq: 0 }],
      }).bytes / 4,
    );
    const budget = step * children * 8;
    await h.setBudget(root.id, { maxTokens: budget });
    await root.accept('[[root]] fan out');
    await h.settle();
    const ids = [
      root.id,
      ...h.store
        .list()
        .filter((x) => x.id.startsWith(`${root.id}.`))
        .map((x) => x.id),
    ];
    let spent = 0;
    let stopped = 0;
    for (const id of ids) {
      const s = await h.store.summary(id);
      spent += s.tokens.prompt + s.tokens.completion;
      if (s.lastStopReason === 'budget') stopped++;
    }
    opts.note(
      `budget.overshoot: ${spent} tokens spent of a ${budget}-token budget by ${ids.length} sessions (${stopped} stopped by it), ${server.requests.length} requests, at most ${server.maxInFlight} at once`,
    );
    if (stopped < children) throw new Error(`only ${stopped} sessions stopped on the budget: it did not fall mid-run`);
    return spent / budget;
  } finally {
    await h.close();
  }
}

/**
 * The behaviour before decision 0043, for comparison only: the guard reserves a cap, but the
 * request goes out without it (the provider writes as long a reply as it likes).
 */
class CapDroppingClient implements ModelClient {
  constructor(private readonly inner: ModelClient) {}
  get provider(): string {
    return this.inner.provider;
  }
  describe(req: ModelRequest): RequestInfo {
    return this.inner.describe(req);
  }
  stream(req: ModelRequest): AsyncIterable<ModelStreamEvent> {
    const { maxTokens: _dropped, ...rest } = req;
    return this.inner.stream(rest);
  }
}

async function overshootLong(opts: BenchOptions, server: ModelServer, dir: string, maxTokens: number | undefined, dropCap = false): Promise<number> {
  const children = 8;
  const budget = 40_000;
  server.reset();
  server.setFallback((body) => {
    // The reply's head waits a little, so the children's requests are in flight together.
    if (said(body, '[[long]]')) return { text: 'x'.repeat(30_000 * 4), chunkSize: 4096, delayMs: 100 };
    return answered(body)
      ? { text: 'root done' }
      : {
          toolCalls: Array.from({ length: children }, (_, i) => ({
            name: 'subagent',
            arguments: { prompt: `[[long]] write report ${i}`, label: `long ${i}` },
          })),
        };
  });
  const tag = `${maxTokens ?? 'unset'}${dropCap ? ', cap not sent (before decision 0043)' : ''}`;
  const ws = path.join(dir, `ws-long-${maxTokens ?? 'unset'}${dropCap ? '-dropped' : ''}`);
  fs.mkdirSync(ws);
  const real = new OpenAICompatibleClient({ baseURL: server.baseURL, apiKey: 'k', maxRetries: 0 });
  const client = dropCap ? new CapDroppingClient(real) : real;
  const h = await Harness.open({
    storeDir: `${ws}-store`,
    workspace: [ws],
    model: { client, name: 'bench', ...(maxTokens ? { maxTokens } : {}) },
    sandbox: 'workspace-write',
    approval: 'never',
    maxConcurrentChildren: children,
  });
  try {
    const root = await h.createSession();
    await h.setBudget(root.id, { maxTokens: budget });
    await root.accept('[[root]] fan out long reports');
    await h.settle();
    const ids = [
      root.id,
      ...h.store
        .list()
        .filter((x) => x.parentSession === root.id)
        .map((x) => x.id),
    ];
    let spent = 0;
    const ends = new Map<string, number>();
    for (const id of ids) {
      const s = await h.store.summary(id);
      spent += s.tokens.prompt + s.tokens.completion;
      if (id !== root.id) ends.set(s.lastStopReason ?? 'none', (ends.get(s.lastStopReason ?? 'none') ?? 0) + 1);
    }
    if (ids.length !== children + 1) throw new Error(`${ids.length - 1} children ran, not ${children}`);
    const caps = server.requests.map((r) => r.body.max_tokens).filter((c) => c !== undefined);
    opts.note(
      `budget.overshoot.long_replies (maxTokens ${tag}): ${spent} tokens spent of a ${budget}-token budget by ${children} children asked for 30,000-token replies; children ended ${[...ends].map(([r, n]) => `${r} ×${n}`).join(', ')}; caps sent ${caps.join(' ')}; ${server.requests.length} requests, at most ${server.maxInFlight} at once`,
    );
    return spent / budget;
  } finally {
    await h.close();
  }
}

/** A 1,000-node tree: a budgeted root, 9 budgeted children, 990 grandchildren (each with a spent step). */
async function bigTree(h: Harness): Promise<string[]> {
  const at = new Date().toISOString();
  const ev = (seq: number, d: object) => ({ seq, at, ...d }) as SessionEvent;
  const root: SessionHeader = { id: 'big', createdAt: at, origin: 'user', delegationDepth: 0 };
  await h.store.createSession(root, [ev(0, { type: 'budget/set', budget: { maxTokens: 1e11, maxCostUsd: 1e5 }, source: 'user' })]);
  const leaves: string[] = [];
  for (let i = 0; i < 9; i++) {
    const mid: SessionHeader = { id: `big.m${i}`, createdAt: at, origin: 'subagent', parentSession: 'big', delegationDepth: 1 };
    await h.store.createSession(mid, [ev(0, { type: 'budget/set', budget: { maxTokens: 1e10 }, source: 'delegation' })]);
    for (let j = 0; j < 110; j++) {
      const id = `big.m${i}.l${j}`;
      await h.store.createSession({ id, createdAt: at, origin: 'subagent', parentSession: mid.id, delegationDepth: 2 }, [
        ev(0, { type: 'turn/start', turnId: 't' }),
        ev(1, { type: 'assistant/message', text: 'x', model: 'deepseek-chat', usage: { promptTokens: 1000, completionTokens: 50, cacheHitTokens: 800 } }),
      ]);
      leaves.push(id);
    }
  }
  return leaves;
}

async function checkVsStep(opts: BenchOptions, server: ModelServer, dir: string): Promise<number> {
  const ws = path.join(dir, 'ws-check');
  fs.mkdirSync(ws);
  const client = new TimedClient(new OpenAICompatibleClient({ baseURL: server.baseURL, apiKey: 'k', maxRetries: 0 }));
  const h = await Harness.open({
    storeDir: path.join(dir, 'store-check'),
    workspace: [ws],
    model: { client, name: 'bench' },
    sandbox: 'workspace-write',
    approval: 'never',
    maxSteps: 1000,
  });
  h.tools.register(NOOP);
  try {
    // The agent's own per-step overhead: steps of a turn that calls a no-op tool, minus the model's stream.
    const steps = opts.quick ? 100 : 300;
    let n = 0;
    server.reset();
    server.setFallback(() => (++n % (steps + 1) === 0 ? { text: 'done' } : noop));
    const agent = await h.createSession();
    const perStep: number[] = [];
    for (let block = 0; block < 3; block++) {
      client.modelMs = 0;
      const t = now();
      await agent.accept(`block ${block}`);
      await agent.idle();
      if (block > 0) perStep.push((now() - t - client.modelMs) / (steps + 1));
    }
    const stepMs = median(perStep);

    // The guard at a 1,000-node tree: the check before a leaf's request and the fold of its answer.
    const leaves = await bigTree(h);
    // `appended` is the guard's store listener (private): called directly to time it alone.
    const guard = h.cost.budgets as unknown as { check: BudgetGuard['check']; appended(id: string, events: readonly SessionEvent[]): void };
    const answer = [
      {
        seq: 2,
        at: new Date().toISOString(),
        type: 'assistant/message',
        text: 'x',
        model: 'deepseek-chat',
        usage: { promptTokens: 1000, completionTokens: 50, cacheHitTokens: 800 },
      },
    ] as SessionEvent[];
    const rounds = opts.quick ? 20_000 : 100_000;
    const once = (i: number) => {
      const id = leaves[i % leaves.length];
      if ('refusal' in guard.check(id, { model: 'deepseek-chat', bytes: 40_000, maxTokens: 4096 })) throw new Error('the bench budget refused a request');
      guard.appended(id, answer);
    };
    for (let i = 0; i < 2000; i++) once(i); // warm up (and count the tree's scopes once)
    const samples: number[] = [];
    for (let b = 0; b < 10; b++) {
      const t = now();
      for (let i = 0; i < rounds / 10; i++) once(i);
      samples.push((now() - t) / (rounds / 10));
    }
    const checkMs = median(samples);
    opts.note(
      `budget.check.vs_step: guard ${fmt(checkMs * 1000)} µs per step (check + fold, 1,000-node tree, 2 budgeted ancestors) vs the agent's own ${fmt(stepMs)} ms per step (zero-latency model, model stream excluded)`,
    );
    return checkMs / stepMs;
  } finally {
    await h.close();
  }
}

export async function run(opts: BenchOptions): Promise<Figure[]> {
  const server = await ModelServer.start();
  const dir = tempDir('arbor-bench-cost-');
  try {
    const over = await overshoot(opts, server, dir);
    const long = Math.max(await overshootLong(opts, server, dir, undefined), await overshootLong(opts, server, dir, 32_000));
    const before = await overshootLong(opts, server, dir, undefined, true);
    opts.note(`budget.overshoot.long_replies: ${fmt(before)}× when the reserved cap is not sent (the behaviour before decision 0043), ${fmt(long)}× with it`);
    const check = await checkVsStep(opts, server, dir);
    return [
      { ...OVERSHOOT, value: over },
      { ...OVERSHOOT_LONG, value: long },
      { ...CHECK_VS_STEP, value: check },
    ];
  } finally {
    await server.stop();
  }
}
