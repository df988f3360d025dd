import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { SessionWriter } from '../../src/core/agent/session-writer';
import { Harness, type HarnessConfig } from '../../src/core/harness';
import { pidNamespace } from '../../src/core/remote/pid-namespace';
import { SessionSink } from '../../src/core/remote/sink';
import { SubagentError } from '../../src/core/subagent/types';
import { makeHarness, type TestHarness } from '../support/harness';
import { ModelServer } from '../support/model-server';
import { FAKE_CODEX } from './fake-codex';
import { assertValidTurn, groupAlive, ofType, programHome } from './world';

describe('remote: bad input and misbehaving programs (real processes)', function () {
  this.timeout(60_000);
  let server: ModelServer;
  let t: TestHarness;
  let home: string;
  let fake: string;
  before(async () => (server = await ModelServer.start()));
  after(() => server.stop());
  beforeEach(() => {
    home = programHome('fake');
    fake = path.join(home, 'fake-codex');
    fs.writeFileSync(fake, FAKE_CODEX, { mode: 0o755 });
  });
  afterEach(async () => {
    await t?.cleanup();
    fs.rmSync(home, { recursive: true, force: true });
  });
  const open = async (mode: string, extra: Record<string, unknown> = {}, overrides: Partial<HarnessConfig> = {}) => {
    t = await makeHarness(server, {
      remote: { codex: { command: fake, env: { FAKE_MODE: mode, FAKE_ENV_OUT: path.join(home, 'env.json') }, graceMs: 300, ...extra } },
      ...overrides,
    });
    return t;
  };
  const runChild = async () => {
    const root = await t.h.createSession();
    const run = await t.h.subagents.start(root, 'codex', { prompt: 'go' });
    const r = await run.result;
    await run.dispose();
    const s = await t.h.store.inspect(run.id);
    assertValidTurn(s.events);
    return { r, s, run };
  };

  it('non-JSON lines, an 8 MB line, unknown event types: skipped, not fatal', async () => {
    await open('junk');
    const { r, s } = await runChild();
    assert.equal(r.stopReason, 'completed', r.error);
    assert.equal(r.text, 'survived the junk');
    assert.deepEqual(ofType(s.events, 'assistant/message').at(-1)!.usage, { promptTokens: 10, completionTokens: 2, cacheHitTokens: 4 });
  });

  it('a stream that ends without its final event: error naming how it ended', async () => {
    await open('noFinal');
    const { r, s } = await runChild();
    assert.equal(r.stopReason, 'error');
    assert.match(r.error!, /Codex ended without finishing its turn \(exit code 0\)/);
    assert.equal(ofType(s.events, 'assistant/message')[0].text, 'half an answer', 'what it said is kept');
  });

  it('a program that exits at once with code 2: error with the code and its stderr', async () => {
    await open('exit2');
    const { r } = await runChild();
    assert.equal(r.stopReason, 'error');
    assert.match(r.error!, /exit code 2/);
    assert.match(r.error!, /usage: fake-codex \[options\]/);
  });

  it('one that hangs silent: stopped by the idle timeout, its group gone', async () => {
    // Long enough for a loaded machine to start node (and bwrap) before the idle timer bites.
    await open('silent', { idleTimeoutMs: 1500 });
    const { r, s } = await runChild();
    assert.equal(r.stopReason, 'error');
    assert.match(r.error!, /no output for 2 s and was stopped \(idle timeout\)/);
    assert.equal(groupAlive(ofType(s.events, 'subagent/remote')[0].pgid!), false);
  });

  it('one that ignores SIGINT and SIGTERM: killed after the grace period, interrupted, no process left', async () => {
    await open('stubborn');
    const root = await t.h.createSession();
    const run = await t.h.subagents.start(root, 'codex', { prompt: 'go' });
    let pgid: number | undefined;
    for (let i = 0; i < 500 && !(pgid = ofType(t.h.resident(run.id)?.session.events ?? [], 'subagent/remote')[0]?.pgid); i++)
      await new Promise((r) => setTimeout(r, 10));
    assert.ok(pgid);
    await t.h.interruptSubtree(run.id);
    const r = await run.result;
    await run.dispose();
    assert.equal(r.stopReason, 'interrupted');
    assert.equal(groupAlive(pgid), false);
  });

  it('cancel during start-up: interrupted, nothing left running', async () => {
    await open('stubborn');
    const root = await t.h.createSession();
    const run = await t.h.subagents.start(root, 'codex', { prompt: 'go' });
    void run.localAgent.cancel('interrupted', { keepInbox: false });
    const r = await run.result;
    await run.dispose();
    assert.equal(r.stopReason, 'interrupted');
    const pgid = ofType((await t.h.store.inspect(run.id)).events, 'subagent/remote')[0]?.pgid;
    if (pgid !== undefined) assert.equal(groupAlive(pgid), false);
  });

  it("the environment is an allow-list: Arbor's model key and ARBOR_/DEEPSEEK_ variables never reach the program", async () => {
    process.env.ARBOR_API_KEY = 'arbor-secret';
    process.env.DEEPSEEK_API_KEY = 'deepseek-secret';
    process.env.SOME_OTHER_SECRET = 'other';
    try {
      await open('env', { env: { FAKE_MODE: 'env', FAKE_ENV_OUT: path.join(home, 'env.json'), LEAK: 'test', OWN_KEY: 'codex-own' } });
      const { r } = await runChild();
      assert.equal(r.stopReason, 'completed', r.error);
      const env = JSON.parse(fs.readFileSync(path.join(home, 'env.json'), 'utf8')) as Record<string, string>;
      assert.equal(env.ARBOR_API_KEY, undefined);
      assert.equal(env.DEEPSEEK_API_KEY, undefined);
      assert.equal(env.SOME_OTHER_SECRET, undefined, 'not on the allow-list');
      assert.equal(env.LEAK, undefined, "a provider variable whose value is Arbor's model key ('test') is dropped");
      assert.equal(env.OWN_KEY, 'codex-own');
      assert.ok(!Object.values(env).includes('test'));
    } finally {
      delete process.env.ARBOR_API_KEY;
      delete process.env.DEEPSEEK_API_KEY;
      delete process.env.SOME_OTHER_SECRET;
    }
  });

  it('persona, toolFilter, outputSchema or maxDepth on a remote start: UNSUPPORTED_CAPABILITY, nothing created; continuable: NOT_CONTINUABLE', async () => {
    await open('junk');
    const root = await t.h.createSession();
    const asks = [{ persona: { text: 'p' } }, { toolFilter: ['read_file'] }, { outputSchema: { type: 'object' as const } }, { maxDepth: 3 }];
    for (const extra of asks) {
      await assert.rejects(
        t.h.subagents.start(root, 'codex', { prompt: 'go', ...extra }),
        (e: unknown) => e instanceof SubagentError && e.code === 'UNSUPPORTED_CAPABILITY',
      );
    }
    await assert.rejects(
      t.h.subagents.startContinuable(root, 'codex', { prompt: 'go' }),
      (e: unknown) => e instanceof SubagentError && e.code === 'NOT_CONTINUABLE',
    );
    assert.deepEqual(t.h.store.children(root.id), [], 'nothing was created');
  });

  it('the sink: results for unknown call ids are dropped and counted; unanswered calls are closed; reused ids made unique', async () => {
    await open('junk');
    const root = await t.h.createSession();
    await root.accept('x');
    await t.h.settle();
    // A writer of the test's own over the stored log (the agent is idle): the sink writes through it.
    const w = new SessionWriter(await t.h.store.inspect(root.id), t.h.store);
    await w.append({ type: 'inbox/accepted', messageId: 'm2', text: 'y', source: { kind: 'user' } });
    await w.append({ type: 'inbox/claimed', messageId: 'm2' });
    await w.append({ type: 'turn/start', turnId: 't2' });
    const sink = new SessionSink(w, 'codex', 'model-x');
    await sink.toolResult('ghost', 'nobody asked', false);
    await sink.toolCall('c1', 'shell', { command: 'ls' });
    await sink.toolResult('c1', 'done', false);
    await sink.toolCall('c1', 'shell', { command: 'pwd' });
    sink.text('final');
    await sink.finish();
    await w.append({ type: 'turn/end', turnId: 't2', stopReason: 'completed' });
    assert.deepEqual(sink.skippedCounts, { 'result-for-unknown-call': 1 });
    const evs = w.session.events.slice(-7);
    const calls = ofType(evs, 'assistant/message').flatMap((m) => m.toolCalls ?? []);
    assert.deepEqual(
      calls.map((c) => [c.id, c.name]),
      [
        ['c1', 'codex:shell'],
        ['c1#2', 'codex:shell'],
      ],
    );
    const results = ofType(evs, 'tool/result');
    assert.deepEqual(
      results.map((x) => [x.callId, x.isError]),
      [
        ['c1', false],
        ['c1#2', true],
      ],
    );
  });

  // With its own PID namespace the program dies with the host (bwrap --die-with-parent); without
  // one (bwrap made unusable for the host) the group outlives it and the reaper kills it on reopen.
  for (const kind of ['namespace', 'process group only'] as const)
    it(`kill -9 of the host mid-child (${kind}), then reopen: no process of the program is left, the turn ends interrupted`, async () => {
      if (kind === 'namespace') {
        const ns = await pidNamespace();
        if (!ns.available) throw new Error(`This test needs bubblewrap, and ${ns.reason}. Run "npm run setup:e2e" (it installs bubblewrap).`);
      }
      const dir = fs.mkdtempSync(path.join(home, 'crash-'));
      const storeDir = path.join(dir, 'store');
      const ws = path.join(dir, 'ws');
      fs.mkdirSync(ws);
      const env = { ...process.env, ...(kind === 'namespace' ? {} : { ARBOR_BWRAP: path.join(dir, 'no-bwrap') }) };
      const host = spawn(process.execPath, [path.join(__dirname, 'crash-host.js'), storeDir, ws, fake], { stdio: ['ignore', 'pipe', 'inherit'], env });
      const line = await new Promise<string>((resolve, reject) => {
        let buf = '';
        host.stdout!.on('data', (d) => {
          buf += d;
          if (buf.includes('\n')) resolve(buf.trim());
        });
        host.once('exit', (c) => reject(new Error(`host exited ${c} before the child ran`)));
      });
      const [, pgid, , childId] = line.split(' ');
      host.kill('SIGKILL');
      await new Promise((r) => host.once('exit', r));
      if (kind === 'namespace') {
        for (let i = 0; i < 200 && groupAlive(Number(pgid)); i++) await new Promise((r) => setTimeout(r, 10));
        assert.equal(groupAlive(Number(pgid)), false, 'the program died with its host');
      } else assert.equal(groupAlive(Number(pgid)), true, 'the detached program outlived its host');
      const h = await Harness.open({
        storeDir,
        workspace: [ws],
        model: { baseURL: server.baseURL, name: 'm', apiKey: 'k' },
        sandbox: 'read-only',
        approval: 'never',
      });
      try {
        for (let i = 0; i < 200 && groupAlive(Number(pgid)); i++) await new Promise((r) => setTimeout(r, 10));
        assert.equal(groupAlive(Number(pgid)), false, 'reaped on reopen');
        assert.ok(h.recovered.includes(childId));
        const s = await h.store.inspect(childId);
        assert.equal(ofType(s.events, 'turn/end').at(-1)!.stopReason, 'interrupted');
      } finally {
        await h.close();
        try {
          process.kill(-Number(pgid), 'SIGKILL'); // never leave it behind, whatever failed above
        } catch {
          /* gone, as it should be */
        }
      }
    });
});
