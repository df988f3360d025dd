import assert from 'node:assert/strict';
import type { Agent } from '../../../src/core/agent/agent';
import { OpenAICompatibleClient } from '../../../src/core/model/openai-client';
import type { ModelClient } from '../../../src/core/model/types';
import type { SessionEvent } from '../../../src/core/session/events';
import { harnessPerTest, makeHarness } from '../../support/harness';
import { type Reply, rawChunk } from '../../support/model-server';

// Issue 10.4 and 10.5 (decision 0023): no reply can wedge a session. Each anomaly ends its
// turn `error` with a message that names it and a closed turn in the log (on disk too), and
// the next message to the same live agent works.

const lastOf = (evs: readonly SessionEvent[]) => evs[evs.length - 1];
const DONE = 'data: [DONE]\n\n';
const usageChunk = (usage: object) => ({ id: 'chatcmpl-test', object: 'chat.completion.chunk', created: 0, model: 'test-model', choices: [], usage });

describe('agent: a reply that breaks the wire contract ends its turn, and the next message works', () => {
  const w = harnessPerTest();

  /** The first message meets `anomaly`; returns its closed turn/end after a second message completed in the same agent. */
  async function anomalyThenNextWorks(anomaly: Reply, named: RegExp, agent?: Agent): Promise<Extract<SessionEvent, { type: 'turn/end' }>> {
    w.server.enqueue(anomaly, { text: 'all good now' });
    const a = agent ?? (await w.t.h.createSession());
    await a.accept('first');
    await a.idle();
    const end = lastOf(a.session.events);
    assert.ok(end.type === 'turn/end', `the turn is closed (last event: ${end.type})`);
    assert.equal(end.stopReason, 'error');
    assert.match(end.error ?? '', named);
    assert.equal(a.session.openTurnId, null);
    assert.deepEqual(await w.t.h.store.readEvents(a.id), [...a.session.events], 'the closed turn is on disk');
    assert.equal(a.lastTurn?.stopReason, 'error');

    await a.accept('second');
    await a.idle();
    assert.equal(a.lastTurn?.stopReason, 'completed', a.lastTurn?.error);
    const reply = a.session.events.filter((e) => e.type === 'assistant/message').pop();
    assert.ok(reply?.type === 'assistant/message' && reply.text === 'all good now');
    return end;
  }

  it('a numeric tool-call id', async () => {
    await anomalyThenNextWorks(
      {
        raw: [
          rawChunk({ tool_calls: [{ index: 0, id: 123, type: 'function', function: { name: 'list_files', arguments: '{}' } }] }),
          rawChunk({}, 'tool_calls'),
          DONE,
        ],
      },
      /cannot accept: a tool call id that is not text \(123\)/,
    );
  });

  it('a fractional token count in usage', async () => {
    const end = await anomalyThenNextWorks(
      {
        raw: [
          rawChunk({ content: 'the answer' }),
          rawChunk({}, 'stop'),
          `data: ${JSON.stringify(usageChunk({ prompt_tokens: 12.5, completion_tokens: 3 }))}\n\n`,
          DONE,
        ],
      },
      /token count .*usage\.prompt_tokens = 12\.5/,
    );
    assert.equal(end.errorCode, 'bad-response');
  });

  it('a negative token count in usage', async () => {
    await anomalyThenNextWorks(
      {
        raw: [
          rawChunk({ content: 'the answer' }),
          rawChunk({}, 'stop'),
          `data: ${JSON.stringify(usageChunk({ prompt_tokens: 10, completion_tokens: -4 }))}\n\n`,
          DONE,
        ],
      },
      /token count .*usage\.completion_tokens = -4/,
    );
  });

  it('tool arguments nested 200,000 deep: refused, never run', async () => {
    const deep = `{"path":${'['.repeat(200_000)}${']'.repeat(200_000)}}`;
    const agent = await w.t.h.createSession();
    await anomalyThenNextWorks(
      { toolCalls: [{ id: 'deep', name: 'read_file', arguments: deep }], chunkSize: 1 << 20 },
      /arguments of read_file nested deeper than 64 levels/,
      agent,
    );
    assert.ok(
      !agent.session.events.some((e) => e.type === 'tool/result' || (e.type === 'assistant/message' && e.toolCalls)),
      'the call is neither recorded nor run',
    );
  });

  it('an oversized stream: cut at the byte limit, nothing of it kept', async () => {
    await w.t.cleanup();
    const client = new OpenAICompatibleClient({ baseURL: w.server.baseURL, apiKey: 'test', maxRetries: 0, maxReplyBytes: 1024 * 1024 });
    w.t = await makeHarness(w.server, { model: { client, name: 'test-model' } });
    const agent = await w.t.h.createSession();
    await anomalyThenNextWorks({ text: 'x'.repeat(3 * 1024 * 1024), chunkSize: 64 * 1024 }, /a reply larger than 1 MiB\b.*Nothing of it was kept/, agent);
    const texts = agent.session.events.filter((e) => e.type === 'assistant/message').map((e) => e.type === 'assistant/message' && e.text);
    assert.deepEqual(texts, ['all good now'], 'the oversized text never reaches the history');
  });

  it('a stream that ends without a finish reason is recorded as cut, not completed', async () => {
    const agent = await w.t.h.createSession();
    const end = await anomalyThenNextWorks(
      { raw: [rawChunk({ role: 'assistant', content: '' }), rawChunk({ content: 'half an ans' }), DONE] },
      /ended without a finish reason/,
      agent,
    );
    assert.equal(end.errorCode, 'cut');
    const kept = agent.session.events.find((e) => e.type === 'assistant/message');
    assert.ok(kept?.type === 'assistant/message' && kept.text === 'half an ans', 'the partial answer is kept');
  });

  it('tolerates a tool name repeated in every chunk: the call runs once, under its name', async () => {
    w.server.enqueue(
      {
        raw: [
          rawChunk({ tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'list_files', arguments: '' } }] }),
          rawChunk({ tool_calls: [{ index: 0, function: { name: 'list_files', arguments: '{}' } }] }),
          rawChunk({ tool_calls: [{ index: 0, function: { name: 'list_files', arguments: '' } }] }),
          rawChunk({}, 'tool_calls'),
          DONE,
        ],
      },
      { text: 'listed' },
    );
    const agent = await w.t.h.createSession();
    await agent.accept('list');
    await agent.idle();
    assert.equal(agent.lastTurn?.stopReason, 'completed');
    const call = agent.session.events.find((e) => e.type === 'assistant/message' && e.toolCalls?.length);
    assert.ok(call?.type === 'assistant/message');
    assert.deepEqual(call.toolCalls, [{ id: 'c1', name: 'list_files', arguments: '{}' }]);
    const result = agent.session.events.find((e) => e.type === 'tool/result');
    assert.ok(result?.type === 'tool/result' && !result.isError && result.name === 'list_files', JSON.stringify(result));
  });
});

