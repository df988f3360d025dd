import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { groupAlive } from '../../../src/core/process/group';
import { readStat } from '../../../src/core/process/proc-stat';
import { type GroupChild, SPAWNER_LOST, spawnerEntry, spawnerPid, spawnGroupLeader, stopSpawner, warmSpawner } from '../../../src/core/process/spawner';
import { runInGroup } from '../../../src/core/tools/command-process';

// The spawner (decision 0095): the host's short-lived programs are started by one small Node so
// that the host's fork tax is not paid. Real processes throughout: what a program reads and
// writes, its exit, its group, and what happens when the spawner itself is killed under it.

const LIMITS = { timeoutMs: 20_000, cap: 64 * 1024 * 1024, killGraceMs: 300, lingerMs: 500 };
const sh = (script: string, extra: { stdin?: Buffer; fd3?: Buffer; env?: NodeJS.ProcessEnv } = {}) => ({
  file: '/bin/sh',
  args: ['-c', script],
  command: script,
  cwd: os.tmpdir(),
  env: extra.env ?? process.env,
  namespaced: false,
  ...(extra.stdin ? { stdin: extra.stdin } : {}),
  ...(extra.fd3 ? { fd3: extra.fd3 } : {}),
});
const run = (script: string, extra: Parameters<typeof sh>[1] = {}, signal = new AbortController().signal) => runInGroup(sh(script, extra), LIMITS, signal);
const until = async (pred: () => boolean, ms = 5000): Promise<boolean> => {
  for (const end = Date.now() + ms; !pred() && Date.now() < end; ) await new Promise((r) => setTimeout(r, 10));
  return pred();
};
/** The parent of the program that printed its `$PPID` first. */
const parentOf = async (script = 'echo $PPID'): Promise<number> => Number((await run(script)).stdout.toString().trim());

