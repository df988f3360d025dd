import assert from 'node:assert/strict';
import { DEMO_GOAL, demoResponder } from '../support/demo-script';
import { harnessPerTest } from '../support/harness';
import { ModelServer } from '../support/model-server';

// A cancel-aware answer: when the user stops a scene the scripted model stops streaming (the
// server notices its client left), and the next prompt is answered as usual.

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until(what: string, ms: number, pred: () => boolean): Promise<void> {
  const deadline = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error(`${what} (not within ${ms} ms)`);
    await sleep(10);
  }
}

describe('demo: the model server stops a reply whose client left', () => {
  let server: ModelServer;
  beforeEach(async () => (server = await ModelServer.start()));
  afterEach(() => server.stop());

  const ask = (signal: AbortSignal) =>
    fetch(`${server.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
      signal,
    });

  it('mid-stream: it writes and waits no more once the connection is gone', async () => {
    // 100 chunks, 50 ms apart: five seconds of streaming unless the stop is heard.
    server.enqueue({ text: 'x'.repeat(800), chunkSize: 8, chunkDelayMs: 50 });
    const stop = new AbortController();
    const res = await ask(stop.signal);
    const reader = res.body!.getReader();
    await reader.read();
    await until('the reply to be streaming', 2_000, () => server.streaming === 1);
    const stopped = Date.now();
    stop.abort();
    await until('the reply to stop after its client left', 1_000, () => server.streaming === 0);
    assert.ok(Date.now() - stopped < 1_000);
    server.enqueue({ text: 'next' });
    const next = await fetch(`${server.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'again' }] }),
    });
    assert.equal(((await next.json()) as { choices: { message: { content: string } }[] }).choices[0].message.content, 'next');
  });

  it('before the first byte: a reply waiting out its delay ends when its client leaves', async () => {
    server.enqueue({ text: 'late', delayMs: 5_000 });
    const stop = new AbortController();
    const pending = ask(stop.signal).catch((err: Error) => err);
    await until('the reply to be waiting', 2_000, () => server.streaming === 1);
    stop.abort();
    await pending;
    await until('the delayed reply to end after its client left', 1_000, () => server.streaming === 0);
  });
});

describe('demo: a paced scene stopped mid-way, then the next prompt', () => {
  const w = harnessPerTest();

  it('the workflow scene: Stop while its agents stream ends the run and the model stops streaming; the next prompt is answered', async () => {
    // About 1.5 s per agent: long enough to stop mid-way, short enough for a test.
    w.server.setFallback(demoResponder({ stepMs: 1_500 }));
    const root = await w.t.h.createSession();
    await root.accept('run a workflow', { kind: 'user' });
    // Requests of workflow agents whose task starts so (the task is an agent's last user message).
    const asked = (task: string) =>
      w.server.requests.filter((r) => String(r.body.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '').startsWith(task)).length;
    await until('the three review agents to be asked, one still streaming', 20_000, () => asked('WORKFLOW: review') === 3 && w.server.streaming >= 1);
    await w.t.h.interruptSubtree(root.id);
    await until('the scripted model to stop streaming', 2_000, () => w.server.streaming === 0);
    // The run is closed just after the turn (as on any interrupt).
    await until('the run to be closed', 10_000, () => root.session.events.some((e) => e.type === 'workflow/end'));
    await w.t.h.settle();
    assert.equal(root.lastTurn?.stopReason, 'interrupted');
    const end = root.session.events.find((e) => e.type === 'workflow/end') as unknown as { data: { status: string } };
    assert.equal(end.data.status, 'interrupted', 'the run was stopped before its summary');
    assert.equal(asked('WORKFLOW: summarise'), 0, 'the summary agent was never asked');

    await root.accept('survey the workspace', { kind: 'user' });
    await w.t.h.settle();
    assert.equal(root.lastTurn?.stopReason, 'completed');
    const texts = root.session.events.flatMap((e) => (e.type === 'assistant/message' && e.text ? [e.text] : []));
    assert.ok(
      texts.some((t) => t.startsWith('Started it.')),
      `the next prompt started its scene: ${JSON.stringify(texts)}`,
    );
  });

  it('the goal scene: Stop during a paced round pauses the goal and the next prompt is answered', async () => {
    w.server.setFallback(demoResponder({ stepMs: 1_500 }));
    const root = await w.t.h.createSession({ title: DEMO_GOAL.prompt });
    await w.t.h.goals.set(root.id, DEMO_GOAL.prompt, DEMO_GOAL.goalRounds);
    await until('round 1 to be under way', 10_000, () => w.server.streaming === 1);
    await w.t.h.interruptSubtree(root.id);
    await until('the scripted model to stop streaming', 2_000, () => w.server.streaming === 0);
    await w.t.h.settle();
    const goals = root.session.events.flatMap((e) => (e.type === 'goal/change' && e.goal ? [e.goal] : []));
    assert.equal(goals.at(-1)?.phase, 'paused', `the goal after the stop: ${JSON.stringify(goals.at(-1))}`);
    assert.equal(goals.filter((g) => g.operation === 'round').length, 1, 'no second round started');
    await root.accept('hello', { kind: 'user' });
    await w.t.h.settle();
    const texts = root.session.events.flatMap((e) => (e.type === 'assistant/message' && e.text ? [e.text] : []));
    assert.match(texts.at(-1) ?? '', /^Arbor demo/);
  });
});
