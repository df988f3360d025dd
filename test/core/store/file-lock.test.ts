// `store/file-lock.ts`: a lock left by a killed holder names a pid the kernel hands out again.
// Each PID namespace (a sandbox's, a container's) numbers its processes alike, so two `arbor`
// started one after the other in fresh namespaces both run as pid 2: the second meets the first's
// lock naming its own pid, or a process started since holding that pid. Real bubblewrap, real
// processes, real kills.
import * as assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import { withFileLock } from '../../../src/core/store/file-lock';
import { sandboxStatus } from '../../../src/core/tools/sandbox/detect';

describe('file lock: a leftover whose pid runs again is taken over at once', () => {
  let dir: string;
  let lock: string;
  let holder: ChildProcess | undefined;
  const module = require.resolve('../../../src/core/store/file-lock');
  // A fresh PID namespace with its own /proc, as a sandbox or a container gives it.
  const sandboxed = (...command: string[]) => ['--unshare-pid', '--dev-bind', '/', '/', '--proc', '/proc', '--die-with-parent', ...command];

  /** A process in a fresh namespace takes the lock and is killed while holding it; its pid there. */
  const leaveLock = async (): Promise<number> => {
    holder = spawn(
      'bwrap',
      sandboxed(
        process.execPath,
        '-e',
        `const { withFileLock } = require(${JSON.stringify(module)});
         withFileLock(${JSON.stringify(lock)}, () => { process.stdout.write('held ' + process.pid + '\\n'); Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0); });`,
      ),
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const said = await new Promise<string>((resolve, reject) => {
      holder?.stdout?.once('data', (d: Buffer) => resolve(d.toString()));
      holder?.once('exit', (code) => reject(new Error(`the holder ended (${code}) before it held the lock`)));
    });
    const gone = new Promise((resolve) => holder?.once('exit', resolve));
    holder.kill('SIGKILL');
    await gone;
    holder = undefined;
    assert.ok(fs.existsSync(lock), 'the killed holder left its lock');
    return Number(/^held (\d+)/.exec(said)?.[1]);
  };

  /** Take the lock (waiting at most 2 s, as a record's read does) from a process whose shell runs first (`sh` then holds pid 2) or not. */
  const take = (shellFirst: boolean) => {
    const script = `const { withFileLock } = require(${JSON.stringify(module)});
      const lockPid = Number(require('fs').readFileSync(${JSON.stringify(lock)}, 'utf8'));
      let runs = true; try { process.kill(lockPid, 0); } catch { runs = false; }
      const started = Date.now();
      const got = withFileLock(${JSON.stringify(lock)}, () => undefined, 2000);
      process.stdout.write(JSON.stringify({ pid: process.pid, lockPid, runs, got, ms: Date.now() - started }));`;
    const line = shellFirst ? sandboxed('/bin/sh', '-c', '"$0" -e "$1"; s=$?; exit $s', process.execPath, script) : sandboxed(process.execPath, '-e', script);
    const out = spawnSync('bwrap', line, { encoding: 'utf8', timeout: 30_000 });
    assert.equal(out.status, 0, out.stderr);
    return JSON.parse(out.stdout) as { pid: number; lockPid: number; runs: boolean; got: boolean; ms: number };
  };

  before(async () => {
    const status = await sandboxStatus();
    if (!status.available) throw new Error(`These tests need bubblewrap, and ${status.reason}. Run "npm run setup:e2e" (it installs bubblewrap).`);
  });
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-file-lock-'));
    lock = path.join(dir, 'record.lock');
  });
  afterEach(() => {
    holder?.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("a lock left by a killed process whose pid is now the taker's own: taken at once, not after the wait", async () => {
    const left = await leaveLock();
    const b = take(false);
    assert.equal(b.pid, left, 'the taker runs as the pid the lock names (the scenario)');
    assert.equal(b.lockPid, b.pid);
    assert.ok(b.got, 'the lock was had');
    assert.ok(b.ms < 1000, `taken in ${b.ms} ms (it waited its whole 2 s before)`);
    assert.ok(!fs.existsSync(lock), 'released after');
  });

  it('a lock left by a killed process whose pid a process started since holds: taken at once', async () => {
    const left = await leaveLock();
    // The process that gets the pid starts after the lock was written, by more than /proc's
    // whole-second boot time and the allowed slack: a leftover seen a few seconds on.
    await new Promise((r) => setTimeout(r, 2500));
    const b = take(true);
    assert.equal(b.lockPid, left);
    assert.notEqual(b.pid, left, 'the taker is not the pid the lock names');
    assert.ok(b.runs, `pid ${left} runs again in the taker's namespace (its shell): the scenario`);
    assert.ok(b.got, 'the lock was had');
    assert.ok(b.ms < 1000, `taken in ${b.ms} ms (it waited its whole 2 s before, then gave up)`);
  });

  it('a live holder that wrote its lock after it started is waited for, and its lock left alone', async () => {
    holder = spawn(
      process.execPath,
      [
        '-e',
        `const { withFileLock } = require(${JSON.stringify(module)});
         withFileLock(${JSON.stringify(lock)}, () => { process.stdout.write('held\\n'); Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0); });`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    await new Promise((resolve) => holder?.stdout?.once('data', resolve));
    const started = Date.now();
    assert.equal(
      withFileLock(lock, () => assert.fail('ran while another process held the lock'), 300),
      false,
    );
    assert.ok(Date.now() - started >= 300, 'waited its time');
    assert.equal(fs.readFileSync(lock, 'utf8'), String(holder.pid), "the holder's lock stays");
  });

  it("this thread's own lock is not a leftover: a nested take waits instead of taking it over", () => {
    let inner: boolean | undefined;
    assert.ok(withFileLock(lock, () => (inner = withFileLock(lock, () => undefined, 100))));
    assert.equal(inner, false);
    assert.ok(!fs.existsSync(lock));
  });

  it('a worker thread started after its main thread took the lock waits for it (the lock is younger than the process)', () => {
    const flags = new Int32Array(new SharedArrayBuffer(4));
    let worker: Worker | undefined;
    const code = `const { workerData } = require('node:worker_threads');
      const { withFileLock } = require(workerData.module);
      const flags = new Int32Array(workerData.flags);
      const got = withFileLock(workerData.lock, () => undefined, 300);
      Atomics.store(flags, 0, got ? 1 : 2);
      Atomics.notify(flags, 0);`;
    assert.ok(
      withFileLock(lock, () => {
        // The worker starts after the lock was written; the lock names this process's pid and is not in the worker's `held`.
        worker = new Worker(code, { eval: true, workerData: { module, lock, flags: flags.buffer } });
        Atomics.wait(flags, 0, 0, 20_000);
      }),
    );
    void worker?.terminate();
    assert.equal(flags[0], 2, flags[0] === 1 ? 'the worker took over the lock its main thread held' : 'the worker never answered');
  });
});

describe('file lock: a leftover met by several waiters at once is taken over by one', () => {
  // Waiters that judged the same leftover each removed "it": the second removed the lock the first
  // had just made — same name, and on ext4 the same inode — and both held the lock at once.
  let dir: string;
  const module = require.resolve('../../../src/core/store/file-lock');
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-file-lock-race-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('four processes meeting a killed holder’s lock in 60 rounds: never two inside at once', async () => {
    const rounds = 60;
    const lock = path.join(dir, 'record.lock');
    // Each round: wait for the go, take the lock, be alone inside it for a few ms, say done. A
    // waiter's bound (15 s) is far past a round's ~25 ms: in one clean-clone run (CI126, s60) a
    // waiter missed a 5 s bound, once in ten runs; the cause was not found (no two were inside).
    const script = `const fs = require('fs'); const { withFileLock } = require(${JSON.stringify(module)});
      const dir = ${JSON.stringify(dir)}; const nap = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
      for (let r = 0; r < ${rounds}; r++) {
        while (!fs.existsSync(dir + '/go.' + r)) nap(1);
        const got = withFileLock(${JSON.stringify(lock)}, () => {
          try { fs.writeFileSync(dir + '/inside', '', { flag: 'wx' }); } catch { fs.writeFileSync(dir + '/two-inside.' + r + '.' + process.pid, ''); return; }
          nap(3);
          fs.unlinkSync(dir + '/inside');
        }, 15000);
        fs.writeFileSync(dir + '/done.' + r + '.' + process.pid, String(got));
      }`;
    const dead = spawnSync('true').pid as number;
    const taking = [0, 1, 2, 3].map(() => spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'ignore', 'inherit'] }));
    const ended = Promise.all(taking.map((p) => new Promise((resolve) => p.once('exit', resolve))));
    try {
      for (let r = 0; r < rounds; r++) {
        // The lock a holder killed an hour ago left (its pid runs no more).
        fs.writeFileSync(lock, String(dead));
        const old = new Date(Date.now() - 3_600_000);
        fs.utimesSync(lock, old, old);
        fs.writeFileSync(path.join(dir, `go.${r}`), '');
        const until = Date.now() + 20_000;
        while (fs.readdirSync(dir).filter((n) => n.startsWith(`done.${r}.`)).length < taking.length) {
          assert.ok(Date.now() < until, `round ${r} did not end`);
          await new Promise((resolve) => setTimeout(resolve, 2));
        }
      }
    } finally {
      for (const p of taking) p.kill('SIGKILL');
      await ended;
    }
    const names = fs.readdirSync(dir);
    const two = names.filter((n) => n.startsWith('two-inside.'));
    assert.deepEqual(two, [], `two processes held the lock at once in ${two.length} of ${rounds} rounds`);
    const got = names.filter((n) => n.startsWith('done.')).map((n) => fs.readFileSync(path.join(dir, n), 'utf8'));
    assert.equal(got.length, rounds * taking.length);
    assert.ok(
      got.every((g) => g === 'true'),
      'every waiter had the lock in its round',
    );
  });
});
