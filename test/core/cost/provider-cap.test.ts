import assert from 'node:assert/strict';
import { DEFAULT_COMPLETION_RESERVE, MIN_COMPLETION_CAP } from '../../../src/core/cost/guard';
import type { HarnessConfig } from '../../../src/core/harness';
import { MAX_CAP_FIELD_BYTES } from '../../../src/core/model/request';
import type { SessionEvent } from '../../../src/core/session/events';
import { onEvents } from '../../support/changes';
import type { RecordedRequest } from '../../support/model-server';
import { eventsOf, ofType, stopReasons, subagentWorld, waitFor } from '../subagent/helpers';

// Decision 0043: under a budget every request carries the completion cap the guard reserved
// (max_tokens, or max_completion_tokens where the endpoint wants it), lowered to what is left,
// so the provider stops a reply where its reservation ends. Asserted on the bytes the real
// local server received; the server stops replies at the cap, as real endpoints do.

/** A reply of about `tokens` completion tokens (4 characters each, as the test server counts). */
const longReply = (tokens: number) => ({ text: 'x'.repeat(tokens * 4), chunkSize: 4096 });
const capsOf = (r: RecordedRequest) => ({ max_tokens: r.body.max_tokens, max_completion_tokens: r.body.max_completion_tokens });
const spawn = (tag: string) => ({ name: 'subagent', arguments: { prompt: `[[${tag}]] write the long report ${tag}`, label: tag } });

