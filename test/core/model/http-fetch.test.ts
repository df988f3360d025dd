import assert from 'node:assert/strict';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as zlib from 'node:zlib';
import { httpFetch } from '../../../src/core/model/http-fetch';

// The model client's fetch over node:http (decision 0068): what the openai SDK relies on from
// `fetch` — the request as sent, a body that streams, an abort that ends it as an AbortError,
// a refused connection as undici's `TypeError('fetch failed')` with the cause.
describe('httpFetch', () => {
  let server: http.Server;
  let base = '';
  let seen: { method?: string; headers: http.IncomingHttpHeaders; body: string } = { headers: {}, body: '' };
  let release: (() => void) | undefined;

  before(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        seen = { method: req.method, headers: req.headers, body };
        if (req.url === '/gzip') {
          res.writeHead(200, { 'content-encoding': 'gzip', 'content-type': 'application/json' });
          res.end(zlib.gzipSync(JSON.stringify({ ok: true })));
        } else if (req.url === '/cut') {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.write('data: first\n\n', () => setTimeout(() => res.socket?.destroy(), 20));
        } else if (req.url === '/stream') {
          res.writeHead(200, { 'content-type': 'text/event-stream', 'x-request-id': 'r1' });
          res.write('data: first\n\n');
          release = () => res.end('data: last\n\n');
        } else {
          res.writeHead(404, 'Nope', { 'content-type': 'text/plain' });
          res.end('missing');
        }
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  it('sends method, headers and body; returns status, status text, headers and body', async () => {
    const res = await httpFetch(`${base}/other`, { method: 'POST', headers: { 'x-key': 'k', 'content-type': 'application/json' }, body: '{"a":1}' });
    assert.deepEqual([seen.method, seen.headers['x-key'], seen.body], ['POST', 'k', '{"a":1}']);
    assert.deepEqual([res.status, res.statusText, res.headers.get('content-type'), await res.text()], [404, 'Nope', 'text/plain', 'missing']);
  });

  it('streams the body as it arrives, and an abort mid-body ends it with an AbortError', async () => {
    const ctl = new AbortController();
    const res = await httpFetch(`${base}/stream`, { signal: ctl.signal });
    assert.equal(res.headers.get('x-request-id'), 'r1');
    const reader = res.body!.getReader();
    assert.equal(new TextDecoder().decode((await reader.read()).value), 'data: first\n\n', 'the first chunk before the server ends the body');
    ctl.abort();
    await assert.rejects(reader.read(), (e: Error) => e.name === 'AbortError');
    release?.();
  });

  it('reads a whole streamed body once the server ends it', async () => {
    const res = await httpFetch(`${base}/stream`);
    setTimeout(() => release?.(), 20);
    assert.equal(await res.text(), 'data: first\n\ndata: last\n\n');
  });

  it("a body the server cuts fails as undici's does: TypeError terminated, the cause kept", async () => {
    const res = await httpFetch(`${base}/cut`);
    await assert.rejects(res.text(), (e: Error & { cause?: unknown }) => e instanceof TypeError && e.message === 'terminated' && e.cause instanceof Error);
  });

  it('decodes a gzip body', async () => {
    assert.deepEqual(await (await httpFetch(`${base}/gzip`)).json(), { ok: true });
  });

  it('an aborted signal rejects with an AbortError; a refused connection as fetch does, with the cause', async () => {
    await assert.rejects(httpFetch(`${base}/other`, { signal: AbortSignal.abort() }), (e: Error) => e.name === 'AbortError');
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    await assert.rejects(
      httpFetch(`http://127.0.0.1:${port}/`),
      (e: Error & { cause?: { code?: string } }) => e instanceof TypeError && e.message === 'fetch failed' && e.cause?.code === 'ECONNREFUSED',
    );
  });
});
