import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { arbor } from '../support/cli';
import { ModelServer } from '../support/model-server';
import { byWire, CODEX_BIN, programHome, remoteSettings } from './world';

describe('remote: the CLI reads remote programs from --config / ARBOR_CONFIG', function () {
  this.timeout(120_000);
  let server: ModelServer;
  let dir: string;
  let homes: { codex: string; claude: string };
  before(async () => (server = await ModelServer.start()));
  after(() => server.stop());
  beforeEach(() => {
    server.reset();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-rc-'));
    fs.mkdirSync(path.join(dir, 'ws'));
    homes = { codex: programHome('codex'), claude: programHome('claude') };
  });
  afterEach(() => {
    for (const d of [dir, homes.codex, homes.claude]) fs.rmSync(d, { recursive: true, force: true });
  });

  /** `arbor run --json` that delegates once: the child's subagent/remote names `program`, and the child said `said`. */
  async function runDelegating(store: string, extra: string[], env: Record<string, string>, program: string, said: string) {
    const r = await arbor(
      ['run', '--json', ...extra, '--store', store, '--workspace', path.join(dir, 'ws'), '--base-url', server.baseURL, 'delegate it'],
      env,
      90_000,
    );
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { session: string; type: string; text?: string; program?: string });
    const remote = lines.find((l) => l.type === 'subagent/remote');
    assert.equal(remote?.program, program);
    assert.ok(lines.some((l) => l.session === remote!.session && l.type === 'assistant/message' && l.text === said));
    return remote!;
  }

  it('arbor run delegates to the real codex named in ARBOR_CONFIG; the child is in the log with its subagent/remote', async () => {
    const cfg = path.join(dir, 'config.json');
    fs.writeFileSync(cfg, JSON.stringify({ remote: { codex: remoteSettings(server, homes).codex } }));
    byWire(server, {
      chat: [{ toolCalls: [{ name: 'delegate_codex', arguments: { prompt: 'Say hello', label: 'cx' } }] }, { text: 'parent done' }],
      responses: [{ text: 'Hello from codex via the CLI' }],
    });
    const store = path.join(dir, 'store');
    const remote = await runDelegating(store, [], { ARBOR_CONFIG: cfg }, 'codex', 'Hello from codex via the CLI');
    const log = await arbor(['log', remote!.session, '--store', store, '--workspace', path.join(dir, 'ws')]);
    assert.equal(log.code, 0, log.stderr);
    assert.match(log.stdout, /Hello from codex via the CLI/);
  });

  it('a config naming no command is a usage error (exit 2) that says what to set', async () => {
    const cfg = path.join(dir, 'config.json');
    fs.writeFileSync(cfg, JSON.stringify({ remote: { codex: { model: 'x' } } }));
    const r = await arbor([
      'run',
      '--config',
      cfg,
      '--store',
      path.join(dir, 'store'),
      '--workspace',
      path.join(dir, 'ws'),
      '--base-url',
      server.baseURL,
      'hi',
    ]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /remote\.codex\.command must name the program/);
    assert.ok(fs.existsSync(CODEX_BIN));
  });
  it('arbor run delegates to an ACP agent named in --config remote.acp; a bad acp entry is a usage error (exit 2) saying what is wrong', async () => {
    const fixture = path.join(__dirname, '..', 'support', 'acp-fixture-agent.js');
    const cfg = path.join(dir, 'config.json');
    fs.writeFileSync(cfg, JSON.stringify({ remote: { acp: [{ name: 'fix', command: process.execPath, args: [fixture], env: { ACP_SCENARIO: 'plain' } }] } }));
    server.setFallback((_b, i) => (i === 0 ? { toolCalls: [{ name: 'delegate_acp_fix', arguments: { prompt: 'Say hello' } }] } : { text: 'parent done' }));
    const store = path.join(dir, 'store');
    await runDelegating(store, ['--config', cfg], {}, 'acp:fix', 'Hello from the fixture');
    fs.writeFileSync(cfg, JSON.stringify({ remote: { acp: [{ name: 'has space', command: 'x' }] } }));
    const bad = await arbor(['run', '--config', cfg, '--store', store, '--workspace', path.join(dir, 'ws'), '--base-url', server.baseURL, 'hi']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /remote\.acp\[0\]: "name" must be 1–40 letters, digits or "_"/);
  });
});
