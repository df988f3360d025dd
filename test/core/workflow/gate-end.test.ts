import assert from 'node:assert/strict';
import { until } from '../../support/harness';
import type { ChatBody } from '../../support/model-server';
import { dataOf, workflowWorld } from './helpers';

const isChild = (b: ChatBody) => b.messages.some((m) => m.role === 'user' && String(m.content ?? '').startsWith('[Arbor runtime] You are a subagent'));

// Found in review (decision 0102): a child queued at the run's gate when the run ends, and a
// disposal that fails while a queued child waits for room.
describe('workflow: a child queued at the run’s gate when the run ends', () => {
  const x = workflowWorld();

  it('never asks the model after the run ended (gate released by slots.close, child not yet cancelled)', async () => {
    x.replies((p) => ({ text: `did ${p}`, delayMs: 1500 }));
    const ac = new AbortController();
    const running = x.run('return await parallel([0,1,2,3,4,5,6,7].map((i) => () => agent("hold " + i, { label: "h" + i })));', { concurrency: 4 }, ac.signal);
    const h = x.w.t.h;
    const kids = () => h.store.children(x.root.id).map((c) => c.id);
    const queued = () => kids().filter((id) => h.subagents.liveOf(id).queued);
    const asked = () => x.w.server.requests.filter((r) => isChild(r.body)).length;
    await until(() => kids().length === 8 && queued().length === 4 && asked() === 4, 10_000);
    const before = asked();
    ac.abort(); // the parent's turn is interrupted: Run.end('interrupted')
    const o = await running;
    await new Promise((r) => setTimeout(r, 200));
    const started = x
      .events('workflow/agent')
      .map(dataOf)
      .filter((d) => d.status === 'started').length;
    assert.equal(o.status, 'interrupted');
    assert.equal(started, 8);
    const headers: string[] = [];
    for (const id of kids())
      if ((await h.store.readEvents(id)).filter((e) => e.type === 'request/header').length > 0) headers.push(h.store.header(id)?.title ?? id);
    assert.equal(asked(), before, `queued children asked the model after the run ended: ${asked() - before} extra request(s)`);
    assert.equal(headers.length, 4, `children with a request/header: ${headers.join(' ')}`);
  });
});

describe('workflow: a running child whose disposal fails while a queued one waits for room', () => {
  const x = workflowWorld();

  it('the run still ends (no hang on roomFor / end())', async () => {
    x.replies((p) => ({ text: `did ${p}`, delayMs: 1500 }));
    const h = x.w.t.h;
    // A disposal that fails once (its writer's flush hit a store error), injected at the runtime's residency.
    const residency = (h.subagents as unknown as { residency: { disposeOneShot(id: string): Promise<void> } }).residency;
    const real = residency.disposeOneShot.bind(residency);
    let failed = false;
    residency.disposeOneShot = async (id: string) => {
      if (!failed) {
        failed = true;
        await real(id);
        throw new Error('EIO: flush failed');
      }
      return real(id);
    };
    const ac = new AbortController();
    const running = x.run('return await parallel([0,1].map((i) => () => agent("hold " + i, { label: "h" + i })));', { concurrency: 1 }, ac.signal);
    const kids = () => h.store.children(x.root.id).map((c) => c.id);
    const queued = () => kids().filter((id) => h.subagents.liveOf(id).queued);
    await until(() => kids().length === 2 && queued().length === 1, 10_000);
    ac.abort();
    const o = await Promise.race([running, new Promise<'hung'>((r) => setTimeout(() => r('hung'), 5_000))]);
    residency.disposeOneShot = real;
    assert.notEqual(o, 'hung', 'Run.end() never wrote workflow/end: the queued child waits in roomFor for running.size === 0 forever');
  });
});
