import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { bootId, readStat } from '../../../src/core/process/proc-stat';
import { namespaceSpec, pidNamespace } from '../../../src/core/remote/pid-namespace';
import { RemoteProcess } from '../../../src/core/remote/process';
import { goneWithin, killLeftovers } from '../../support/leftovers';

// A program in its own PID namespace (decision 0036): bwrap does not pass signals on, so the
// graceful steps of a stop go to the program itself; the namespace's end takes everything with it.
describe('remote: a program in its own PID namespace', function () {
  this.timeout(30_000);
  let dir: string;
  let bwrap: string;
  const token = `3601.${process.pid}${Date.now() % 1e7}`;
  before(async () => {
    const ns = await pidNamespace();
    if (!ns.available) throw new Error(`These tests need bubblewrap, and ${ns.reason}. Run "npm run setup:e2e" (it installs bubblewrap).`);
    bwrap = ns.bwrap;
  });
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-pidns-'))));
  afterEach(() => {
    killLeftovers(token);
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const sh = (script: string, extra: Partial<ConstructorParameters<typeof RemoteProcess>[0]> = {}) =>
    new RemoteProcess({ command: '/bin/sh', args: ['-c', script], cwd: dir, env: { PATH: process.env.PATH ?? '' }, graceMs: 3000, bwrap, ...extra });

  for (const sig of ['SIGTERM', 'SIGINT'] as const)
    it(`a stop's graceful ${sig} reaches the program (not only bwrap, which would die of it and kill the program at once)`, async () => {
      const said = path.join(dir, 'said');
      const name = sig.slice(3);
      const p = sh(`trap 'echo got ${name} > "${said}"; exit 0' ${name}; echo ready; while :; do sleep 0.05; done`, {
        ...(sig === 'SIGINT' ? { gracefulSignal: 'SIGINT' } : {}),
      });
      for await (const line of p.lines()) if ('text' in line && line.text === 'ready') break;
      await p.stop();
      assert.equal(fs.readFileSync(said, 'utf8').trim(), `got ${name}`);
      assert.deepEqual(await p.exited, { code: 0, signal: null }, 'it left by itself, before any SIGKILL');
    });

  it('the program ending by itself takes its setsid helper and its background job with it', async () => {
    const p = sh(`setsid sleep ${token}1 & sleep ${token}2 & sleep 0.3; exit 0`);
    assert.deepEqual(await p.exited, { code: 0, signal: null });
    assert.deepEqual(await goneWithin(token, 2000), []);
  });

  it("bwrap's 128+N exit reads as the program's signal death", async () => {
    const p = sh('kill -KILL $$');
    assert.deepEqual(await p.exited, { code: null, signal: 'SIGKILL' });
  });

  it('its identity is the group leader (bwrap) with its start time and the boot id', async () => {
    const p = sh('sleep 5');
    const id = p.identity;
    assert.equal(id.pgid, p.pid);
    assert.equal(id.startTime, readStat(p.pid!)!.startTime);
    assert.equal(id.bootId, bootId());
    assert.ok(bootId().length > 0);
    await p.stop();
  });

  it('a missing bwrap is no namespace, with the reason; programs then get none', async () => {
    const missing = path.join(dir, 'no-bwrap');
    const ns = await pidNamespace(missing);
    assert.deepEqual(ns, { available: false, reason: `bubblewrap (${missing}) is not installed` });
    process.env.ARBOR_BWRAP = missing;
    try {
      assert.deepEqual(await namespaceSpec(), {});
    } finally {
      delete process.env.ARBOR_BWRAP;
    }
    assert.deepEqual(await namespaceSpec(), { bwrap });
  });
});
