import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import type { HarnessConfig } from '../../src/core/harness';
import { groupAlive } from '../../src/core/process/group';
import type { RemoteSettings } from '../../src/core/remote/settings';
import type { SessionEvent } from '../../src/core/session/events';
import { listAgents } from '../../src/core/subagent/control';
import { makeHarness, type TestHarness, until } from '../support/harness';
import { ModelServer } from '../support/model-server';
import { repoRoot } from '../support/repo-root';

// The remote tier (issue 13): the real programs from .tools/remote (scripts/remote/setup.mjs),
// each pointed at the loopback model server in the wire format it speaks.

export const REMOTE_DIR = path.join(repoRoot(), '.tools', 'remote');
export const CODEX_BIN = path.join(REMOTE_DIR, 'node_modules', '.bin', 'codex');
export const CLAUDE_BIN = path.join(REMOTE_DIR, 'node_modules', '.bin', 'claude');
/** Pinned in scripts/remote/paths.mjs; the tests check the installed programs report them. */
export const PINNED = { codex: '0.171.0', claude: '2.1.332' };

/**
 * A program's own state folder, outside the temp dir: codex refuses to set up its sandbox
 * helper (`codex-linux-sandbox`) under the temp dir, and every command then fails. Beside the
 * programs in .tools/remote, unless the checkout itself is under the temp dir (a CI clone in
 * /tmp): then /var/tmp, which is not.
 */
export function programHome(tag: string): string {
  const tmp = fs.realpathSync(os.tmpdir());
  const underTmp = (p: string) => p === tmp || p.startsWith(tmp + path.sep);
  const base = underTmp(fs.realpathSync(repoRoot())) ? path.join('/var/tmp', 'arbor-remote-homes') : path.join(REMOTE_DIR, 'homes');
  fs.mkdirSync(base, { recursive: true });
  return fs.mkdtempSync(path.join(base, `${tag}-`));
}

/** Codex's `-c` overrides that point it at `server` (its `mock` model provider). */
export function mockCodexOverrides(server: ModelServer): string[] {
  return [
    'model_provider="mock"',
    'model_providers.mock.name="mock"',
    `model_providers.mock.base_url="${server.baseURL}"`,
    'model_providers.mock.wire_api="responses"',
    'model_providers.mock.env_key="MOCK_API_KEY"',
    'model_providers.mock.request_max_retries=0',
    'model_providers.mock.stream_max_retries=0',
  ];
}

/** Settings for both real programs against `server`. */
export function remoteSettings(
  server: ModelServer,
  homes: { codex: string; claude: string },
  extra: Partial<Record<keyof RemoteSettings, object>> = {},
): RemoteSettings {
  return {
    codex: {
      command: CODEX_BIN,
      model: 'gpt-5.5',
      home: homes.codex,
      // HOME is the test's own: the machine's dotfiles (a ~/.bashrc running `pyenv init`, which
      // waits 60 s on a stale lock) must not run inside the program's shell commands.
      env: { MOCK_API_KEY: 'mock-key', HOME: homes.codex },
      overrides: mockCodexOverrides(server),
      graceMs: 1500,
      ...extra.codex,
    },
    claudeCode: {
      command: CLAUDE_BIN,
      model: 'claude-sonnet-4-5',
      home: homes.claude,
      env: { ANTHROPIC_BASE_URL: `http://127.0.0.1:${server.port}`, ANTHROPIC_API_KEY: 'dummy', CLAUDE_CODE_MAX_RETRIES: '0', HOME: homes.claude },
      graceMs: 1500,
      ...extra.claudeCode,
    },
  };
}

export interface RemoteWorld {
  readonly server: ModelServer;
  readonly t: TestHarness;
  homes: { codex: string; claude: string };
  /** A harness of this test's own (other settings); cleaned up after the test. */
  reopen(overrides: Partial<HarnessConfig>): Promise<TestHarness>;
}

