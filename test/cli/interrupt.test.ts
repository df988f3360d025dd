import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pidNamespace } from '../../src/core/remote/pid-namespace';
import type { AcpAgentSettings, ProgramSettings } from '../../src/core/remote/settings';
import { arbor } from '../support/cli';
import { arborBin } from '../support/cli-bundle';
import { goneWithin, killLeftovers, type Leaver, leaver, living, sleepersRunning } from '../support/leftovers';
import { ModelServer } from '../support/model-server';

const BIN = arborBin();

// Issue 20 (findings 7 and 6b): Ctrl+C and kill -9 of `arbor run` while a remote child runs a
// program that ignores SIGTERM and leaves a same-group and a setsid sleeper behind. Ctrl+C stops
// the programs (bounded), says so and exits 130; after kill -9, the next start leaves nothing.
describe('cli: Ctrl+C and kill -9 of arbor run leave no remote program behind', function () {
  this.timeout(90_000);
  let server: ModelServer;
  let dir: string;
  let l: Leaver;
  let run: ChildProcess | undefined;
  before(async () => {
    server = await ModelServer.start();
    const ns = await pidNamespace();
    if (!ns.available) throw new Error(`These tests need bubblewrap, and ${ns.reason}. Run "npm run setup:e2e" (it installs bubblewrap).`);
  });
  after(() => server.stop());
  beforeEach(() => {
    server.reset();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-int-'));
    fs.mkdirSync(path.join(dir, 'ws'));
    l = leaver(dir);
  });
  afterEach(() => {
    run?.kill('SIGKILL');
    run = undefined;
    killLeftovers(l.token);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const common = () => ['--store', path.join(dir, 'store'), '--workspace', path.join(dir, 'ws'), '--base-url', server.baseURL, '--model', 'test-model'];
  const env = (extra: Record<string, string> = {}) => ({
    ...process.env,
    ARBOR_API_KEY: '',
    DEEPSEEK_API_KEY: '',
    OPENAI_API_KEY: '',
    ARBOR_STORE: '',
    ...extra,
  });

  /** `arbor run` delegating to the leaver through `tool`, until its sleepers run; stderr is collected. */
  async function startRun(tool: string, remote: { codex?: ProgramSettings; acp?: AcpAgentSettings[] }, extraEnv: Record<string, string> = {}) {
    const cfg = path.join(dir, 'config.json');
    fs.writeFileSync(cfg, JSON.stringify({ remote }));
    server.setFallback((body) =>
      body.messages.at(-1)?.role === 'tool' ? { text: 'parent done' } : { toolCalls: [{ name: tool, arguments: { prompt: 'start the dev server' } }] },
    );
    const child = spawn(process.execPath, [BIN, 'run', '--config', cfg, ...common(), 'delegate it'], { env: env(extraEnv), stdio: ['ignore', 'pipe', 'pipe'] });
    run = child;
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += d));
    child.stdout!.resume();
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    await Promise.race([sleepersRunning(l), exited.then((c) => Promise.reject(new Error(`arbor run exited ${c} early: ${stderr}`)))]);
    assert.ok(living(l.token).length >= 3, 'the program and both sleepers run');
    return { child, exited, stderr: () => stderr };
  }

  for (const [what, tool, remote] of [
    ['codex', 'delegate_codex', () => ({ codex: l.codex })],
    ['an ACP agent (acp:<name>)', 'delegate_acp_leaver', () => ({ acp: [l.acp] })],
  ] as const)
    it(`Ctrl+C with ${what} running: its stop is awaited, exit 130 with a line saying so, none of its processes left`, async () => {
      const r = await startRun(tool, remote());
      r.child.kill('SIGINT');
      const code = await r.exited;
      assert.equal(code, 130, r.stderr());
      assert.match(r.stderr(), /arbor: interrupted \(Ctrl\+C\): closing the running turns and stopping 1 remote program\(s\) \(up to 5 s\)/);
      assert.match(r.stderr(), /arbor: interrupted \(Ctrl\+C\): the running turns ended interrupted; every remote program stopped/);
      assert.deepEqual(await goneWithin(l.token, 1000), [], 'nothing of the program runs');
    });

  it('Ctrl+C with a program that takes longer than the bound to stop: it is killed after 5 s, and the line says so', async () => {
    const r = await startRun('delegate_codex', { codex: { ...l.codex, graceMs: 30_000 } });
    const t0 = Date.now();
    r.child.kill('SIGINT');
    assert.equal(await r.exited, 130, r.stderr());
    assert.ok(Date.now() - t0 < 15_000, 'bounded');
    assert.match(r.stderr(), /1 remote program\(s\) did not stop in time and were killed \(SIGKILL\)/);
    assert.deepEqual(await goneWithin(l.token, 1000), []);
  });

  it('a second Ctrl+C quits at once: the programs are SIGKILLed, exit 130', async () => {
    const r = await startRun('delegate_codex', { codex: { ...l.codex, graceMs: 30_000 } });
    r.child.kill('SIGINT');
    await new Promise((res) => setTimeout(res, 300));
    const t0 = Date.now();
    r.child.kill('SIGINT');
    assert.equal(await r.exited, 130, r.stderr());
    assert.ok(Date.now() - t0 < 2000, 'at once');
    assert.match(r.stderr(), /arbor: interrupted again \(Ctrl\+C\): 1 remote program\(s\) killed \(SIGKILL\)/);
    assert.deepEqual(await goneWithin(l.token, 1000), []);
  });

  /** Until the store's files hold the child's `subagent/remote` (what the reaper reads after a crash). */
  async function recorded(ms = 10_000): Promise<void> {
    const files = (d: string): string[] =>
      fs.readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(path.join(d, e.name)) : e.isFile() ? [path.join(d, e.name)] : []));
    for (const end = Date.now() + ms; Date.now() < end; await new Promise((res) => setTimeout(res, 20)))
      if (files(path.join(dir, 'store')).some((f) => fs.readFileSync(f).includes('subagent/remote'))) return;
    throw new Error(`subagent/remote did not reach the store within ${ms} ms`);
  }

  for (const [what, tool, remote] of [
    ['codex', 'delegate_codex', () => ({ codex: l.codex })],
    ['acp:<name>', 'delegate_acp_leaver', () => ({ acp: [l.acp] })],
  ] as const)
    for (const kind of ['namespace', 'process group only'] as const)
      it(`kill -9 of arbor run with ${what} running (${kind}), then the next start: no process of the program is left`, async () => {
        const fallback: Record<string, string> = kind === 'namespace' ? {} : { ARBOR_BWRAP: path.join(dir, 'no-bwrap') };
        const r = await startRun(tool, remote(), fallback);
        await recorded();
        r.child.kill('SIGKILL');
        await r.exited;
        if (kind === 'namespace') assert.deepEqual(await goneWithin(l.token, 2000), [], 'bwrap --die-with-parent took it down with the host');
        else {
          assert.match(r.stderr(), /remote programs run without their own PID namespace \(bubblewrap \(.*no-bwrap\) is not installed\)/);
          assert.equal(living(`${l.token}1`).length, 1, 'its group outlived the host');
        }
        server.setFallback(() => ({ text: 'hello again' }));
        const next = await arbor(['run', ...common(), 'hello'], fallback);
        assert.equal(next.code, 0, next.stderr);
        assert.deepEqual(await goneWithin(`${l.token}1`, 2000), [], 'the same-group sleeper is gone');
        const left = living(l.token);
        if (kind === 'namespace') assert.deepEqual(left, []);
        // The fallback's documented gap: a helper that left the group (setsid) is out of reach.
        else assert.deepEqual(left, living(`${l.token}2`), 'only the setsid helper is left (killed by the test)');
      });
});
