import assert from 'node:assert/strict';
import * as net from 'node:net';
import { normalizeUsage, OpenAICompatibleClient } from '../../../src/core/model/openai-client';
import type { ModelRequest, ModelStreamEvent, ToolSpec } from '../../../src/core/model/types';
import { ModelServer } from '../../support/model-server';

const base: ModelRequest = { model: 'test-model', system: 'sys', tools: [], messages: [{ role: 'user', content: 'hi', source: { kind: 'user' }, seq: 0 }] };

async function drain(it: AsyncIterable<ModelStreamEvent>): Promise<ModelStreamEvent[]> {
  const out: ModelStreamEvent[] = [];
  for await (const e of it) out.push(e);
  return out;
}
const text = (evs: ModelStreamEvent[]) => evs.map((e) => (e.type === 'text' ? e.delta : '')).join('');
const last = (evs: ModelStreamEvent[]) => evs[evs.length - 1];

describe('model: OpenAI-compatible client against the test server', () => {
  let server: ModelServer;
  let client: OpenAICompatibleClient;
  before(async () => {
    server = await ModelServer.start();
    client = new OpenAICompatibleClient({ baseURL: server.baseURL, apiKey: 'k', maxRetries: 0, timeoutMs: 5000 });
  });
  after(() => server.stop());
  beforeEach(() => server.reset());

  it('streams text, reasoning and usage, then done', async () => {
    server.enqueue({ text: 'hello world, streamed', reasoning: 'thinking...' });
    const evs = await drain(client.stream(base));
    assert.equal(text(evs), 'hello world, streamed');
    assert.equal(
      evs
        .filter((e) => e.type === 'reasoning')
        .map((e) => (e as { delta: string }).delta)
        .join(''),
      'thinking...',
    );
    const usage = evs.find((e) => e.type === 'usage');
    assert.ok(usage && usage.type === 'usage' && usage.usage.promptTokens > 0 && usage.usage.cacheHitTokens === 0);
    assert.deepEqual(last(evs), { type: 'done', finishReason: 'stop' });
    assert.equal(server.requests[0].body.stream, true);
    assert.deepEqual(server.requests[0].body.stream_options, { include_usage: true });
  });

  it('streams parallel tool calls as indexed deltas', async () => {
    server.enqueue({
      toolCalls: [
        { id: 'a', name: 'read_file', arguments: { path: 'x' } },
        { id: 'b', name: 'list_files', arguments: {} },
      ],
    });
    const evs = await drain(client.stream(base));
    const calls = new Map<number, string>();
    for (const e of evs) if (e.type === 'tool-call') calls.set(e.index, (calls.get(e.index) ?? '') + e.argumentsDelta);
    assert.deepEqual(
      [...calls.values()].map((a) => JSON.parse(a)),
      [{ path: 'x' }, {}],
    );
    assert.deepEqual(last(evs), { type: 'done', finishReason: 'tool_calls' });
  });

  const statusCases: [number, string, RegExp][] = [
    [401, 'auth', /API key/],
    [404, 'model-not-found', /model "test-model" was not found/],
    [429, 'rate-limit', /rate limiting/],
    [500, 'server', /failed \(500\)/],
    [503, 'server', /failed \(503\)/],
  ];
  for (const [status, code, msg] of statusCases) {
    it(`turns HTTP ${status} into a '${code}' error event that says what to do`, async () => {
      server.enqueue({ fault: { kind: 'status', status } });
      const evs = await drain(client.stream(base));
      const e = last(evs);
      assert.equal(e.type, 'error');
      assert.equal(e.type === 'error' && e.error.code, code);
      assert.match(e.type === 'error' ? e.error.message : '', msg);
      assert.equal(e.type === 'error' && e.error.midStream, false);
    });
  }

  it('reports a refused connection with the base URL', async () => {
    const port = await freePort();
    const c = new OpenAICompatibleClient({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: 'k', maxRetries: 0 });
    const e = last(await drain(c.stream(base)));
    assert.equal(e.type === 'error' && e.error.code, 'connection');
    assert.match(e.type === 'error' ? e.error.message : '', new RegExp(`127.0.0.1:${port}`));
  });

  it('keeps the partial text when the stream is cut, and says so', async () => {
    server.enqueue({ text: 'partial answer that will be cut', chunkSize: 4, fault: { kind: 'disconnect', afterChunks: 3 } });
    const evs = await drain(client.stream(base));
    assert.equal(text(evs), 'partial answer that will be cut'.slice(0, 12));
    const e = last(evs);
    assert.equal(e.type, 'error');
    assert.equal(e.type === 'error' && e.error.midStream, true);
  });

  it('turns malformed SSE into an error event, never a throw', async () => {
    server.enqueue({ fault: { kind: 'malformed-sse' } });
    const e = last(await drain(client.stream(base)));
    assert.equal(e.type, 'error');
  });

  it('times out a slow first byte', async () => {
    const c = new OpenAICompatibleClient({ baseURL: server.baseURL, apiKey: 'k', maxRetries: 0, timeoutMs: 200 });
    server.enqueue({ delayMs: 1500, text: 'late' });
    const e = last(await drain(c.stream(base)));
    assert.equal(e.type === 'error' && e.error.code, 'timeout');
  });

  it('retries a 500 before the body when retries are allowed', async () => {
    const c = new OpenAICompatibleClient({ baseURL: server.baseURL, apiKey: 'k', maxRetries: 1 });
    server.enqueue({ fault: { kind: 'status', status: 500 } }, { text: 'second time' });
    const evs = await drain(c.stream(base));
    assert.equal(text(evs), 'second time');
    assert.equal(server.requests.length, 2);
  });

  it('aborts with the signal', async () => {
    const ac = new AbortController();
    server.enqueue({ text: 'x'.repeat(200), chunkSize: 2, chunkDelayMs: 20 });
    const evs: ModelStreamEvent[] = [];
    for await (const e of client.stream({ ...base, signal: ac.signal })) {
      evs.push(e);
      if (evs.length === 3) ac.abort();
    }
    assert.equal(last(evs).type === 'error' && (last(evs) as { error: { code: string } }).error.code, 'aborted');
  });

  it('normalises DeepSeek and OpenAI cache usage', () => {
    assert.deepEqual(normalizeUsage({ prompt_tokens: 100, completion_tokens: 5, prompt_cache_hit_tokens: 64, prompt_cache_miss_tokens: 36 }), {
      promptTokens: 100,
      completionTokens: 5,
      cacheHitTokens: 64,
      cacheMissTokens: 36,
    });
    assert.deepEqual(normalizeUsage({ prompt_tokens: 100, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 80 } }), {
      promptTokens: 100,
      completionTokens: 5,
      cacheHitTokens: 80,
      cacheMissTokens: 20,
    });
    assert.deepEqual(normalizeUsage({ prompt_tokens: 10, completion_tokens: 1 }), { promptTokens: 10, completionTokens: 1 });
  });

  it('refuses token counts that are not whole and non-negative, naming the field', () => {
    assert.throws(() => normalizeUsage({ prompt_tokens: 1.5, completion_tokens: 1 }), /usage\.prompt_tokens = 1\.5/);
    assert.throws(() => normalizeUsage({ prompt_tokens: 10, completion_tokens: -1 }), /usage\.completion_tokens = -1/);
    assert.throws(() => normalizeUsage({ prompt_tokens: 10, completion_tokens: 1, prompt_tokens_details: { cached_tokens: '5' } }), /cached_tokens = "5"/);
  });

  it('serialises requests deterministically: tools sorted, equal input gives equal bytes', async () => {
    const tools: ToolSpec[] = [
      { name: 'write_file', description: 'w', parameters: { type: 'object' as const, properties: { b: { type: 'string' }, a: { type: 'string' } } } },
      { name: 'read_file', description: 'r', parameters: { type: 'object', properties: { path: { type: 'string' } } } },
    ];
    server.enqueue({ text: 'a' }, { text: 'b' });
    await drain(client.stream({ ...base, tools }));
    await drain(client.stream({ ...base, tools: [...tools].reverse() }));
    assert.equal(server.requests[0].raw, server.requests[1].raw);
    const names = (server.requests[0].body.tools as { function: { name: string } }[]).map((t) => t.function.name);
    assert.deepEqual(names, ['read_file', 'write_file']);
    assert.ok(server.requests[1].cacheHitTokens > 0, 'the second identical request hits the simulated prefix cache');
    const info = client.describe({ ...base, tools });
    assert.equal(info.bytes, Buffer.byteLength(server.requests[0].raw));
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
}
