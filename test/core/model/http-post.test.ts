import assert from 'node:assert/strict';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as zlib from 'node:zlib';
import { PostFailure, post, readText } from '../../../src/core/model/http-post';

// The model client's one transport (decision 0094): the request as sent, the body as a Node
// stream as it arrives (decoded when compressed), a 307/308 followed with its body, and every
// way no response head comes — refused, too slow, cancelled, redirected in circles — as a
// PostFailure of that kind.
describe('model transport: one POST over node:http', () => {
  let server: http.Server;
  let base = '';
  let seen: { method?: string; url?: string; headers: http.IncomingHttpHeaders; body: string } = { headers: {}, body: '' };
  let release: (() => void) | undefined;
  const opts = (over: Partial<Parameters<typeof post>[1]> = {}) => ({
    headers: { 'x-key': 'k', 'content-type': 'application/json' },
    body: '{"a":"é"}',
    signal: new AbortController().signal,
    headTimeoutMs: 5_000,
    ...over,
  });

  before(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        seen = { method: req.method, url: req.url, headers: req.headers, body };
        if (req.url === '/gzip') {
          res.writeHead(200, { 'content-encoding': 'gzip', 'content-type': 'text/event-stream' });
          res.end(zlib.gzipSync('data: {"ok":true}\n\n'));
        } else if (req.url === '/stream') {
          res.writeHead(200, { 'content-type': 'text/event-stream', 'x-request-id': 'r1' });
          res.write('data: first\n\n');
          release = () => res.end('data: last\n\n');
        } else if (req.url === '/slow') {
          setTimeout(() => {
            if (!res.destroyed) res.end('late');
          }, 2_000);
        } else if (req.url === '/moved') {
          res.writeHead(307, { location: '/other' });
          res.end();
        } else if (req.url === '/loop') {
          res.writeHead(308, { location: '/loop' });
          res.end();
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

  it('sends a POST with the headers, the body and its length in bytes; returns the status, headers and body', async () => {
    const res = await post(new URL(`${base}/other`), opts());
    assert.deepEqual([seen.method, seen.headers['x-key'], seen.headers['content-length'], seen.body], ['POST', 'k', '10', '{"a":"é"}']);
    assert.deepEqual([res.status, res.headers['content-type'], await readText(res.body, 1024)], [404, 'text/plain', 'missing']);
  });

  it('hands over the body as it arrives (the first chunk before the server ends it)', async () => {
    const res = await post(new URL(`${base}/stream`), opts());
    assert.equal(res.headers['x-request-id'], 'r1');
    const it = (res.body as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
    assert.equal(String((await it.next()).value), 'data: first\n\n');
    release?.();
    assert.equal(String((await it.next()).value), 'data: last\n\n');
    assert.equal((await it.next()).done, true);
  });

  it('decodes a gzip body', async () => {
    assert.equal(await readText((await post(new URL(`${base}/gzip`), opts())).body, 1024), 'data: {"ok":true}\n\n');
  });

  it('follows a 307 with the same method and body; a redirect loop ends as a redirect failure', async () => {
    const res = await post(new URL(`${base}/moved`), opts());
    assert.deepEqual([res.status, seen.url, seen.method, seen.body], [404, '/other', 'POST', '{"a":"é"}']);
    await assert.rejects(post(new URL(`${base}/loop`), opts()), (e: unknown) => e instanceof PostFailure && e.kind === 'redirect');
  });

  it('a head later than the timeout is a timeout; a cancelled request an abort, before or while it waits', async () => {
    await assert.rejects(post(new URL(`${base}/slow`), opts({ headTimeoutMs: 100 })), (e: unknown) => e instanceof PostFailure && e.kind === 'timeout');
    await assert.rejects(
      post(new URL(`${base}/other`), opts({ signal: AbortSignal.abort() })),
      (e: unknown) => e instanceof PostFailure && e.kind === 'aborted',
    );
    const ctl = new AbortController();
    setTimeout(() => ctl.abort(), 50);
    await assert.rejects(post(new URL(`${base}/slow`), opts({ signal: ctl.signal })), (e: unknown) => e instanceof PostFailure && e.kind === 'aborted');
  });

  it('a refused connection is a connection failure naming the system error, the cause kept', async () => {
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    await assert.rejects(
      post(new URL(`http://127.0.0.1:${port}/`), opts()),
      (e: unknown) => e instanceof PostFailure && e.kind === 'connection' && e.message === 'ECONNREFUSED' && e.cause instanceof Error,
    );
  });

  it("a base URL's path, query and credentials reach the server (a proxy that wants basic auth in the URL)", async () => {
    const u = new URL(base);
    await readText((await post(new URL(`http://us%20er:p%40ss@127.0.0.1:${u.port}/v1/x?api-version=2`), opts())).body, 1024);
    assert.equal(seen.url, '/v1/x?api-version=2');
    assert.equal(seen.headers.authorization, `Basic ${Buffer.from('us er:p@ss').toString('base64')}`);
  });

  it('readText stops at its limit', async () => {
    const res = await post(new URL(`${base}/other`), opts());
    assert.equal(await readText(res.body, 3), 'mis');
  });
});
