import assert from 'node:assert/strict';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as zlib from 'node:zlib';
import { OpenAICompatibleClient } from '../../../src/core/model/openai-client';
import type { ModelRequest, ModelStreamEvent } from '../../../src/core/model/types';

// The client's own wire handling (decision 0094), against a raw HTTP server that answers each
// request as the test says: what a provider says in an error body, an error inside the stream,
// a server's retry-after, a compressed stream, a consumer that stops early, a bad base URL.
const base: ModelRequest = { model: 'm', system: 'sys', tools: [], messages: [{ role: 'user', content: 'hi', source: { kind: 'user' }, seq: 0 }] };
const chunk = (delta: object, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const ok = (text: string) => `${chunk({ role: 'assistant', content: text })}${chunk({}, 'stop')}data: [DONE]\n\n`;

async function drain(it: AsyncIterable<ModelStreamEvent>): Promise<ModelStreamEvent[]> {
  const out: ModelStreamEvent[] = [];
  for await (const e of it) out.push(e);
  return out;
}
const last = (evs: ModelStreamEvent[]) => evs[evs.length - 1];
const errorOf = (evs: ModelStreamEvent[]) => {
  const e = last(evs);
  if (e.type !== 'error') throw new Error(`the stream ended ${JSON.stringify(e)}, not with an error`);
  return e.error;
};

describe('model: the client on the wire (node:http, its own SSE reader)', () => {
  type Answer = (req: http.IncomingMessage, res: http.ServerResponse) => void;
  let server: http.Server;
  let url = '';
  let answers: Answer[] = [];
  let requests: { headers: http.IncomingHttpHeaders; body: string }[] = [];
  let closed: Promise<void> = Promise.resolve();

  before(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        requests.push({ headers: req.headers, body });
        closed = new Promise((r) => res.on('close', () => r()));
        const answer = answers.shift();
        if (answer) answer(req, res);
        else res.writeHead(500).end('no answer scripted');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));
  beforeEach(() => {
    answers = [];
    requests = [];
  });
  const client = (over: Partial<ConstructorParameters<typeof OpenAICompatibleClient>[0]> = {}) =>
    new OpenAICompatibleClient({ baseURL: url, apiKey: 'sk-test', maxRetries: 0, timeoutMs: 5_000, ...over });
  const sse =
    (text: string, headers: http.OutgoingHttpHeaders = {}): Answer =>
    (_q, res) =>
      res.writeHead(200, { 'content-type': 'text/event-stream', ...headers }).end(text);

  it('posts the body it described to /chat/completions with the key as a bearer token', async () => {
    answers.push(sse(ok('hello')));
    const c = client();
    const info = c.describe(base);
    const evs = await drain(c.stream(base));
    assert.deepEqual(last(evs), { type: 'done', finishReason: 'stop' });
    assert.equal(requests[0].headers.authorization, 'Bearer sk-test');
    assert.equal(requests[0].headers['content-type'], 'application/json');
    assert.equal(Buffer.byteLength(requests[0].body), info.bytes, 'the bytes describe() measured are the bytes sent');
    assert.equal(JSON.parse(requests[0].body).stream, true);
  });

  it("an error status says what the provider said: its error's message, else the body's text", async () => {
    answers.push((_q, res) =>
      res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'context too long', type: 'invalid_request_error' } })),
    );
    let e = errorOf(await drain(client().stream(base)));
    assert.equal(e.code, 'bad-request');
    assert.equal(e.status, 400);
    assert.match(e.message, /rejected the request \(400\)\. Provider said: 400 context too long$/);
    answers.push((_q, res) => res.writeHead(502).end('bad gateway from the proxy'));
    e = errorOf(await drain(client().stream(base)));
    assert.match(e.message, /failed \(502\)\. Retry later\. Provider said: 502 bad gateway from the proxy$/);
    answers.push((_q, res) => res.writeHead(403).end());
    assert.match(errorOf(await drain(client().stream(base))).message, /Provider said: 403 status code \(no body\)$/);
  });

  it('an error inside the stream ends it bad-response with its message, the text before it kept', async () => {
    answers.push(sse(`${chunk({ role: 'assistant', content: 'par' })}data: ${JSON.stringify({ error: { message: 'overloaded mid-way' } })}\n\n`));
    const evs = await drain(client().stream(base));
    assert.deepEqual(evs[0], { type: 'text', delta: 'par' });
    const e = errorOf(evs);
    assert.equal(e.code, 'bad-response');
    assert.equal(e.midStream, true);
    assert.match(e.message, /broke off: overloaded mid-way\. The partial answer was kept/);
  });

  it("a 429 is retried after the server's retry-after-ms; one asking for more than a minute is not retried and says to wait", async () => {
    answers.push((_q, res) => res.writeHead(429, { 'retry-after-ms': '30' }).end(), sse(ok('second')));
    const t = Date.now();
    const evs = await drain(client({ maxRetries: 2 }).stream(base));
    assert.deepEqual(last(evs), { type: 'done', finishReason: 'stop' });
    assert.equal(requests.length, 2);
    assert.ok(Date.now() - t < 450, 'waited the 30 ms asked, not the default half second');
    requests = [];
    answers.push((_q, res) => res.writeHead(429, { 'retry-after': '120' }).end('{"error":{"message":"slow down"}}'));
    const e = errorOf(await drain(client({ maxRetries: 2 }).stream(base)));
    assert.equal(requests.length, 1, 'not held for two minutes');
    assert.equal(e.code, 'rate-limit');
    assert.match(e.message, /Wait a moment and retry.*slow down/);
  });

  it('a stop while it waits to retry ends at once, as cancelled', async () => {
    answers.push((_q, res) => res.writeHead(503, { 'retry-after': '30' }).end());
    const ctl = new AbortController();
    setTimeout(() => ctl.abort(), 50);
    const t = Date.now();
    const e = errorOf(await drain(client({ maxRetries: 2 }).stream({ ...base, signal: ctl.signal })));
    assert.equal(e.code, 'aborted');
    assert.ok(Date.now() - t < 5_000);
  });

  it('reads a gzip-compressed stream', async () => {
    answers.push((_q, res) => res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' }).end(zlib.gzipSync(ok('zipped'))));
    const evs = await drain(client().stream(base));
    assert.deepEqual(evs[0], { type: 'text', delta: 'zipped' });
    assert.deepEqual(last(evs), { type: 'done', finishReason: 'stop' });
  });

  it('a consumer that stops early closes the connection (the server sees it go)', async () => {
    answers.push((_q, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(chunk({ role: 'assistant', content: 'first' }));
      // …and never ends: only the client leaving closes it.
    });
    for await (const e of client().stream(base)) {
      assert.deepEqual(e, { type: 'text', delta: 'first' });
      break;
    }
    await closed;
  });

  it('a stream cut inside a chunk ends cut (the half chunk never parsed), the text before it kept', async () => {
    answers.push((_q, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(`${chunk({ role: 'assistant', content: 'whole' })}data: {"choi`);
    });
    const evs = await drain(client().stream(base));
    assert.deepEqual(evs[0], { type: 'text', delta: 'whole' });
    assert.equal(errorOf(evs).code, 'cut');
  });

  it('a base URL that is not http(s) fails each request with a connection error naming it (it never throws)', async () => {
    for (const bad of ['', 'localhost:11434/v1', 'ftp://example.com/v1']) {
      const e = errorOf(await drain(new OpenAICompatibleClient({ baseURL: bad, apiKey: 'k' }).stream(base)));
      assert.equal(e.code, 'connection');
      assert.ok(e.message.includes(JSON.stringify(bad)), e.message);
    }
  });
});