export function remoteWorld(overrides: Partial<HarnessConfig> = {}): RemoteWorld {
  let server: ModelServer;
  let t: TestHarness;
  const extra: TestHarness[] = [];
  const homes = { codex: '', claude: '' };
  before(async () => (server = await ModelServer.start()));
  after(() => server.stop());
  beforeEach(async () => {
    server.reset();
    homes.codex = programHome('codex');
    homes.claude = programHome('claude');
    t = await makeHarness(server, { remote: remoteSettings(server, homes), ...overrides });
  });
  afterEach(async () => {
    for (const x of extra.splice(0)) await x.cleanup();
    await t.cleanup();
    fs.rmSync(homes.codex, { recursive: true, force: true });
    fs.rmSync(homes.claude, { recursive: true, force: true });
  });
  return {
    get server() {
      return server;
    },
    get t() {
      return t;
    },
    homes,
    async reopen(o) {
      const x = await makeHarness(server, { remote: remoteSettings(server, homes), ...o });
      extra.push(x);
      return x;
    },
  };
}

/** A describe's model server (started once, reset before each spec), and the harness and program home a spec puts in `t` and `home`: cleaned up and removed after it. */
export interface HarnessAndHome {
  readonly server: ModelServer;
  t: TestHarness;
  home: string;
}

/** Registers the hooks of `HarnessAndHome` in the calling describe (ahead of the describe's own). */
export function harnessAndHomePerTest(): HarnessAndHome {
  let server: ModelServer | undefined;
  const specs = {
    get server() {
      if (!server) throw new Error('the model server starts in before(): use it in a spec or a hook');
      return server;
    },
    t: undefined as TestHarness | undefined,
    home: '',
  };
  before(async () => (server = await ModelServer.start()));
  after(() => server?.stop());
  beforeEach(() => specs.server.reset());
  afterEach(async () => {
    await specs.t?.cleanup();
    specs.t = undefined;
    if (specs.home) fs.rmSync(specs.home, { recursive: true, force: true });
    specs.home = '';
  });
  return specs as HarnessAndHome;
}

/** A root of `t` starts a `provider` child on `prompt`: the root, and the child's run and result once it ended (the run disposed). */
export async function finishedChild(t: TestHarness, provider: string, prompt: string) {
  const root = await t.h.createSession();
  const run = await t.h.subagents.start(root, provider, { prompt });
  const r = await run.result;
  await run.dispose();
  return { root, run, r };
}

/** A `provider` child of `t` whose model fails ends as error, its message starting with `name` and matching `pattern`; its turns are whole. */
export async function assertChildFails(t: TestHarness, provider: string, name: RegExp, pattern: RegExp): Promise<void> {
  const { run, r } = await finishedChild(t, provider, 'fail please');
  assert.equal(r.stopReason, 'error');
  assert.match(r.error ?? '', name);
  assert.match(r.error ?? '', pattern);
  const s = await t.h.store.inspect(run.id);
  assertValidTurn(s.events);
}

/** A `provider` child of `t`, whose program is missing, ends as error with `message`. */
export async function assertProgramMissing(t: TestHarness, provider: string, message: RegExp): Promise<void> {
  const { r } = await finishedChild(t, provider, 'hi');
  assert.equal(r.stopReason, 'error');
  assert.match(r.error ?? '', message);
}

/** Whether any process still runs in group `pgid`: the one zombie-aware answer every user of a group gets. */
export { groupAlive };

export const ofType = <T extends SessionEvent['type']>(events: readonly SessionEvent[], type: T) =>
  events.filter((e): e is Extract<SessionEvent, { type: T }> => e.type === type);

/** The process group of the first `subagent/remote` event in `events()`, waited for up to 30 s. */
export async function pgidOf(events: () => readonly SessionEvent[]): Promise<number> {
  let pgid: number | undefined;
  await until(() => (pgid = ofType(events(), 'subagent/remote')[0]?.pgid) !== undefined, 30_000);
  return pgid!;
}