describe('agent: any failure after turn/start closes the turn', () => {
  const w = harnessPerTest();

  it('a client whose stream throws (breaking its never-throw contract) ends the turn error, and the next message works', async () => {
    await w.t.cleanup();
    const real = new OpenAICompatibleClient({ baseURL: w.server.baseURL, apiKey: 'test', maxRetries: 0 });
    let throwOnce = true;
    const client: ModelClient = {
      provider: 'throws-once',
      describe: (req) => real.describe(req),
      async *stream(req) {
        if (!throwOnce) return yield* real.stream(req);
        throwOnce = false;
        yield { type: 'text', delta: 'so far' };
        throw new Error('socket exploded');
      },
    };
    w.t = await makeHarness(w.server, { model: { client, name: 'test-model' } });
    w.server.enqueue({ text: 'fine again' });
    const agent = await w.t.h.createSession();
    await agent.accept('first');
    await agent.idle();
    const end = lastOf(agent.session.events);
    assert.ok(end.type === 'turn/end' && end.stopReason === 'error' && end.errorCode === 'internal', JSON.stringify(end));
    assert.match(end.error ?? '', /Arbor could not finish this turn: socket exploded/);
    await agent.accept('second');
    await agent.idle();
    assert.equal(agent.lastTurn?.stopReason, 'completed');
  });
});

describe('agent: a model that goes quiet mid-stream ends the turn within the timeout', () => {
  const w = harnessPerTest();
  const TIMEOUT_MS = 1000;
  // Generous for a loaded machine: the point is that it ends, not how fast.
  const BOUND_MS = 10_000;

  beforeEach(async () => {
    await w.t.cleanup();
    w.t = await makeHarness(w.server, { model: { baseURL: w.server.baseURL, name: 'test-model', apiKey: 'test', maxRetries: 0, timeoutMs: TIMEOUT_MS } });
  });

  const cases: [string, Reply][] = [
    ['goes silent after its first chunk', { text: 'hello there', chunkSize: 5, fault: { kind: 'stall', afterChunks: 1 } }],
    ['only drips empty deltas after its first chunk', { text: 'hello there', chunkSize: 5, fault: { kind: 'stall', afterChunks: 1, dripEveryMs: 200 } }],
  ];
  for (const [what, reply] of cases) {
    it(`a stream that ${what}`, async () => {
      w.server.enqueue(reply, { text: 'back again' });
      const agent = await w.t.h.createSession();
      const t0 = Date.now();
      await agent.accept('first');
      await agent.idle();
      assert.ok(Date.now() - t0 < BOUND_MS, `ended after ${Date.now() - t0} ms`);
      const end = lastOf(agent.session.events);
      assert.ok(end.type === 'turn/end' && end.stopReason === 'error' && end.errorCode === 'stalled', JSON.stringify(end));
      assert.match(end.error ?? '', /The model stopped sending for 1 s/);
      const kept = agent.session.events.find((e) => e.type === 'assistant/message');
      assert.ok(kept?.type === 'assistant/message' && kept.text === 'hello', 'the partial answer is kept');

      await agent.accept('second');
      await agent.idle();
      assert.equal(agent.lastTurn?.stopReason, 'completed');
    });
  }
});
