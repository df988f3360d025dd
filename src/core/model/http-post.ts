import * as http from 'node:http';
import type * as Https from 'node:https';
import type { Readable } from 'node:stream';
import { urlToHttpOptions } from 'node:url';
import * as zlib from 'node:zlib';

// One POST over node:http(s) (decision 0094): the model client's only transport. node:http
// parses natively (undici's fetch compiles a WebAssembly llhttp on a process's first request,
// decision 0068) and hands the body over as a Node stream — no web streams, Headers or
// Response objects per request. It resolves once the response head is here; every way it can
// fail before that is a `PostFailure` saying which (the caller decides on retries).

/** node:https (and TLS under it) loads on the first https request: a local model server never needs it. */
let https: typeof Https | undefined;
const httpsModule = (): typeof Https => (https ??= require('node:https') as typeof Https);

const DECODERS: Record<string, () => zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress> = {
  gzip: () => zlib.createGunzip(),
  'x-gzip': () => zlib.createGunzip(),
  deflate: () => zlib.createInflate(),
  br: () => zlib.createBrotliDecompress(),
};

/** Redirects that keep the method and body (a POST moved elsewhere); at most this many are followed. */
const KEEPS_METHOD = new Set([307, 308]);
const MAX_REDIRECTS = 5;

export type PostFailureKind = 'connection' | 'timeout' | 'aborted' | 'redirect';

/** Why no response head arrived: refused or reset (`connection`), too slow (`timeout`), the caller's abort, a redirect not followed. */
export class PostFailure extends Error {
  constructor(
    readonly kind: PostFailureKind,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'PostFailure';
  }
}

export interface PostResponse {
  status: number;
  /** Header names in lower case (node:http's own). */
  headers: http.IncomingHttpHeaders;
  /** The body, decoded when the server compressed it; destroy it to stop reading (the caller's abort no longer reaches it). */
  body: Readable;
}

export interface PostOptions {
  headers: Record<string, string>;
  body: string;
  signal: AbortSignal;
  /** How long the response head may take, per attempt. */
  headTimeoutMs: number;
}

/** POSTs `body` to `url`; resolves with the response head and its body stream. */
export async function post(url: URL, opts: PostOptions): Promise<PostResponse> {
  for (let hops = 0; ; hops++) {
    const res = await once(url, opts);
    const location = res.headers.location;
    if (!KEEPS_METHOD.has(res.status) || !location) return res;
    res.body.destroy();
    if (hops === MAX_REDIRECTS) throw new PostFailure('redirect', `more than ${MAX_REDIRECTS} redirects from ${url.origin}`);
    url = new URL(location, url);
  }
}

/** The request options a URL stands for (node's own `urlToHttpOptions`), worked out once per URL: node:http would on every request. */
const targets = new WeakMap<URL, http.RequestOptions>();
function targetOf(url: URL): http.RequestOptions {
  let t = targets.get(url);
  if (!t) targets.set(url, (t = urlToHttpOptions(url)));
  return t;
}

function once(url: URL, opts: PostOptions): Promise<PostResponse> {
  const { signal } = opts;
  if (signal.aborted) return Promise.reject(new PostFailure('aborted', 'The request was cancelled.'));
  return new Promise<PostResponse>((resolve, reject) => {
    const lib = url.protocol === 'https:' ? httpsModule() : http;
    const req = lib.request({
      ...targetOf(url),
      method: 'POST',
      headers: { ...opts.headers, 'content-length': String(Buffer.byteLength(opts.body)) },
    });
    let settled = false;
    const fail = (err: PostFailure) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      req.destroy(err);
      reject(err);
    };
    const timer = setTimeout(() => fail(new PostFailure('timeout', `no answer within ${opts.headTimeoutMs} ms`)), opts.headTimeoutMs);
    const onAbort = () => fail(new PostFailure('aborted', 'The request was cancelled.'));
    signal.addEventListener('abort', onAbort, { once: true });
    req.on('error', (err) => fail(new PostFailure('connection', (err as NodeJS.ErrnoException).code ?? err.message, { cause: err })));
    req.on('response', (res) => {
      if (settled) {
        res.destroy();
        return;
      }
      settled = true;
      clearTimeout(timer);
      // From here an abort ends the body (the reader sees the stream fail), not the request.
      signal.removeEventListener('abort', onAbort);
      const encoding = String(res.headers['content-encoding'] ?? '').toLowerCase();
      const decode = Object.hasOwn(DECODERS, encoding) ? DECODERS[encoding] : undefined;
      let body: Readable = res;
      if (decode) {
        const d = decode();
        res.on('error', (err) => d.destroy(err));
        d.on('close', () => res.destroy());
        body = res.pipe(d);
      }
      resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
    });
    req.end(opts.body);
  });
}

/** Reads a (small) body whole as text, up to `maxBytes`; what comes after is dropped. */
export async function readText(body: Readable, maxBytes: number): Promise<string> {
  const parts: Buffer[] = [];
  let n = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      parts.push(chunk);
      n += chunk.byteLength;
      if (n >= maxBytes) break;
    }
  } catch {
    // what arrived is what there is
  }
  body.destroy();
  return Buffer.concat(parts).subarray(0, maxBytes).toString('utf8');
}
