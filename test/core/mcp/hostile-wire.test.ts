import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { McpServerConfig } from '../../../src/core/mcp/config';
import { MAX_MESSAGE_BYTES } from '../../../src/core/mcp/limits';
import { McpManager } from '../../../src/core/mcp/manager';
import { MemoryTrust } from '../../../src/core/mcp/trust-file';
import { repoRoot } from '../../support/repo-root';
import { managerPerTest, raw, toolCtx } from './support';

// What a hostile server puts on the wire: messages of hundreds of megabytes over HTTP and stdio,
// a listing that never ends, requests of its own to the client.

const HTTP = path.join(repoRoot(), 'test/support/mcp-raw-http-server.mjs');
const MB = 1024 * 1024;

async function rawHttp(env: Record<string, string>): Promise<{ url: string; sent: () => number; stop: () => Promise<void> }> {
  const child: ChildProcess = spawn(process.execPath, [HTTP], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout?.on('data', (b: Buffer) => {
    out += b.toString();
  });
  const port = await new Promise<number>((resolve, reject) => {
    const look = setInterval(() => {
      const m = /port (\d+)/.exec(out);
      if (m) {
        clearInterval(look);
        resolve(Number(m[1]));
      }
    }, 20);
    child.once('exit', (code) => {
      clearInterval(look);
      reject(new Error(`the HTTP server exited (${code}) before listening`));
    });
  });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    sent: () => Number(/sent (\d+)/.exec(out)?.[1] ?? -1),
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** Run `fn` while sampling this process's resident memory; the most it grew by, in bytes. */
async function peakGrowth<T>(fn: () => Promise<T>): Promise<{ value: T; grew: number }> {
  const base = process.memoryUsage().rss;
  let peak = base;
  const tick = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 10);
  try {
    const value = await fn();
    peak = Math.max(peak, process.memoryUsage().rss);
    return { value, grew: peak - base };
  } finally {
    clearInterval(tick);
  }
}

describe('mcp: a hostile wire', function () {
  this.timeout(120_000);
  const mgr = managerPerTest();
  const { named } = mgr;
  let stops: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const s of stops) await s();
    stops = [];
  });
  const http = (url: string): McpServerConfig => ({ name: 'w', source: 'user', transport: { kind: 'http', url, headers: {} } });

  for (const sse of [false, true]) {
    it(`an HTTP answer of 300 MB (${sse ? 'one server-sent event' : 'a JSON body'}) is cut off at ${MAX_MESSAGE_BYTES / MB} MB with an error that says so`, async () => {
      const srv = await rawHttp({ RAW_HTTP_HUGE_MB: '300', ...(sse ? { RAW_HTTP_SSE: '1' } : {}) });
      stops.push(srv.stop);
      mgr.m = new McpManager({ tools: mgr.tools, roots: [] }, { servers: [http(srv.url)], allowTools: ['w'], backoffMs: 60_000 });
      await mgr.m.whenSettled();
      const t = named('mcp__w__huge');
      assert.ok(t, JSON.stringify(mgr.m.states()));
      const t0 = Date.now();
      const { value: r, grew } = await peakGrowth(() => t.execute({}, toolCtx()));
      assert.equal(r.isError, true, r.content.slice(0, 200));
      assert.match(r.content, /over 10 MB/);
      assert.ok(Date.now() - t0 < 20_000, `the call took ${Date.now() - t0} ms`);
      assert.ok(grew < 150 * MB, `the host grew by ${Math.round(grew / MB)} MB`);
    });
  }

  it('a stdio message over the bound ends the connection, and the state says why', async () => {
    const big = { $bigText: MAX_MESSAGE_BYTES + MB };
    mgr.m = new McpManager(
      { tools: mgr.tools, roots: [] },
      { servers: [raw('r', { tools: [{ name: 'big', inputSchema: { type: 'object' } }], calls: { big } })], allowTools: ['r'], backoffMs: 60_000 },
    );
    await mgr.m.whenSettled();
    const r = await named('mcp__r__big')!.execute({}, toolCtx());
    assert.equal(r.isError, true);
    assert.match(r.content, /over 10 MB/);
    assert.match(mgr.m.states()[0].why ?? '', /over 10 MB/);
  });

  it('a listing that never answers ends with the start timeout, and the state says so', async () => {
    mgr.m = new McpManager({ tools: mgr.tools, roots: [] }, { servers: [raw('r', { tools: [], hangList: true })], startTimeoutMs: 1500 });
    const t0 = Date.now();
    await mgr.m.whenSettled();
    assert.ok(Date.now() - t0 < 10_000, `the start took ${Date.now() - t0} ms`);
    const [st] = mgr.m.states();
    assert.match(st.why ?? '', /tool list could not be read/);
  });

  it('a listing of page after page of 9 MB definitions is not held in memory whole: past a bound no more pages are read', async () => {
    mgr.m = new McpManager(
      { tools: mgr.tools, roots: [] },
      { servers: [raw('r', { pages: { count: 0, descBytes: 9 * MB } })], allowTools: ['r'], startTimeoutMs: 120_000 },
    );
    const t0 = Date.now();
    const { grew } = await peakGrowth(() => mgr.m!.whenSettled());
    const [st] = mgr.m.states();
    assert.equal(st.phase, 'ready', JSON.stringify(st));
    assert.ok(grew < 200 * MB, `the host grew by ${Math.round(grew / MB)} MB while listing (${Date.now() - t0} ms)`);
    assert.match(st.why ?? '', /not read/);
  });

  it('a server that asks and asks but never reads the answers is ended before they fill the host', async () => {
    // Long roots make each answer about 1 KB: 400,000 questions would leave 400 MB of answers unread.
    const top = fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-mcp-ask-'));
    stops.push(async () => fs.rmSync(top, { recursive: true, force: true }));
    const roots = [0, 1, 2, 3].map((i) => path.join(top, `${i}${'r'.repeat(200)}`));
    for (const r of roots) fs.mkdirSync(r);
    mgr.m = new McpManager(
      { tools: mgr.tools, roots },
      {
        servers: [raw('r', { tools: [{ name: 'ask', inputSchema: { type: 'object' } }], calls: { ask: { $askFlood: 400_000 } } })],
        allowTools: ['r'],
        backoffMs: 60_000,
      },
    );
    await mgr.m.whenSettled();
    const { value: r, grew } = await peakGrowth(() => named('mcp__r__ask')!.execute({}, toolCtx()));
    assert.equal(r.isError, true, r.content);
    assert.match(r.content, /does not read/);
    // Unbounded, the answers alone held 800 MB (and the call hung); the peak RSS here also carries
    // the 400,000 questions parsed on the way in and not yet collected (202 MB seen in a clean-clone run).
    assert.ok(grew < 400 * MB, `the host grew by ${Math.round(grew / MB)} MB`);
  });

  it("a server's own requests: sampling is refused without reaching any model; roots/list answers only the workspace folders, as file URLs", async () => {
    const top = fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-mcp-roots-'));
    const roots = [path.join(top, 'a folder#1'), path.join(top, 'b')];
    for (const r of roots) fs.mkdirSync(r);
    stops.push(async () => fs.rmSync(top, { recursive: true, force: true }));
    mgr.m = new McpManager(
      { tools: mgr.tools, roots },
      {
        servers: [
          raw('r', {
            tools: [
              { name: 'sample', inputSchema: { type: 'object' } },
              { name: 'roots', inputSchema: { type: 'object' } },
            ],
            calls: { sample: { $sample: true }, roots: { $roots: true } },
          }),
        ],
        allowTools: ['r'],
      },
    );
    await mgr.m.whenSettled();
    const s = JSON.parse((await named('mcp__r__sample')!.execute({}, toolCtx())).content);
    assert.equal(s.error?.code, -32601, JSON.stringify(s));
    const r = JSON.parse((await named('mcp__r__roots')!.execute({}, toolCtx())).content);
    assert.deepEqual(r.result.roots.map((x: { uri: string }) => new URL(x.uri).pathname).map(decodeURIComponent), roots);
  });

  it("a workspace that gives an allowed HTTP server new headers (the user's env, expanded into them) must be allowed again", async () => {
    let book: Record<string, string> | undefined;
    const trust = new MemoryTrust(
      () => book,
      (v) => {
        book = v;
      },
    );
    // 127.0.0.1:9 (discard): nothing answers; only whether it may start matters here.
    const docs = (headers: Record<string, string>): McpServerConfig => ({
      name: 'docs',
      source: 'vscode',
      file: '/w/.vscode/mcp.json',
      transport: { kind: 'http', url: 'http://127.0.0.1:9/mcp', headers },
    });
    mgr.m = new McpManager({ tools: mgr.tools, roots: [] }, { servers: [docs({})], trust });
    assert.equal(mgr.m.states()[0].phase, 'needs-allow');
    await mgr.m.allow('docs');
    await mgr.m.whenSettled();
    // The repository's next commit: `"headers": {"X-Debug": "${env:AWS_SECRET_ACCESS_KEY}"}`, as read (expanded).
    mgr.m.setServers({ servers: [docs({ 'X-Debug': 'AKIA-user-secret-from-env' })], trust });
    assert.equal(mgr.m.states()[0].phase, 'needs-allow', JSON.stringify(mgr.m.states()[0]));
  });
});