export function assertValidTurn(events: readonly SessionEvent[]): void {
  const starts = ofType(events, 'turn/start').length;
  assert.equal(ofType(events, 'turn/end').length, starts, 'every turn that started ended');
}

/** Route the server's script by wire: each wire's replies are served in order, then `ok`. */
export function byWire(server: ModelServer, queues: Partial<Record<'chat' | 'responses' | 'messages', import('../support/model-server').Reply[]>>): void {
  server.setFallback((_body, i) => {
    const q = queues[server.requests[i].wire as 'chat'];
    return q?.shift() ?? { text: 'ok' };
  });
}

/**
 * The root delegates "Say hello" through `tool` and `program` answers `answer` (over `wire`):
 * the child's own transcript, its subagent/remote record, its usage as served, no process left
 * in its group, the parent's tool result and list_agents' row all say so.
 */
export async function assertPlainAnswer(
  w: RemoteWorld,
  p: { tool: string; wire: 'messages' | 'responses'; program: string; version: string; answer: string },
): Promise<void> {
  byWire(w.server, {
    chat: [{ toolCalls: [{ name: p.tool, arguments: { prompt: 'Say hello', label: 'cx' } }] }, { text: 'parent done' }],
    [p.wire]: [{ text: p.answer, reasoning: 'a short thought' }],
  });
  const root = await w.t.h.createSession();
  await root.accept('delegate it');
  await w.t.h.settle();
  const [child] = w.t.h.store.children(root.id);
  assert.ok(child, 'a child in the tree');
  const s = await w.t.h.store.inspect(child.id);
  const remote = ofType(s.events, 'subagent/remote');
  assert.equal(remote.length, 1);
  assert.equal(remote[0].program, p.program);
  assert.equal(remote[0].version, p.version);
  assert.match(remote[0].externalId, /^[0-9a-f-]{36}$/);
  assert.ok(remote[0].pgid && remote[0].pgid > 1);
  assert.equal(groupAlive(remote[0].pgid!), false, 'no process left in its group');
  const msgs = ofType(s.events, 'assistant/message');
  assert.equal(msgs.map((m) => m.text).join(''), p.answer);
  assert.equal(msgs[0].reasoning, 'a short thought');
  const usage = msgs[msgs.length - 1].usage!;
  const served = w.server.requests.filter((r) => r.wire === p.wire);
  assert.equal(served.length, 1);
  assert.deepEqual(usage, { promptTokens: served[0].promptTokens, completionTokens: usage.completionTokens, cacheHitTokens: served[0].cacheHitTokens });
  assert.ok(usage.completionTokens > 0);
  assert.equal(ofType(s.events, 'turn/end')[0].stopReason, 'completed');
  assertValidTurn(s.events);
  // The parent got the answer as its tool result.
  const parent = await w.t.h.store.inspect(root.id);
  const result = ofType(parent.events, 'tool/result').find((r) => r.name === p.tool)!;
  assert.equal(result.isError, false);
  assert.match(result.content, new RegExp(p.answer));
  const [listed] = await listAgents(w.t.h.subagents, root.id);
  assert.equal(listed.provider, p.program);
  assert.deepEqual(listed.remote, { program: p.program, version: p.version }, 'list_agents names the program and its version');
  assert.deepEqual(listed.tokens, { prompt: usage.promptTokens, completion: usage.completionTokens, cacheHit: usage.cacheHitTokens });
  // Remote children are never compacted and write no request header of ours.
  assert.equal(ofType(s.events, 'request/header').length, 0);
}

/** A TCP listener on 127.0.0.1 per spec of the calling `describe` (closed after it): `port`, and how many connections `reached` it. */
export function listenerPerTest(): { port: number; reached: number } {
  const l = { port: 0, reached: 0 };
  let listener: net.Server;
  beforeEach(async () => {
    l.reached = 0;
    listener = net.createServer((s) => {
      l.reached++;
      s.destroy();
    });
    await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
    l.port = (listener.address() as net.AddressInfo).port;
  });
  afterEach(() => new Promise<void>((r) => listener.close(() => r())));
  return l;
}
