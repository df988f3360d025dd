import assert from 'node:assert/strict';
import nodeFs, * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { guardFolders } from '../../../src/core/process/host-program';
import { bootId, readStat } from '../../../src/core/process/proc-stat';
import { namespaceEnded, namespaceInit, namespaceSpec, pidNamespace } from '../../../src/core/remote/pid-namespace';
import { RemoteProcess } from '../../../src/core/remote/process';
import { goneWithin, killLeftovers, living } from '../../support/leftovers';

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

  it("the namespace's init is bwrap's one child, pid 1 inside; it has ended only once the program and all it started are gone", async () => {
    const p = sh(`setsid sleep ${token}3 & echo ready; read x`, { stdin: 'pipe' });
    for await (const line of p.lines()) if ('text' in line && line.text === 'ready') break;
    const init = namespaceInit(p.pid!);
    assert.ok(init, 'the init is found while the program runs');
    assert.equal(readStat(init.pid)?.ppid, p.pid);
    assert.equal(namespaceEnded(init), false);
    assert.equal(p.groupAlive(), true);
    p.writeLine('go');
    await p.exited;
    // bwrap may leave while its init is still taking the namespace down: the init's end is
    // awaited, and at that moment the setsid helper runs no more.
    for (const end = Date.now() + 5000; !namespaceEnded(init) && Date.now() < end; ) await new Promise((r) => setTimeout(r, 1));
    assert.equal(namespaceEnded(init), true);
    assert.deepEqual(living(token), [], 'no process of the namespace runs once its init has ended');
    assert.equal(p.groupAlive(), false);
    assert.equal(namespaceInit(process.pid), undefined, 'a process that is no namespace init is never taken for one');
  });

  it('a group whose namespace has ended is called gone without a walk of /proc (a zombie init nobody reaps stays in the group)', async () => {
    // It ends after its first output was read (where the init is looked up): a remote program's way.
    const p = sh('echo out; read x; exit 0', { stdin: 'pipe' });
    for await (const _ of p.lines()) p.writeLine('go');
    await p.exited;
    const readdir = nodeFs.readdirSync;
    let walks = 0;
    (nodeFs as { readdirSync: unknown }).readdirSync = (...a: Parameters<typeof fs.readdirSync>) => {
      if (String(a[0]) === '/proc') walks++;
      return readdir(...a);
    };
    try {
      await p.reapGroup();
      assert.equal(p.groupAlive(), false);
    } finally {
      nodeFs.readdirSync = readdir;
    }
    assert.equal(walks, 0);
  });

  it("a stop as the program starts spends no grace on the namespace's init, which ignores the signal", async () => {
    // The init (pid 1 inside) has no handler for SIGTERM; sent to it alone, the stop would wait out the grace.
    for (let i = 0; i < 30; i++) {
      const p = sh('sleep 5', { graceMs: 20_000 });
      const t = Date.now();
      await p.stop();
      assert.ok(Date.now() - t < 10_000, `stop ${i} took ${Date.now() - t} ms: the grace was waited out`);
      assert.notEqual((await p.exited).code, 0);
    }
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

  it('a bwrap named on PATH is never one a command could write: a planted one in a guarded folder never runs (host-program.ts)', async () => {
    // A workspace whose bin is first on PATH (direnv's PATH_add bin): a command wrote a "bwrap" there.
    const bin = path.join(dir, 'bin');
    fs.mkdirSync(bin);
    const name = `bwrap-planted-${token}`;
    const ran = path.join(dir, 'ran');
    fs.writeFileSync(path.join(bin, name), `#!/bin/sh\ntouch '${ran}'\nexit 0\n`, { mode: 0o755 });
    guardFolders([dir]);
    const saved = process.env.PATH;
    process.env.PATH = `${bin}:${saved}`;
    let ns: Awaited<ReturnType<typeof pidNamespace>>;
    try {
      ns = await pidNamespace(name);
    } finally {
      process.env.PATH = saved;
    }
    assert.equal(fs.existsSync(ran), false, 'the planted program never ran');
    assert.equal(ns.available, false);
    assert.match(ns.available ? '' : ns.reason, new RegExp(`bubblewrap \\(${name}\\) is not installed \\(Arbor looks for the programs`));
    // Found outside the guarded folders, the name leads to that file, and programs are started through it.
    const real = await pidNamespace('bwrap');
    assert.ok(real.available && path.isAbsolute(real.bwrap), 'a name found on PATH is started by its path');
  });
});
