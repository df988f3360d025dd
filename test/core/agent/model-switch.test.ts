import assert from 'node:assert/strict';
import { makeHarness, type TestHarness } from '../../support/harness';
import { ModelServer } from '../../support/model-server';

// A new key, endpoint or model name (what a user does when pointing Arbor at Ollama or
// OpenAI) reaches every agent at its next request: nothing is closed, no turn is cut.
describe('harness: changing the model while agents live', () => {
  let a: ModelServer;
  let b: ModelServer;
  let t: TestHarness;
  before(async () => {
    a = await ModelServer.start();
    b = await ModelServer.start();
  });
  after(async () => {
    await a.stop();
    await b.stop();
  });
  beforeEach(async () => {
    a.reset();
    b.reset();
    t = await makeHarness(a);
  });
  afterEach(() => t.cleanup());

  it('sends the next request to the new endpoint, key and model name; the store stays open', async () => {
    a.enqueue({ text: 'from A' });
    const agent = await t.h.createSession();
    await agent.accept('first');
    await agent.idle();
    assert.equal(a.requests.length, 1);
    assert.equal(a.requests[0].body.model, 'test-model');

    t.h.setModel({ baseURL: b.baseURL, name: 'other-model', apiKey: 'key-2', maxRetries: 0 });
    b.enqueue({ text: 'from B' });
    await agent.accept('second');
    await agent.idle();
    assert.equal(a.requests.length, 1, 'nothing more went to the old endpoint');
    assert.equal(b.requests.length, 1);
    assert.equal(b.requests[0].body.model, 'other-model');
    assert.equal(b.requests[0].headers.authorization, 'Bearer key-2');
    // The conversation carried over: B saw the first exchange.
    assert.deepEqual(
      b.requests[0].body.messages.filter((m) => m.role !== 'system').map((m) => m.content),
      ['first', 'from A', 'second'],
    );
    const texts = agent.session.events.flatMap((e) => (e.type === 'assistant/message' ? [`${e.model}:${e.text}`] : []));
    assert.deepEqual(texts, ['test-model:from A', 'other-model:from B']);
    // A new conversation after the change uses it too, and the store is the same one.
    b.enqueue({ text: 'fresh' });
    const other = await t.h.createSession();
    await other.accept('hello');
    await other.idle();
    assert.equal(b.requests.length, 2);
    assert.equal(t.h.store.list().length, 2);
  });

  it('lets a request already streaming finish on the old client; the next step of that turn uses the new one', async () => {
    a.enqueue({
      text: 'slow answer from A that streams for a while',
      chunkSize: 2,
      chunkDelayMs: 15,
      toolCalls: [{ name: 'list_files', arguments: { path: '.' } }],
    });
    b.enqueue({ text: 'B finished the turn' });
    const agent = await t.h.createSession();
    await agent.accept('go');
    while (a.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
    t.h.setModel({ baseURL: b.baseURL, name: 'other-model', apiKey: 'k', maxRetries: 0 });
    await agent.idle();
    const end = agent.session.events.filter((e) => e.type === 'turn/end').pop();
    assert.equal(end?.type === 'turn/end' && end.stopReason, 'completed');
    const msgs = agent.session.events.flatMap((e) => (e.type === 'assistant/message' ? [e] : []));
    assert.equal(msgs[0].model, 'test-model');
    assert.equal(msgs[0].text, 'slow answer from A that streams for a while');
    assert.equal(msgs[1].model, 'other-model');
    assert.equal(b.requests.length, 1, 'the tool-call follow-up went to the new endpoint');
  });
});
