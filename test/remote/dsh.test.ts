import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { HarnessConfig } from '../../src/core/harness';
import { dshEnv } from '../../src/core/remote/dsh';
import type { ProgramSettings } from '../../src/core/remote/settings';
import type { SessionEvent } from '../../src/core/session/events';
import { listAgents } from '../../src/core/subagent/control';
import { arbor } from '../support/cli';
import { arborBin } from '../support/cli-bundle';
import { makeHarness, type TestHarness, until } from '../support/harness';
import { ModelServer, type Reply } from '../support/model-server';
import { repoRoot } from '../support/repo-root';
import { assertValidTurn, groupAlive, ofType, pgidOf } from './world';

/** The child Arbor's launcher: this checkout's own CLI (built by tsc). */
const ARBOR_JS = arborBin();
const VERSION = `arbor ${JSON.parse(fs.readFileSync(path.join(repoRoot(), 'package.json'), 'utf8')).version}`;
/** The child asks for this model, so the one model server tells its requests from the parent's. */
const CHILD_MODEL = 'dsh-model';

describe('remote: dsh-sdk (another Arbor, arbor run --json, offline)', function () {
  this.timeout(120_000);
  let server: ModelServer;
  let t: TestHarness;
  const extra: TestHarness[] = [];
  const settings = (o: Partial<ProgramSettings> = {}): ProgramSettings => ({ command: ARBOR_JS, model: CHILD_MODEL, graceMs: 1500, ...o });
  const open = async (o: Partial<HarnessConfig> = {}) => {
    const x = await makeHarness(server, { remote: { dshSdk: settings() }, ...o });
    extra.push(x);
    return x;
  };
  /** Parent (chat, test-model) and child (chat, dsh-model) replies, each in order, then `ok`. */
  const script = (parent: Reply[], child: Reply[] | ((i: number) => Reply)) =>
    server.setFallback((body) => {
      if ((body as { model?: string }).model !== CHILD_MODEL) return parent.shift() ?? { text: 'ok' };
      return typeof child === 'function' ? child(0) : (child.shift() ?? { text: 'ok' });
    });
  const childRequests = () => server.requests.filter((r) => (r.body as { model?: string }).model === CHILD_MODEL);

  before(async () => (server = await ModelServer.start()));
  after(() => server.stop());
  beforeEach(async () => {
    server.reset();
    t = await open();
  });
  afterEach(async () => {
    for (const x of extra.splice(0)) await x.cleanup();
  });

  it('a plain answer through delegate_arbor: subagent/remote with version and store, usage with cache tokens in list_agents, the key reaches it, arbor log --store reads it', async () => {
    script(
      [{ toolCalls: [{ name: 'delegate_arbor', arguments: { prompt: 'Say hello', label: 'ar' } }] }, { text: 'parent done' }],
      [{ text: 'Hello from arbor' }],
    );
    const root = await t.h.createSession();
    await root.accept('delegate it');
    await t.h.settle();
    const [child] = t.h.store.children(root.id);
    assert.ok(child, 'a child in the tree');
    const s = await t.h.store.inspect(child.id);
    const [remote] = ofType(s.events, 'subagent/remote');
    assert.equal(remote.program, 'dsh-sdk');
    assert.equal(remote.version, VERSION);
    assert.equal(remote.store, path.join(t.storeDir, 'remote', child.id), 'a store of its own under the parent store');
    assert.ok(remote.pgid && remote.pgid > 1);
    assert.equal(groupAlive(remote.pgid!), false, 'no process left in its group');
    const msgs = ofType(s.events, 'assistant/message');
    assert.equal(msgs.map((m) => m.text).join(''), 'Hello from arbor');
    const served = childRequests();
    assert.equal(served.length, 1);
    assert.equal(served[0].headers.authorization, 'Bearer test', "the parent's key, for the parent's own endpoint");
    const usage = msgs[msgs.length - 1].usage!;
    assert.equal(usage.promptTokens, served[0].promptTokens);
    assert.equal(usage.cacheHitTokens, served[0].cacheHitTokens);
    assert.ok(usage.completionTokens > 0);
    assert.equal(ofType(s.events, 'turn/end')[0].stopReason, 'completed');
    assertValidTurn(s.events);
    const parent = await t.h.store.inspect(root.id);
    const result = ofType(parent.events, 'tool/result').find((r) => r.name === 'delegate_arbor')!;
    assert.equal(result.isError, false);
    assert.match(result.content, /Hello from arbor/);
    const [listed] = await listAgents(t.h.subagents, root.id);
    assert.equal(listed.provider, 'dsh-sdk');
    assert.deepEqual(listed.remote, { program: 'dsh-sdk', version: VERSION });
    assert.deepEqual(listed.tokens, { prompt: usage.promptTokens, completion: usage.completionTokens, cacheHit: usage.cacheHitTokens });
    // Its own transcript, in its own store.
    const log = await arbor(['log', remote.externalId, '--store', remote.store!]);
    assert.equal(log.code, 0, log.stderr);
    const own = log.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as SessionEvent);
    assert.ok(own.some((e) => e.type === 'assistant/message' && e.text === 'Hello from arbor'));
    assert.ok(own.some((e) => e.type === 'user/message' && e.text.includes('Say hello')));
  });

  it("no model set: the child Arbor runs the parent's model, and its descriptor records that model and its provider, no placeholder (seed 000 §六)", async () => {
    const x = await open({ remote: { dshSdk: settings({ model: undefined }) } });
    // The parent is the one that has the delegation tool; the child Arbor has none.
    const isParent = (b: { tools?: unknown[] }) => JSON.stringify(b.tools ?? []).includes('delegate_arbor');
    const parent = [{ toolCalls: [{ name: 'delegate_arbor', arguments: { prompt: 'Say hi', label: 'ar' } }] }, { text: 'parent done' }];
    server.setFallback((body) => (isParent(body) ? (parent.shift() ?? { text: 'ok' }) : { text: 'hi from the child' }));
    const root = await x.h.createSession();
    await root.accept('delegate it');
    await x.h.settle();
    const [child] = x.h.store.children(root.id);
    const s = await x.h.store.inspect(child.id);
    assert.equal(ofType(s.events, 'turn/end')[0].stopReason, 'completed');
    const served = server.requests.filter((r) => !isParent(r.body));
    assert.deepEqual(
      served.map((r) => r.body.model),
      ['test-model'],
      "the child asked the parent's endpoint for the parent's model",
    );
    const ds = ofType(s.events, 'subagent/descriptor');
    assert.equal(ds.length, 1, 'known at the start: written once');
    assert.deepEqual([ds[0].provider, ds[0].modelProvider, ds[0].model], ['dsh-sdk', 'openai-compatible', 'test-model']);
    assert.ok(ofType(s.events, 'assistant/message').every((m) => m.model === 'test-model'));
    assert.ok(!JSON.stringify(s.events).includes('dsh-sdk default'), 'no placeholder model anywhere in its log');
  });

  it('a tool round trip shows in the child transcript as arbor:read_file and its result', async () => {
    fs.writeFileSync(path.join(t.workspace, 'note.txt'), 'dsh-ok\n');
    script([], [{ toolCalls: [{ name: 'read_file', arguments: { path: 'note.txt' } }] }, { text: 'read it' }]);
    const root = await t.h.createSession();
    const run = await t.h.subagents.start(root, 'dsh-sdk', { prompt: 'read a file', model: CHILD_MODEL });
    const r = await run.result;
    await run.dispose();
    assert.equal(r.stopReason, 'completed', r.error);
    assert.equal(r.text, 'read it');
    const s = await t.h.store.inspect(run.id);
    const calls = ofType(s.events, 'assistant/message').flatMap((m) => m.toolCalls ?? []);
    assert.equal(calls.length, 1);
    assert.equal(calls[0].name, 'arbor:read_file');
    assert.equal(JSON.parse(calls[0].arguments).path, 'note.txt');
    const [res] = ofType(s.events, 'tool/result');
    assert.equal(res.callId, calls[0].id);
    assert.equal(res.name, 'arbor:read_file');
    assert.equal(res.isError, false);
    assert.match(res.content, /dsh-ok/);
    assertValidTurn(s.events);
    // The usage of both child requests, summed.
    const served = childRequests();
    assert.equal(served.length, 2);
    const last = ofType(s.events, 'assistant/message').at(-1)!;
    assert.equal(last.usage?.promptTokens, served[0].promptTokens + served[1].promptTokens);
  });

  it('a read-only child: the child Arbor refuses the write and the file stays absent', async () => {
    const ro = await open({ sandbox: 'read-only' });
    script([], [{ toolCalls: [{ name: 'write_file', arguments: { path: 'made-by-arbor.txt', content: 'x' } }] }, { text: 'tried' }]);
    const root = await ro.h.createSession();
    const run = await ro.h.subagents.start(root, 'dsh-sdk', { prompt: 'write a file' });
    const r = await run.result;
    await run.dispose();
    assert.equal(r.stopReason, 'completed', r.error);
    assert.equal(fs.existsSync(path.join(ro.workspace, 'made-by-arbor.txt')), false, 'nothing written');
    const s = await ro.h.store.inspect(run.id);
    const [res] = ofType(s.events, 'tool/result');
    assert.equal(res.name, 'arbor:write_file');
    assert.equal(res.isError, true);
    assert.match(res.content, /read-only/i);
    // The child Arbor ran under --sandbox read-only, as its own log says.
    const [remote] = ofType(s.events, 'subagent/remote');
    const log = await arbor(['log', remote.externalId, '--store', remote.store!]);
    assert.match(log.stdout, /read-only/);
  });

  it("a workspace-write child's commands run in the child Arbor's own OS sandbox: a write in its workspace lands, one beside it or into /etc is stopped by the kernel", async () => {
    // Nested in the parent's PID namespace (decision 0036), the child's bubblewrap must still start:
    // without it the child refuses every command (approval never), with it the kernel confines them.
    const tag = `dsh-escape-${process.pid}-${Date.now()}.txt`;
    // Beside the workspace (under /tmp: the sandbox's own /tmp) and in /etc (the host's, bound read-only:
    // a checkout may itself sit under /tmp, so it is no witness). The tests run as root: only the kernel stops it.
    const beside = path.join(path.dirname(t.workspace), tag);
    const checkout = path.join('/etc', tag);
    const command = `echo in > inside.txt; echo out > ${beside}; echo out > ${checkout}; echo done`;
    script([], [{ toolCalls: [{ name: 'run_command', arguments: { command } }] }, { text: 'tried' }]);
    const root = await t.h.createSession();
    const run = await t.h.subagents.start(root, 'dsh-sdk', { prompt: 'write two files' });
    const r = await run.result;
    await run.dispose();
    assert.equal(r.stopReason, 'completed', r.error);
    const s = await t.h.store.inspect(run.id);
    const [res] = ofType(s.events, 'tool/result');
    assert.equal(res.name, 'arbor:run_command');
    assert.equal(fs.readFileSync(path.join(t.workspace, 'inside.txt'), 'utf8'), 'in\n', `the command ran in the child's sandbox: ${res.content}`);
    assert.equal(fs.existsSync(beside), false, 'nothing written beside the workspace');
    const escaped = fs.existsSync(checkout);
    if (escaped) fs.rmSync(checkout);
    assert.equal(escaped, false, 'nothing written into /etc');
    assert.match(res.content, /Read-only file system/i, `the kernel refused the write into /etc: ${res.content}`);
  });

  for (const how of ['the parent interrupt', 'the panel (interruptSubtree)'] as const) {
    it(`cancel from ${how}: interrupted, the process group gone, the child's own log ends its turn`, async () => {
      script([], [{ text: 'partial answer that never ends', fault: { kind: 'stall', afterChunks: 1 } }]);
      const root = await t.h.createSession();
      const run = await t.h.subagents.start(root, 'dsh-sdk', { prompt: 'long task' });
      const pgid = await pgidOf(() => t.h.resident(run.id)?.session.events ?? []);
      await until(() => childRequests().length > 0, 30_000);
      if (how === 'the parent interrupt') void run.localAgent.cancel('interrupted', { keepInbox: false });
      else await t.h.interruptSubtree(run.id);
      const r = await run.result;
      await run.dispose();
      assert.equal(r.stopReason, 'interrupted');
      assert.equal(groupAlive(pgid), false, 'the group is gone');
      const s = await t.h.store.inspect(run.id);
      assert.equal(ofType(s.events, 'turn/end')[0].stopReason, 'interrupted');
      // The child Arbor closed its harness on SIGTERM: its own log ends the turn too.
      const [remote] = ofType(s.events, 'subagent/remote');
      const log = await arbor(['log', remote.externalId, '--store', remote.store!]);
      assert.equal(log.code, 0, log.stderr);
      const ends = log.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as SessionEvent)
        .filter((e) => e.type === 'turn/end');
      assert.deepEqual(
        ends.map((e) => e.type === 'turn/end' && e.stopReason),
        ['interrupted'],
      );
    });
  }

  for (const [what, fault, pattern] of [
    ['a model 500', { kind: 'status', status: 500, message: 'the mock model broke' }, /500|the mock model broke/],
    ['a cut stream', { kind: 'disconnect', afterChunks: 1 }, /stream|disconnect|closed|terminated|socket/i],
  ] as const) {
    it(`${what} ends the child as error with a readable message`, async () => {
      script([], () => ({ text: 'some words that are cut', fault }));
      const root = await t.h.createSession();
      const run = await t.h.subagents.start(root, 'dsh-sdk', { prompt: 'fail please' });
      const r = await run.result;
      await run.dispose();
      assert.equal(r.stopReason, 'error');
      assert.match(r.error ?? '', /^Arbor \(dsh-sdk\) ended error: /);
      assert.match(r.error ?? '', pattern);
      assertValidTurn((await t.h.store.inspect(run.id)).events);
    });
  }

  for (const missing of ['no-such-arbor.js', 'no-such-arbor']) {
    it(`a missing launcher (${missing}): an error naming the setting`, async () => {
      const x = await open({ remote: { dshSdk: settings({ command: path.join(t.dir, missing) }) } });
      const root = await x.h.createSession();
      const run = await x.h.subagents.start(root, 'dsh-sdk', { prompt: 'hi' });
      const r = await run.result;
      await run.dispose();
      assert.equal(r.stopReason, 'error');
      assert.match(r.error ?? '', /REMOTE_NOT_FOUND: Arbor \(dsh-sdk\) was not found: ".*no-such-arbor.*arbor\.remote\.dshSdk\.command/);
    });
  }

  it('a launcher named on PATH is never taken from a folder its commands can write: a planted one never runs, not even for --version (host-program.ts)', async () => {
    const name = `arbor-planted-${process.pid}`;
    const x = await open({ remote: { dshSdk: settings({ command: name }) } });
    // The workspace's bin first on PATH (direnv's PATH_add bin): a command of the workspace wrote an "arbor" there.
    const bin = path.join(x.workspace, 'bin');
    const ran = path.join(x.dir, 'ran');
    fs.mkdirSync(bin, { recursive: true });
    fs.writeFileSync(path.join(bin, name), `#!/bin/sh\necho "$@" >> '${ran}'\necho arbor 0.0.0\n`, { mode: 0o755 });
    const saved = process.env.PATH;
    process.env.PATH = `${bin}:${saved}`;
    try {
      const root = await x.h.createSession();
      const run = await x.h.subagents.start(root, 'dsh-sdk', { prompt: 'hi' });
      const r = await run.result;
      await run.dispose();
      assert.equal(r.stopReason, 'error');
      assert.match(r.error ?? '', /REMOTE_NOT_FOUND: Arbor \(dsh-sdk\) was not found: "arbor-planted-/);
    } finally {
      process.env.PATH = saved;
    }
    assert.equal(fs.existsSync(ran) ? fs.readFileSync(ran, 'utf8') : 'never ran', 'never ran');
  });

  it('arbor run delegates to another Arbor named in --config; a bad baseUrl is a usage error', async () => {
    const cfg = path.join(t.dir, 'config.json');
    fs.writeFileSync(cfg, JSON.stringify({ remote: { dshSdk: { command: ARBOR_JS, model: CHILD_MODEL } } }));
    script(
      [{ toolCalls: [{ name: 'delegate_arbor', arguments: { prompt: 'Say hello', label: 'ar' } }] }, { text: 'parent done' }],
      [{ text: 'Hello via the CLI' }],
    );
    const store = path.join(t.dir, 'cli-store');
    const common = ['--store', store, '--workspace', t.workspace, '--base-url', server.baseURL, '--model', 'test-model'];
    const r = await arbor(['run', '--json', '--config', cfg, ...common, 'delegate it'], {}, 90_000);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { session: string; type: string; text?: string; program?: string; store?: string });
    const remote = lines.find((l) => l.type === 'subagent/remote');
    assert.equal(remote?.program, 'dsh-sdk');
    assert.equal(remote?.store, path.join(store, 'remote', remote!.session));
    assert.ok(lines.some((l) => l.session === remote!.session && l.type === 'assistant/message' && l.text === 'Hello via the CLI'));
    fs.writeFileSync(cfg, JSON.stringify({ remote: { dshSdk: { command: ARBOR_JS, baseUrl: 'ftp://x' } } }));
    const bad = await arbor(['run', '--config', cfg, ...common, 'hi']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /remote\.dshSdk\.baseUrl must be an http\(s\) URL/);
  });

  it("the parent's key goes only to the parent's own endpoint, never from env, never to another one", () => {
    const ep = { baseURL: 'https://api.example.com/v1', apiKey: 'sk-parent' };
    const host = { PATH: '/usr/bin', ARBOR_API_KEY: 'sk-host', DEEPSEEK_API_KEY: 'sk-ds', ARBOR_BWRAP: '/usr/bin/bwrap' };
    assert.deepEqual(dshEnv({}, ep, 'https://api.example.com/v1/', ['sk-parent'], host), {
      PATH: '/usr/bin',
      ARBOR_API_KEY: 'sk-parent',
      ARBOR_BWRAP: '/usr/bin/bwrap',
    });
    const other = dshEnv({ env: { ARBOR_API_KEY: 'sk-x', OPENAI_API_KEY: 'sk-parent', MY: 'v' } }, ep, 'http://127.0.0.1:9/v1', ['sk-parent'], host);
    assert.deepEqual(other, { PATH: '/usr/bin', MY: 'v', ARBOR_BWRAP: '/usr/bin/bwrap' });
  });

  it('arbor --version prints the package version', async () => {
    const r = await arbor(['--version']);
    assert.equal(r.code, 0);
    assert.equal(r.stdout.trim(), VERSION);
  });
});
