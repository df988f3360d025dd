import * as http from 'node:http';
import type * as Https from 'node:https';
import type { Readable } from 'node:stream';
import * as zlib from 'node:zlib';

// Node's own `fetch` (undici) parses HTTP with a WebAssembly build of llhttp, compiled on the
// first request of every process: hundreds of milliseconds of CPU that a one-shot `arbor run`
// (one request) pays in full (decision 0068). node:http parses natively. This is the fetch the
// model client hands the openai SDK: what the SDK sends (a method, headers, a string or bytes
// body, an AbortSignal) goes over node:http(s) with the default keep-alive agents, and the body
// streams back as the Response's ReadableStream. Anything else — a Request object, a streamed
// or form body, a redirect — is left to the global fetch, so behaviour never narrows.

/** node:https (and TLS under it) loads on the first https request: a local model server never needs it. */
let https: typeof Https | undefined;
const httpsModule = (): typeof Https => (https ??= require('node:https') as typeof Https);

const NO_BODY = new Set([101, 204, 205, 304]);
const REDIRECT = new Set([301, 302, 303, 307, 308]);
const DECODERS: Record<string, () => zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress> = {
  gzip: () => zlib.createGunzip(),
  'x-gzip': () => zlib.createGunzip(),
  deflate: () => zlib.createInflate(),
  br: () => zlib.createBrotliDecompress(),
};

/** What undici rejects with on an abort, before or during the body: the SDK recognises it by name. */
const aborted = () => new DOMException('This operation was aborted', 'AbortError');

/** A bound on one response body's bytes on the wire; past it the body fails with `error()`. */
export interface BodyBound {
  maxBytes: number;
  error: () => Error;
}

export const httpFetch: typeof fetch = boundedHttpFetch(undefined, fetch);

/**
 * httpFetch whose response bodies fail with `bound.error()` past `bound.maxBytes`, counted as
 * the bytes arrive (no second stream piped behind the first, decision 0088). What it leaves to
 * another fetch (a Request object, a streamed body, a redirect) goes to `other`, which must
 * bound its bodies itself.
 */
export function boundedHttpFetch(bound: BodyBound | undefined, other: typeof fetch): typeof fetch {
  return (input, init = {}) => send(input, init, bound, other);
}

function send(input: Parameters<typeof fetch>[0], init: RequestInit, bound: BodyBound | undefined, fetch: typeof globalThis.fetch): Promise<Response> {
  const body = init.body;
  const plainBody = body === undefined || body === null || typeof body === 'string' || body instanceof Uint8Array;
  if (!(typeof input === 'string' || input instanceof URL) || !plainBody) return fetch(input, init);
  const url = new URL(input);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return fetch(input, init);
  const signal = init.signal ?? undefined;
  if (signal?.aborted) return Promise.reject(aborted());
  const headers: Record<string, string> = {};
  new Headers(init.headers).forEach((v, k) => {
    headers[k] = v;
  });
  const method = (init.method ?? 'GET').toUpperCase();
  return new Promise<Response>((resolve, reject) => {
    const req = (url.protocol === 'https:' ? httpsModule() : http).request(url, { method, headers });
    let response: http.IncomingMessage | undefined;
    // An abort ends the body as undici's does (an AbortError), so the SDK ends the stream quietly.
    const onAbort = () => {
      const err = aborted();
      response?.destroy(err);
      req.destroy(err);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    const done = () => signal?.removeEventListener('abort', onAbort);
    req.on('error', (err) => {
      done();
      reject(err instanceof DOMException ? err : new TypeError('fetch failed', { cause: err }));
    });
    req.on('response', (res) => {
      response = res;
      const status = res.statusCode ?? 0;
      if (REDIRECT.has(status) && res.headers.location) {
        done();
        res.resume();
        resolve(fetch(input, init));
        return;
      }
      const out = new Headers();
      for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) out.append(res.rawHeaders[i], res.rawHeaders[i + 1]);
      res.once('close', done);
      if (NO_BODY.has(status) || method === 'HEAD') {
        res.resume();
        resolve(new Response(null, { status, statusText: res.statusMessage, headers: out }));
        return;
      }
      const encoding = String(res.headers['content-encoding'] ?? '').toLowerCase();
      const decode = Object.hasOwn(DECODERS, encoding) ? DECODERS[encoding] : undefined;
      const src: Readable = decode ? res.pipe(decode()) : res;
      if (decode) res.on('error', (err) => src.destroy(err));
      resolve(new Response(webBody(src, res, bound), { status, statusText: res.statusMessage, headers: out }));
    });
    req.end(body ?? undefined);
  });
}

/**
 * The body as a web stream, read as the consumer pulls. A body the server cuts ends as undici's
 * does (`TypeError: terminated`, the cause kept), an abort as an AbortError; after a cancel,
 * late data or errors are dropped, never enqueued on a closed stream.
 */
function webBody(src: Readable, res: http.IncomingMessage, bound: BodyBound | undefined): ReadableStream<Uint8Array> {
  let open = true;
  let seen = 0; // the body's bytes so far, as the consumer gets them
  return new ReadableStream<Uint8Array>({
    start(ctl) {
      src.on('data', (chunk: Buffer) => {
        if (!open) return;
        seen += chunk.byteLength;
        if (bound && seen > bound.maxBytes) {
          open = false;
          ctl.error(bound.error());
          res.destroy();
          src.destroy();
          return;
        }
        ctl.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        if ((ctl.desiredSize ?? 0) <= 0) src.pause();
      });
      src.on('end', () => {
        if (open) ctl.close();
        open = false;
      });
      src.on('error', (err) => {
        if (open) ctl.error(err instanceof DOMException ? err : new TypeError('terminated', { cause: err }));
        open = false;
      });
    },
    pull() {
      src.resume();
    },
    cancel() {
      open = false;
      res.destroy();
      src.destroy();
    },
  });
}