describe('cost: budgets the provider enforces (max_tokens under a budget)', () => {
  const w = subagentWorld({}, { perTest: true });
  let opened = false;
  /** A fresh harness with these model settings (one a test may open several: the previous one is closed first). */
  const setup = async (model: Partial<HarnessConfig['model']> = {}, more: Partial<HarnessConfig> = {}) => {
    if (opened) await w.t.cleanup();
    opened = true;
    await w.setup({ model: { baseURL: w.server.baseURL, name: 'test-model', apiKey: 'test', maxRetries: 0, timeoutMs: 10_000, ...model }, ...more });
  };
  afterEach(() => {
    opened = false;
  });
  const budgets = () => w.t.h.cost.budgets;
  const tokensOf = (id: string) => {
    const s = w.t.h.store.summaryRef(id)!;
    return s.tokens.prompt + s.tokens.completion;
  };
  /** The reservation of the root's request in flight, read while the server holds its reply. */
  const reservedWhileInFlight = async (n: number) => {
    await waitFor(() => w.server.requests.length >= n, `request ${n}`);
    return budgets().spent(w.root.id)!.reservedTokens;
  };
  /** A harness whose root, under a budget of 1M tokens, answered 'first': the prompt part its request reserved. */
  const firstPromptReserved = async () => {
    await setup();
    await w.t.h.setBudget(w.root.id, { maxTokens: 1_000_000 });
    w.script.on('root', { text: 'first', delayMs: 300 });
    await w.root.accept('[[root]] first');
    const first = (await reservedWhileInFlight(1)) - DEFAULT_COMPLETION_RESERVE;
    await w.t.h.settle();
    return first;
  };
  /** A harness whose root answered two questions, then put under a budget of 1M tokens. */
  const twoTurnsUnderBudget = async () => {
    await setup();
    await w.root.accept('[[root]] first question');
    await w.root.accept('[[root]] second question');
    await w.t.h.settle();
    await w.t.h.setBudget(w.root.id, { maxTokens: 1_000_000 });
  };
  /** The prompt part of a reservation, from the bytes the server received (the cap field taken out, its largest size counted back). */
  const promptEstimate = (r: RecordedRequest, field: string, cap: number) =>
    Math.ceil((Buffer.byteLength(r.raw) - Buffer.byteLength(`,"${field}":${cap}`) + MAX_CAP_FIELD_BYTES) / 4);

  it('a request under a budget carries max_tokens equal to the completion the guard reserved (the default reserve when no maxTokens is set)', async () => {
    await setup();
    await w.t.h.setBudget(w.root.id, { maxTokens: 1_000_000 });
    w.script.on('root', { text: 'short answer', delayMs: 300 });
    await w.root.accept('[[root]] hello');
    const reserved = await reservedWhileInFlight(1);
    await w.t.h.settle();
    const sent = w.server.requests[0];
    assert.equal(sent.body.max_tokens, DEFAULT_COMPLETION_RESERVE, 'the cap is in the bytes sent');
    assert.equal(sent.body.max_completion_tokens, undefined);
    assert.equal(
      reserved,
      promptEstimate(sent, 'max_tokens', DEFAULT_COMPLETION_RESERVE) + DEFAULT_COMPLETION_RESERVE,
      'reserved = prompt estimate + the cap sent',
    );
    const header = ofType(w.root.session.events, 'request/header')[0];
    assert.equal(header.bytes, Buffer.byteLength(sent.raw), 'the request header records the bytes that went out');
    assert.equal(budgets().spent(w.root.id)!.reservedTokens, 0, 'released once the answer is durable');
    assert.deepEqual(stopReasons(w.root.session.events), ['completed']);
  });

  it('without a budget no cap is sent unless the deployment set maxTokens; its maxTokens is the upper bound under a budget', async () => {
    await setup();
    await w.root.accept('[[root]] no budget');
    await w.t.h.settle();
    assert.deepEqual(capsOf(w.server.requests[0]), { max_tokens: undefined, max_completion_tokens: undefined });
    assert.ok(!w.server.requests[0].raw.includes('max_tokens'));

    await setup({ maxTokens: 700 });
    await w.root.accept('[[root]] own cap, no budget');
    await w.t.h.settle();
    assert.equal(w.server.requests[0].body.max_tokens, 700);

    await w.t.h.setBudget(w.root.id, { maxTokens: 1_000_000 });
    w.script.on('root', { text: 'fine', delayMs: 300 });
    await w.root.accept('[[root]] own cap under a budget');
    const reserved = await reservedWhileInFlight(2);
    await w.t.h.settle();
    const sent = w.server.requests[1];
    assert.equal(sent.body.max_tokens, 700, 'the budget never raises the deployment cap');
    assert.equal(reserved, Math.ceil(Buffer.byteLength(sent.raw) / 4) + 700, 'a request that had its cap measured with it reserves exactly its bytes/4 + cap');
  });

  it('OpenAI reasoning models get max_completion_tokens (by name, or as the setting says); others max_tokens', async () => {
    const sentField = async (name: string, capField?: 'auto' | 'max_tokens' | 'max_completion_tokens') => {
      await setup({ name, ...(capField ? { capField } : {}) });
      await w.t.h.setBudget(w.root.id, { maxTokens: 1_000_000 });
      await w.root.accept('[[root]] which field');
      await w.t.h.settle();
      const caps = capsOf(w.server.requests[0]);
      assert.ok(caps.max_tokens === undefined || caps.max_completion_tokens === undefined, `${name}: one field only`);
      return caps.max_completion_tokens !== undefined ? 'max_completion_tokens' : caps.max_tokens !== undefined ? 'max_tokens' : 'none';
    };
    assert.equal(await sentField('o3-mini'), 'max_completion_tokens');
    assert.equal(await sentField('gpt-5'), 'max_completion_tokens');
    assert.equal(await sentField('openai/o4-mini'), 'max_completion_tokens');
    assert.equal(await sentField('deepseek-chat'), 'max_tokens');
    assert.equal(await sentField('gpt-4o'), 'max_tokens');
    assert.equal(await sentField('o3-mini', 'max_tokens'), 'max_tokens', 'the setting overrides the name rule');
    assert.equal(await sentField('my-reasoner', 'max_completion_tokens'), 'max_completion_tokens');
  });

  it('near the end of a budget the cap is lowered to what is left, the reply is cut there by the server, and the turn says the budget capped it', async () => {
    const first = await firstPromptReserved();
    // Room for the next prompt (a little larger than the first) and about 1,000 reply tokens.
    const budget = tokensOf(w.root.id) + first + 1_000;
    await w.t.h.setBudget(w.root.id, { maxTokens: budget });
    w.script.on('root', { ...longReply(30_000), delayMs: 300 });
    await w.root.accept('[[root]] write 30k tokens');
    const reserved = await reservedWhileInFlight(2);
    await w.t.h.settle();
    const sent = w.server.requests[1];
    const cap = sent.body.max_tokens as number;
    assert.ok(cap >= MIN_COMPLETION_CAP && cap < 1_000, `lowered cap ${cap}`);
    assert.equal(reserved, promptEstimate(sent, 'max_tokens', cap) + cap, 'reserved = prompt estimate + the cap sent');
    assert.ok(tokensOf(w.root.id) <= budget, `spent ${tokensOf(w.root.id)} of ${budget}`);
    const end = ofType(w.root.session.events, 'turn/end').pop()!;
    assert.equal(end.stopReason, 'max-tokens');
    assert.match(end.error ?? '', new RegExp(`cut at ${cap} tokens: the budget of .* had room for only ${cap} reply tokens`));
    assert.match(end.error ?? '', /Raise the budget/);
    const said = ofType(w.root.session.events, 'assistant/message').pop()!;
    assert.equal(said.usage?.completionTokens, cap, 'the server stopped at the cap');
  });

  it('a reply cut at the default cap under a budget says how to allow longer replies; its cut tool calls never run', async () => {
    await setup();
    await w.t.h.setBudget(w.root.id, { maxTokens: 1_000_000 });
    w.script.on('root', { text: 'y'.repeat(DEFAULT_COMPLETION_RESERVE * 4 - 8), toolCalls: [spawn('never')] });
    await w.root.accept('[[root]] talk, then delegate');
    await w.t.h.settle();
    const end = ofType(w.root.session.events, 'turn/end')[0];
    assert.equal(end.stopReason, 'max-tokens');
    assert.match(end.error ?? '', /cut at 4096 tokens: under a budget every request carries a reply cap.*arbor\.model\.maxTokens/);
    assert.equal(ofType(w.root.session.events, 'assistant/message')[0].toolCalls, undefined, 'a call cut mid-arguments is not kept');
    assert.equal(w.t.h.store.list().filter((h) => h.title === 'never').length, 0, 'no child was started');
  });

  it('when what is left is below the floor the request is refused with the budget stop, not sent with a tiny cap', async () => {
    const first = await firstPromptReserved();
    await w.t.h.setBudget(w.root.id, { maxTokens: tokensOf(w.root.id) + first + 100 });
    await w.root.accept('[[root]] more');
    await w.t.h.settle();
    assert.equal(w.server.requests.length, 1, 'nothing was sent');
    const end = ofType(w.root.session.events, 'turn/end').pop()!;
    assert.equal(end.stopReason, 'budget');
    assert.match(end.error ?? '', new RegExp(`this request may take \\d+ \\(a prompt of about \\d+ plus ${MIN_COMPLETION_CAP} for the reply\\)`));
    assert.match(end.error ?? '', /raise the budget/);
  });

  it("a compaction's summary request is checked too: it carries its cap, and its reservation ends with compaction/end", async () => {
    await twoTurnsUnderBudget();
    const r = await w.root.compact(1);
    assert.equal(r.outcome, 'committed', r.error);
    const summary = w.server.requests.at(-1)!;
    assert.match(String(summary.body.messages[0].content), /You compact a coding-agent conversation/);
    assert.equal(summary.body.max_tokens, DEFAULT_COMPLETION_RESERVE);
    assert.equal(budgets().spent(w.root.id)!.reservedTokens, 0, 'nothing stays held once the compaction ended');

    await w.t.h.setBudget(w.root.id, { maxTokens: tokensOf(w.root.id) + 10 });
    const before = w.server.requests.length;
    await w.root.accept('[[root]] third question');
    await w.t.h.settle();
    const refused = await w.root.compact(1);
    assert.equal(refused.outcome, 'aborted');
    assert.match(refused.error ?? '', /cannot take the next request/);
    assert.equal(w.server.requests.length, before, 'neither the turn nor the compaction sent anything');
  });

  it("a turn's request and a compaction's, in flight together in one session, each hold their own reservation (session 48)", async () => {
    await twoTurnsUnderBudget();
    const n = w.server.requests.length;
    w.script.on('compaction', { text: 'SUMMARY of the earlier work', delayMs: 300 });
    const compacted = w.root.compact(1);
    const compaction = await reservedWhileInFlight(n + 1);
    // A message sent while the compaction runs starts its turn: two requests of one session at once.
    w.script.on('root', { text: 'third answer', delayMs: 1_500 });
    await w.root.accept('[[root]] third question');
    const both = await reservedWhileInFlight(n + 2);
    assert.ok(both >= compaction + DEFAULT_COMPLETION_RESERVE, `both requests are held (${both} reserved, the compaction alone held ${compaction})`);
    const r = await compacted;
    assert.equal(r.outcome, 'committed', r.error);
    assert.ok(w.server.inFlight > 0, "the turn's request is still in flight");
    assert.ok(budgets().spent(w.root.id)!.reservedTokens >= DEFAULT_COMPLETION_RESERVE, "the compaction's end did not free the turn's request");
    await w.t.h.settle();
    assert.equal(budgets().spent(w.root.id)!.reservedTokens, 0);
  });

  it("a budget set on a subtree while its request is in flight counts that request's hold (session 48)", async () => {
    await setup();
    await w.t.h.setBudget(w.root.id, { maxTokens: 1_000_000 });
    w.script.on('root', { toolCalls: [spawn('c1')] }, { text: 'root done' });
    w.script.on('c1', { text: 'child answer', delayMs: 800 });
    await w.root.accept('[[root]] delegate');
    await waitFor(() => w.script.indexes('c1').length >= 1 && w.server.inFlight > 0, 'the child request in flight');
    const child = w.t.h.store.list().find((h) => h.title === 'c1')!.id;
    const held = budgets().spent(w.root.id)!.reservedTokens;
    assert.ok(held >= DEFAULT_COMPLETION_RESERVE, `the root's budget holds the child's request (${held})`);
    await w.t.h.setBudget(child, { maxTokens: 500_000 });
    assert.equal(budgets().spent(child)!.reservedTokens, held, "the child's new budget holds its request in flight too");
    await w.t.h.setBudget(child, null);
    await w.t.h.setBudget(child, { maxTokens: 400_000 });
    assert.equal(budgets().spent(child)!.reservedTokens, held, 'removed and set again, it holds it once');
    await w.t.h.settle();
    assert.equal(budgets().spent(child)!.reservedTokens, 0);
    assert.equal(budgets().spent(w.root.id)!.reservedTokens, 0);
  });

  it('a request sent again after its answer was late counts the prompt of the attempt that went unanswered (session 48)', async () => {
    // The first attempt's head comes after the timeout: the client sends the request again. The
    // provider had the first one too (it may bill its prompt): the session counts both.
    await setup({ timeoutMs: 400, maxRetries: 1 });
    await w.t.h.setBudget(w.root.id, { maxTokens: 1_000_000 });
    w.script.on('root', { text: 'too late', delayMs: 1_200 }, { text: 'in time' });
    await w.root.accept('[[root]] hello');
    await w.t.h.settle();
    assert.deepEqual(stopReasons(w.root.session.events), ['completed']);
    assert.equal(w.server.requests.length, 2, 'the request went out twice');
    const s = w.t.h.store.summaryRef(w.root.id)!;
    const both = w.server.requests[0].promptTokens + w.server.requests[1].promptTokens;
    assert.ok(s.tokens.prompt >= both * 0.9, `both prompts count: ${s.tokens.prompt} of ${both}`);
    assert.equal(s.estimated, true, 'the unanswered one is an estimate');
    const spent = budgets().spent(w.root.id)!;
    assert.equal(spent.tokens.prompt, s.tokens.prompt, 'and against the budget');
  });

  it('a price change while a request is in flight keeps its reservation held (session 48)', async () => {
    await setup();
    await w.t.h.setBudget(w.root.id, { maxTokens: 1_000_000 });
    w.script.on('root', { text: 'short answer', delayMs: 300 });
    await w.root.accept('[[root]] hello');
    const reserved = await reservedWhileInFlight(1);
    w.t.h.setPrices({ 'test-model': { input: 1, cacheHit: 0.1, output: 2 } });
    assert.equal(budgets().spent(w.root.id)!.reservedTokens, reserved, 'the request in flight still holds its bound');
    await w.t.h.settle();
    assert.equal(budgets().spent(w.root.id)!.reservedTokens, 0, 'released once the answer is durable');
  });

  it("a compaction's summary request is spent like any request: its usage counts in the session's totals and against the budget (session 48)", async () => {
    await twoTurnsUnderBudget();
    const spentOf = () => {
      const s = budgets().spent(w.root.id)!;
      return s.tokens.prompt + s.tokens.completion;
    };
    const before = tokensOf(w.root.id);
    const budgetBefore = spentOf();
    w.script.on('compaction', { text: 'S'.repeat(2_000 * 4) });
    const r = await w.root.compact(1);
    assert.equal(r.outcome, 'committed', r.error);
    const summary = w.server.requests.at(-1)!;
    const prompt = Math.ceil(Buffer.byteLength(summary.raw) / 4);
    assert.ok(
      tokensOf(w.root.id) - before >= 2_000 + prompt / 2,
      `the summary's ~${2_000 + prompt} tokens count in the session (moved ${tokensOf(w.root.id) - before})`,
    );
    assert.equal(spentOf() - budgetBefore, tokensOf(w.root.id) - before, 'and against its budget');
    const end = ofType(w.root.session.events, 'compaction/end').pop()!;
    assert.equal((end as { model?: string }).model, 'test-model', 'the compaction says which model it spent on');
  });

  for (const own of [undefined, 32_000]) {
    it(`8 parallel children each asked for 30k-token replies against a 40k budget spend at most 1.10 × 40k (maxTokens ${own ?? 'unset'}); what is reserved never exceeds what is left`, async () => {
      await setup(own ? { maxTokens: own } : {});
      const budget = 40_000;
      await w.t.h.setBudget(w.root.id, { maxTokens: budget });
      const tags = Array.from({ length: 8 }, (_, i) => `c${i}`);
      w.script.on('root', { toolCalls: tags.map(spawn) }, { text: 'root done' });
      // Each reply's head waits, so the children's requests are in flight together.
      for (const t of tags) w.script.on(t, { ...longReply(30_000), delayMs: 200 }, longReply(30_000));
      let worst = 0;
      onEvents(w.t.h, (_id, e: SessionEvent) => {
        if (e.type !== 'request/header') return;
        const s = budgets().spent(w.root.id)!;
        worst = Math.max(worst, s.tokens.prompt + s.tokens.completion + s.reservedTokens);
      });
      await w.root.accept('[[root]] fan out');
      await w.t.h.settle();

      const ids = [
        w.root.id,
        ...w.t.h.store
          .list()
          .filter((h) => h.parentSession === w.root.id)
          .map((h) => h.id),
      ];
      assert.equal(ids.length, 9, 'eight children ran');
      const spent = ids.reduce((n, id) => n + tokensOf(id), 0);
      assert.ok(spent <= 1.1 * budget, `spent ${spent} of a ${budget}-token budget (${(spent / budget).toFixed(2)}×)`);
      assert.ok(spent > budget / 2, `the budget was used (${spent})`);
      assert.ok(worst <= budget, `spent + reserved reached ${worst} of ${budget}`);
      if (own === undefined) assert.ok(w.server.maxInFlight > 1, `children's requests overlapped (${w.server.maxInFlight} at once)`);
      const childRequests = w.server.requests.filter((r) => /\[\[c\d\]\]/.test(JSON.stringify(r.body.messages)));
      assert.ok(childRequests.length > 0);
      for (const r of childRequests) assert.ok((r.body.max_tokens as number) <= (own ?? DEFAULT_COMPLETION_RESERVE), 'every child request carries its cap');
      const ends = await Promise.all(ids.slice(1).map(async (id) => stopReasons(await eventsOf(w.t.h, id)).pop()));
      // Unset: every child may take 4,096, so replies are cut there. 32,000: the first child's
      // 30k reply fits its cap and completes; the rest get what is left, or the budget stop.
      assert.ok(
        ends.every((r) => r === 'max-tokens' || r === 'budget' || r === 'completed'),
        `children end at their cap, on the budget, or done: ${ends.join(', ')}`,
      );
      if (own === undefined) assert.ok(ends.includes('max-tokens'), `replies were cut at their cap: ${ends.join(', ')}`);
      else assert.ok(ends.filter((r) => r === 'completed').length <= 1 && ends.includes('budget'), `one 30k reply fits, the rest cannot: ${ends.join(', ')}`);
    });
  }
});