describe('the spawner: programs started by a small Node on the host’s behalf (decision 0095)', function () {
  this.timeout(60_000);

  before(async function () {
    if (process.platform !== 'linux') this.skip();
    assert.ok(fs.existsSync(spawnerEntry()), `the spawner's entry is built beside its module: ${spawnerEntry()}`);
    assert.equal(await warmSpawner(), true, 'the spawner starts and says it is ready');
  });

  it('starts the program itself (its parent is the spawner, not this process), with the bytes, exit and output a direct start gives', async () => {
    const ppid = await parentOf();
    assert.notEqual(ppid, process.pid);
    assert.equal(readStat(ppid)?.ppid, process.pid, 'the spawner is a child of this process');
    const r = await run('cat; cat <&3; echo to-err >&2; exit 7', { stdin: Buffer.from('from stdin\n'), fd3: Buffer.from('from fd 3\n') });
    assert.equal(r.end, 'exited');
    assert.equal(r.code, 7);
    assert.equal(r.stdout.toString(), 'from stdin\nfrom fd 3\n');
    assert.equal(r.stderr.toString(), 'to-err\n');
    // Its own group, as every program Arbor starts (decision 0053).
    const pg = await run('ps -o pgid= -p $$; echo $$');
    const [pgid, pid] = pg.stdout.toString().trim().split(/\s+/).map(Number);
    assert.equal(pgid, pid, 'the program leads a process group of its own');
  });

  it('a program that cannot start is a spawn error with the system’s reason', async () => {
    const r = await runInGroup({ ...sh(''), file: path.join(os.tmpdir(), 'no-such-program-here') }, LIMITS, new AbortController().signal);
    assert.equal(r.end, 'spawn-error');
    assert.match(r.error ?? '', /ENOENT/);
  });

  it('output far past the spawner’s high-water mark arrives whole and in order', async () => {
    // 24 MiB of numbered lines.
    const r = await run('seq 1 3000000');
    assert.equal(r.end, 'exited');
    const want = createHash('sha256');
    for (let i = 1; i <= 3_000_000; i++) want.update(`${i}\n`);
    assert.equal(createHash('sha256').update(r.stdout.bytes()).digest('hex'), want.digest('hex'));
  });

  it('a host that does not read holds the program back: the spawner pauses its pipes instead of buffering its output', async () => {
    assert.equal(await warmSpawner(), true);
    const pid = spawnerPid()!;
    const peak = () => Number(/VmHWM:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) * 1024;
    const before = peak();
    // 96 MiB as fast as the pipe takes it, while this event loop is blocked: nothing is read here.
    const child = spawnGroupLeader({ file: '/bin/sh', args: ['-c', 'head -c 100663296 /dev/zero'], cwd: os.tmpdir(), env: process.env });
    let got = 0;
    const closed = new Promise<void>((resolve) => child.on('close', resolve));
    child.stdout.on('data', (d: Buffer) => (got += d.length));
    for (const end = Date.now() + 1500; Date.now() < end; ) {
      // busy: the spawner's sends wait for this process to read its channel
    }
    await closed;
    assert.equal(got, 100663296, 'every byte arrived');
    const grew = peak() - before;
    // Unpaused, the spawner would have queued the 96 MiB for the channel (twice over, serialised).
    assert.ok(grew < 32 * 1024 * 1024, `the spawner's peak memory grew by ${(grew / 1048576).toFixed(1)} MiB`);
  });

  it('the program gets exactly the environment it is given; the spawner itself holds none of the host’s', async () => {
    process.env.ARBOR_SPAWNER_TEST_SECRET = 'host-only';
    try {
      const r = await run('env', { env: { PATH: '/usr/bin:/bin', ONLY_THIS: 'yes' } });
      const names = r.stdout
        .toString()
        .trim()
        .split('\n')
        .map((l) => l.split('=')[0])
        .filter((n) => n !== 'PWD' && n !== 'SHLVL' && n !== '_');
      assert.deepEqual(names.sort(), ['ONLY_THIS', 'PATH']);
      const spawnerPid = await parentOf();
      const environ = fs.readFileSync(`/proc/${spawnerPid}/environ`, 'latin1');
      assert.ok(!environ.includes('ARBOR_SPAWNER_TEST_SECRET'), 'no host variable in the spawner');
      // Only what Node's IPC channel itself sets.
      const vars = environ.split('\0').filter((v) => v && !v.startsWith('NODE_CHANNEL_'));
      assert.deepEqual(vars, [], `the spawner runs with an empty environment: ${environ}`);
    } finally {
      delete process.env.ARBOR_SPAWNER_TEST_SECRET;
    }
  });

  it('a stop asked before the spawner has said the pid still stops the program (and its group)', async () => {
    // With the spawner ready, the program's pid is always unknown when runInGroup sees an aborted signal (synchronously).
    assert.equal(await warmSpawner(), true);
    const ac = new AbortController();
    ac.abort();
    const marker = `4242.${process.pid}${Date.now() % 1e6}`;
    const started = Date.now();
    const r = await run(`sleep ${marker} & sleep ${marker}`, {}, ac.signal);
    assert.equal(r.end, 'aborted');
    assert.ok(Date.now() - started < 5000, 'stopped at once, not after the sleep');
    assert.ok(await until(() => !livingWith(marker)), 'nothing of the group is left running');
  });

  it('the spawner killed under a running program: the program is stopped with its group and reported killed; the next program still runs', async () => {
    const marker = `4343.${process.pid}${Date.now() % 1e6}`;
    const child: GroupChild = spawnGroupLeader({
      file: '/bin/sh',
      // One helper outside the program's group (setsid): the loss must reach it too.
      args: ['-c', `echo $PPID; setsid sleep ${marker} & sleep ${marker}`],
      cwd: os.tmpdir(),
      env: process.env,
    });
    const ended = new Promise<[number | null, string | null]>((resolve) => child.on('exit', (code, sig) => resolve([code, sig])));
    const closed = new Promise<void>((resolve) => child.on('close', resolve));
    const ppid = await new Promise<number>((resolve) => child.stdout.once('data', (d: Buffer) => resolve(Number(d.toString().trim()))));
    assert.notEqual(ppid, process.pid, 'started by the spawner');
    assert.ok(await until(() => livingWith(marker)), 'the program runs');
    process.kill(ppid, 'SIGKILL');
    assert.deepEqual(await ended, [null, 'SIGKILL']);
    await closed;
    assert.ok(await until(() => !livingWith(marker)), 'its group and its setsid helper were killed with it: no orphan left');
    assert.equal(groupAlive(child.pid), false);
    assert.equal(child.lostReason, SPAWNER_LOST);
    // The next program runs (directly, or through a new spawner once it is ready).
    const r = await run('echo again');
    assert.equal(r.stdout.toString(), 'again\n');
    assert.equal(await warmSpawner(), true, 'a new spawner takes over');
    assert.notEqual(await parentOf(), ppid);
  });

  it('through runInGroup, a program killed by a lost spawner says so: why, and that running it again is safe', async () => {
    assert.equal(await warmSpawner(), true);
    const marker = `4444.${process.pid}${Date.now() % 1e6}`;
    const pending = run(`setsid sleep ${marker} & sleep ${marker}`);
    assert.ok(await until(() => livingWith(marker)), 'the program runs');
    // The program can run before the host has read the spawner's word of its pid (seen on a
    // loaded CI machine): lost then, the host can only say it "may have begun" (spawn-error,
    // ESPAWNER) and cannot stop it. This test is about a known pid, so the host reads it first.
    await new Promise((r) => setTimeout(r, 200));
    process.kill(spawnerPid()!, 'SIGKILL');
    const r = await pending;
    assert.equal(r.end, 'exited', r.error);
    assert.equal(r.signal, 'SIGKILL');
    assert.equal(r.error, SPAWNER_LOST);
    assert.match(r.error ?? '', /safe to run it again/);
    assert.ok(await until(() => !livingWith(marker)), 'nothing of it is left');
  });

  it('stopping the spawner on purpose is no loss: after many stops programs still go through a new spawner', async () => {
    for (let i = 0; i < 5; i++) {
      assert.equal(await warmSpawner(), true, `spawner ${i + 1} starts`);
      stopSpawner();
      await until(() => spawnerPid() === undefined);
    }
    assert.equal(await warmSpawner(), true, 'not turned off by deliberate stops');
    assert.equal(await parentOf(), spawnerPid());
  });

  it('the host killed with SIGKILL: the spawner stops what it ran (its group and its setsid helpers) and leaves', async () => {
    const marker = `4545.${process.pid}${Date.now() % 1e6}`;
    const mod = path.join(__dirname, '..', '..', '..', 'src', 'core', 'tools', 'command-process.js');
    const spawner = path.join(__dirname, '..', '..', '..', 'src', 'core', 'process', 'spawner.js');
    const script = `
      const { runInGroup } = require(${JSON.stringify(mod)});
      const { warmSpawner, spawnerPid } = require(${JSON.stringify(spawner)});
      warmSpawner().then((ok) => {
        console.log(ok, spawnerPid());
        void runInGroup({ file: '/bin/sh', args: ['-c', 'setsid sleep ${marker} & sleep ${marker}'], command: '', cwd: '/', env: process.env, namespaced: false },
          { timeoutMs: 60000, cap: 1e6, killGraceMs: 100, lingerMs: 100 }, new AbortController().signal);
      });`;
    const host = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const line = await new Promise<string>((resolve) => host.stdout.once('data', (d: Buffer) => resolve(d.toString().trim())));
    const [ok, pid] = line.split(' ');
    assert.equal(ok, 'true', 'the host had a spawner');
    // Both sleeps, by their own command lines (the host's and the shell's hold the marker too).
    assert.ok(await until(() => countLiving(`sleep\0${marker}`) === 2), 'the program and its setsid helper run');
    host.kill('SIGKILL');
    assert.ok(await until(() => !livingWith(marker)), 'the program and its setsid helper are gone with the host');
    assert.ok(await until(() => readStat(Number(pid)) === undefined || readStat(Number(pid))?.state === 'Z'), 'the spawner left');
  });

  it('an idle spawner keeps nothing alive: a process whose only work was a command exits by itself', async () => {
    const mod = path.join(__dirname, '..', '..', '..', 'src', 'core', 'tools', 'command-process.js');
    const spawner = path.join(__dirname, '..', '..', '..', 'src', 'core', 'process', 'spawner.js');
    const script = `
      const { runInGroup } = require(${JSON.stringify(mod)});
      const { warmSpawner, spawnerPid } = require(${JSON.stringify(spawner)});
      warmSpawner().then(async (ok) => {
        const r = await runInGroup({ file: '/bin/sh', args: ['-c', 'echo $PPID'], command: '', cwd: '/', env: process.env, namespaced: false },
          { timeoutMs: 5000, cap: 1e6, killGraceMs: 100, lingerMs: 100 }, new AbortController().signal);
        console.log(ok, Number(r.stdout.toString()) === spawnerPid());
      });`;
    const p = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const code = await Promise.race([
      new Promise<number | null>((resolve) => p.on('exit', resolve)),
      new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 15_000)),
    ]);
    if (code === 'hung') p.kill('SIGKILL');
    assert.equal(code, 0, 'the process exited by itself');
    assert.equal(out.trim(), 'true true', 'its command went through its spawner');
  });
});

/** Whether a process (not a zombie) whose command line holds `marker` runs. */
function livingWith(marker: string): boolean {
  return countLiving(marker) > 0;
}

/** How many processes (not zombies) whose command line (NUL between its words) holds `marker` run. */
function countLiving(marker: string): number {
  let n = 0;
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (readStat(Number(d))?.state === 'Z') continue;
      if (fs.readFileSync(`/proc/${d}/cmdline`, 'latin1').includes(marker)) n++;
    } catch {
      // gone meanwhile
    }
  }
  return n;
}
