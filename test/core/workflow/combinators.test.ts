import assert from 'node:assert/strict';
import type { SessionEvent } from '../../../src/core/session/events';
import { until } from '../../support/harness';
import type { ChatBody } from '../../support/model-server';
import { dataOf, workflowWorld } from './helpers';

const agentEvents = (events: readonly SessionEvent[]) => events.filter((e) => e.type === 'workflow/agent').map(dataOf);

/** The most children the run's events ever had started and not done: its running count at its highest. */
function mostRunning(events: readonly SessionEvent[]): number {
  let running = 0;
  let most = 0;
  for (const d of agentEvents(events)) {
    running += d.status === 'started' ? 1 : -1;
    most = Math.max(most, running);
  }
  return most;
}

describe('workflow: agent(), parallel(), pipeline() and the limits', () => {
  const x = workflowWorld();

  it('parallel() keeps the thunks’ order whatever finishes first, runs at most `concurrency` children at once, and starts them FIFO', async () => {
    // Later tasks answer sooner: completion order is the reverse of call order.
    x.replies((p) => ({ text: `did ${p}`, delayMs: (8 - Number(p.split(' ')[1])) * 15 }));
    const o = await x.run('return await parallel([0,1,2,3,4,5,6,7].map((i) => () => agent("task " + i, { label: "t" + i })));', { concurrency: 3 });
    assert.equal(o.status, 'completed', o.error);
    assert.deepEqual(
      JSON.parse(o.resultJson!),
      [0, 1, 2, 3, 4, 5, 6, 7].map((i) => `did task ${i}`),
    );
    assert.equal(mostRunning(x.root.session.events), 3, 'never more than 3 children at once, and the slots were used');
    const starts = agentEvents(x.root.session.events)
      .filter((d) => d.status === 'started')
      .map((d) => d.index);
    assert.deepEqual(starts, [0, 1, 2, 3, 4, 5, 6, 7], 'children start in call order (FIFO slots)');
    assert.equal(x.w.t.h.store.children(x.root.id).length, 8, 'each agent() is a real child of the parent');
  });

  it('each agent() is a child at its call, up to twice the concurrency: past the concurrency it waits queued at the run’s gate, asks nothing, and a Stop there ends it alone (decision 0102)', async () => {
    const isChild = (b: ChatBody) => b.messages.some((m) => m.role === 'user' && String(m.content ?? '').startsWith('[Arbor runtime] You are a subagent'));
    x.replies((p) => ({ text: `did ${p}`, delayMs: 300 }));
    const running = x.run('return await parallel([0,1,2,3,4].map((i) => () => agent("hold " + i, { label: "h" + i })));', { concurrency: 2 });
    const h = x.w.t.h;
    const kids = () => h.store.children(x.root.id).map((c) => c.id);
    const titles = (ids: string[]) => ids.map((id) => h.store.header(id)?.title).join(' ');
    const queued = () => kids().filter((id) => h.subagents.liveOf(id).queued);
    await until(() => kids().length === 4 && queued().length === 2, 5_000);
    const asked = () => x.w.server.requests.filter((r) => isChild(r.body)).length;
    await until(() => asked() === 2, 5_000);
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(asked(), 2, 'only the two holding a slot asked the model');
    assert.equal(titles(queued()), 'h2 h3', 'the next wave waits queued');
    assert.equal(kids().length, 4, 'h4 is not created while four exist (twice the concurrency)');
    const started = () => agentEvents(x.root.session.events).filter((d) => d.status === 'started').length;
    assert.equal(started(), 2, 'a queued child has no "started" yet');
    const victim = queued().find((id) => h.store.header(id)?.title === 'h3');
    assert.ok(victim);
    await h.interruptSubtree(victim);
    await until(() => !h.subagents.liveOf(victim).queued, 5_000);
    const o = await running;
    assert.equal(o.status, 'completed', o.error);
    assert.deepEqual(JSON.parse(o.resultJson!), ['did hold 0', 'did hold 1', 'did hold 2', null, 'did hold 4']);
    assert.equal(asked(), 4, 'the stopped child never asked the model');
    assert.equal(mostRunning(x.root.session.events), 2, 'the running count never read more than the concurrency, the stopped child included');
    const mine = agentEvents(x.root.session.events).filter((d) => d.childId === victim);
    assert.deepEqual(
      mine.map((d) => `${String(d.status)}${d.stopReason ? `:${String(d.stopReason)}` : ''}`),
      ['started', 'done:interrupted'],
    );
    assert.equal(dataOf(x.events('workflow/end')[0]).agents, 5);
    assert.equal(kids().length, 5);
    const log = await h.store.inspect(victim);
    assert.equal(log.openTurnId, null, 'its turn ended');
  });

  it('pipeline() sends each item through the stages in order and returns the last stage’s values in item order', async () => {
    const o = await x.run(
      'return await pipeline(["a", "b", "c"], (v) => agent("one " + v, { label: "1" + v.slice(-1) }), (v, i) => agent("two " + v + " #" + i, { label: "2" + v.slice(-1) }), async (v) => v.toUpperCase());',
      { concurrency: 2 },
    );
    assert.equal(o.status, 'completed', o.error);
    assert.deepEqual(JSON.parse(o.resultJson!), ['DID TWO DID ONE A #0', 'DID TWO DID ONE B #1', 'DID TWO DID ONE C #2']);
    // Per item, its stage-one child finished before its stage-two child started.
    const order = agentEvents(x.root.session.events).map((d) => `${String(d.status)}:${String(d.label)}`);
    for (const item of ['a', 'b', 'c']) assert.ok(order.indexOf(`done:1${item}`) < order.indexOf(`started:2${item}`), order.join(' '));
    assert.equal(x.w.t.h.store.children(x.root.id).length, 6);
  });

  it('agent() at cap + 1 throws AGENT_CAP: the cap’s children ran to the end and none started after', async () => {
    const o = await x.run('const out = []; for (let i = 0; i < 5; i++) out.push(await agent("task " + i)); return out;', { maxTotalAgents: 3 });
    assert.equal(o.status, 'failed');
    assert.equal(o.code, 'AGENT_CAP');
    assert.equal(o.agents, 3);
    const done = agentEvents(x.root.session.events).filter((d) => d.status === 'done');
    assert.deepEqual(
      done.map((d) => d.stopReason),
      ['completed', 'completed', 'completed'],
    );
    assert.equal(x.w.t.h.store.children(x.root.id).length, 3, 'no fourth child was created');
    const end = dataOf(x.events('workflow/end')[0]);
    assert.equal(end.code, 'AGENT_CAP');
  });

  it('the model may lower maxTotalAgents, never raise it past the deployment’s ceiling', async () => {
    const o = await x.run('return 1;', { maxTotalAgents: 1e6 });
    assert.equal(o.status, 'completed');
    assert.equal((dataOf(x.events('workflow/start')[0]).limits as { maxTotalAgents: number }).maxTotalAgents, 1000);
  });

  it('a syntax error is SCRIPT_PARSE with the script’s line, before anything starts', async () => {
    const o = await x.run('const a = 1;\nconst b = 2;\nconst c = ;\nreturn a;');
    assert.equal(o.code, 'SCRIPT_PARSE');
    assert.equal(o.line, 3);
    assert.equal(x.root.session.length, 0, 'nothing was written: no run started');
    assert.deepEqual(x.engine.active(), []);
  });

  it('a fatal error passes up through nested combinators instead of becoming null', async () => {
    const o = await x.run(
      'const r = await parallel([() => agent("fine"), () => pipeline([1], async () => parallel([() => agent("x", { bogus: true })]))]);\nreturn r;',
    );
    assert.equal(o.status, 'failed');
    assert.equal(o.code, 'BAD_AGENT_REQUEST');
    assert.match(o.error!, /unknown option bogus/);
  });

  it('a child that ends in error resolves to null; the run goes on', async () => {
    x.replies((p) => (p.includes('bad') ? { fault: { kind: 'status', status: 400, message: 'nope' } } : { text: `did ${p}` }));
    const o = await x.run('return await parallel([() => agent("good"), () => agent("bad")]);');
    assert.equal(o.status, 'completed', o.error);
    assert.deepEqual(JSON.parse(o.resultJson!), ['did good', null]);
  });

  it('schema maps to a structured result: agent() resolves to what the child submitted', async () => {
    x.replies((p, body) =>
      body.messages[body.messages.length - 1].role === 'tool'
        ? { text: 'submitted' }
        : { toolCalls: [{ name: 'submit_result', arguments: { verdict: `ok ${p}` } }] },
    );
    const o = await x.run('return await agent("check", { schema: { type: "object", properties: { verdict: { type: "string" } }, required: ["verdict"] } });');
    assert.equal(o.status, 'completed', o.error);
    assert.deepEqual(JSON.parse(o.resultJson!), { verdict: 'ok check' });
  });

  it('children carry their run in their descriptor (the tree puts them under the run node)', async () => {
    const o = await x.run('return await agent("one", { label: "solo" });');
    const child = x.w.t.h.store.children(x.root.id)[0];
    const s = await x.w.t.h.store.inspect(child.id);
    const d = s.events.find((e) => e.type === 'subagent/descriptor') as unknown as { workflow: unknown; mode: string };
    assert.deepEqual(d.workflow, { runId: o.runId, index: 0 });
    assert.equal(d.mode, 'one-shot');
  });

  it('a script that returns while agents still run: each gets its workflow/agent done (cancelled) and the run reads AGENTS_UNFINISHED, not completed', async () => {
    // Two slow agents are started and never awaited; the script returns once a fast one answered.
    x.replies((p) => (p.startsWith('slow') ? { text: `did ${p}`, delayMs: 3000 } : { text: `did ${p}` }));
    const o = await x.run('agent("slow 1", { label: "s1" }); agent("slow 2", { label: "s2" }); await agent("fast", { label: "f" }); return "early";', {
      concurrency: 3,
    });
    assert.equal(o.status, 'failed');
    assert.equal(o.code, 'AGENTS_UNFINISHED');
    assert.match(o.error!, /2 agents were still running; they were cancelled/);
    assert.equal(JSON.parse(o.resultJson!), 'early', 'the result the script gave is kept');
    const end = dataOf(x.events('workflow/end')[0]);
    assert.equal(end.status, 'failed');
    assert.equal(end.agents, 3);
    // Every child the end counts has both its events, written before the end.
    const evs = agentEvents(x.root.session.events);
    const byLabel = (label: string) => evs.filter((d) => d.label === label).map((d) => `${String(d.status)}:${String(d.stopReason ?? '')}`);
    assert.deepEqual(byLabel('f'), ['started:', 'done:completed']);
    assert.deepEqual(byLabel('s1'), ['started:', 'done:cancelled']);
    assert.deepEqual(byLabel('s2'), ['started:', 'done:cancelled']);
    const endSeq = x.events('workflow/end')[0].seq;
    assert.ok(x.events('workflow/agent').every((e) => e.seq < endSeq));
    const children = x.w.t.h.store.children(x.root.id).map((c) => c.id);
    assert.deepEqual(new Set(evs.map((d) => d.childId)), new Set(children), 'one pair of events per child in the tree');
  });
});
