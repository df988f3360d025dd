import * as assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { StoreError } from '../../../src/core/store/errors';
import { acquireLock } from '../../../src/core/store/lock';
import { parseOwner } from '../../../src/core/store/lock-owner';
import { LiveToken, tokenState } from '../../../src/core/store/lock-token';
import { Store } from '../../../src/core/store/store';
import { tempDir } from '../../support/store-fixtures';

// The lock's liveness token (decision 0098, amended): a FIFO the holder keeps open for reading.
// Tried as an attacker would: from a PID namespace that cannot see the holder's pid, with the
// holder's pid handed to an unrelated process, with a lock that names something else to open.

const LOCK_MODULE = path.join(__dirname, '..', '..', '..', 'src', 'core', 'store', 'lock');
const TOKEN_MODULE = path.join(__dirname, '..', '..', '..', 'src', 'core', 'store', 'lock-token');

const canUnshare = () => process.platform === 'linux' && spawnSync('unshare', ['--pid', '--fork', '--mount-proc', 'true']).status === 0;

/** What `acquireLock(dir)` does in a new PID namespace (its own /proc: this process's pid means nothing there). */
function acquireInChildNamespace(dir: string): string {
  const script = `try { require(${JSON.stringify(LOCK_MODULE)}).acquireLock(${JSON.stringify(dir)}); console.log('won'); } catch (e) { console.log(e.code + ' ' + e.message); }`;
  const r = spawnSync('unshare', ['--pid', '--fork', '--mount-proc', process.execPath, '-e', script], { encoding: 'utf8' });
  return r.stdout.trim();
}

const tokens = (dir: string) => fs.readdirSync(dir).filter((n) => n.startsWith('arbor.lock.live-'));

describe('store lock: the holder’s liveness token', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => (tmp = tempDir('arbor-lock-token-')));
  afterEach(() => tmp.remove());
  const lockFile = () => path.join(tmp.dir, 'arbor.lock');

  it('an open store names a FIFO it holds open for reading; closing it removes the lock and the FIFO', async () => {
    const store = await Store.open(tmp.dir);
    try {
      const owner = parseOwner(fs.readFileSync(lockFile(), 'utf8'));
      assert.ok(owner?.live, 'the lock names a token');
      assert.ok(fs.lstatSync(path.join(tmp.dir, owner.live)).isFIFO());
      assert.equal(tokenState(tmp.dir, owner.live), 'alive');
    } finally {
      await store.close();
    }
    assert.equal(fs.existsSync(lockFile()), false);
    assert.deepEqual(tokens(tmp.dir), []);
  });

  it('a store held in this PID namespace stays locked to an Arbor in a child namespace, which cannot see the holder’s pid', async function () {
    if (!canUnshare()) this.skip(); // needs root (or user namespaces) and util-linux
    const store = await Store.open(tmp.dir);
    try {
      const out = acquireInChildNamespace(tmp.dir);
      // Judged by its pid from there, the holder looked dead and the lock was taken: two writers.
      assert.match(out, /^LOCKED .*in use by process \d+ \(in another PID namespace/);
      assert.equal(parseOwner(fs.readFileSync(lockFile(), 'utf8'))?.pid, process.pid, 'the lock is still this process’s');
    } finally {
      await store.close();
    }
    // Once it is closed, the child namespace takes the store (and leaves no token of its own behind: it made none).
    assert.equal(acquireInChildNamespace(tmp.dir), 'won');
  });

  it('a holder killed with SIGKILL whose pid now belongs to an unrelated process: the token says it is gone, and its lock and token are taken over', async () => {
    const hold = `(async () => { const t = await require(${JSON.stringify(TOKEN_MODULE)}).LiveToken.make(${JSON.stringify(tmp.dir)}); require(${JSON.stringify(LOCK_MODULE)}).acquireLock(${JSON.stringify(tmp.dir)}, t); console.log('held'); setInterval(() => {}, 1000); })();`;
    const holder = spawn(process.execPath, ['-e', hold], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve) => holder.stdout!.once('data', () => resolve()));
    holder.kill('SIGKILL');
    await new Promise((r) => holder.on('close', r));
    const stale = parseOwner(fs.readFileSync(lockFile(), 'utf8'))!;
    assert.ok(stale.live);
    // Its pid handed out again: an unrelated process runs under it (as after a crash and a busy hour).
    const unrelated = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)']);
    try {
      fs.writeFileSync(lockFile(), JSON.stringify({ ...stale, pid: unrelated.pid }));
      const release = acquireLock(tmp.dir);
      assert.equal(parseOwner(fs.readFileSync(lockFile(), 'utf8'))?.pid, process.pid);
      assert.deepEqual(tokens(tmp.dir), [], 'the dead holder’s token is removed');
      release();
    } finally {
      unrelated.kill();
    }
  });

  it('a live holder’s token holds even when its recorded pid is dead here', async () => {
    const token = await LiveToken.make(tmp.dir);
    assert.ok(token, 'a FIFO can be made here');
    try {
      const dead = spawn(process.execPath, ['-e', '0']);
      await new Promise((r) => dead.on('close', r));
      fs.writeFileSync(
        lockFile(),
        JSON.stringify({ pid: dead.pid, pidns: 1, boot: fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim(), host: 'x', live: token.name }),
      );
      assert.throws(
        () => acquireLock(tmp.dir),
        (e: unknown) => e instanceof StoreError && e.code === 'LOCKED' && e.message.includes(`in use by process ${dead.pid}`),
      );
    } finally {
      token.close();
    }
  });

  it('a lock naming anything but a token FIFO in its folder opens nothing else: it is judged by its pid', async () => {
    const boot = fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    const outside = path.join(tmp.dir, 'elsewhere');
    fs.mkdirSync(outside);
    spawnSync('mkfifo', [path.join(outside, 'fifo')]);
    // A token-named regular file, a path out of the folder, a link to a FIFO elsewhere.
    fs.writeFileSync(path.join(tmp.dir, 'arbor.lock.live-00000000000000aa'), '');
    fs.symlinkSync(path.join(outside, 'fifo'), path.join(tmp.dir, 'arbor.lock.live-00000000000000bb'));
    for (const live of ['arbor.lock.live-00000000000000aa', '../elsewhere/fifo', 'arbor.lock.live-00000000000000bb']) {
      assert.equal(tokenState(tmp.dir, live), 'unknown', live);
      // Judged by its pid: this test's own parent runs, so the lock holds — nothing was opened for writing
      // (a FIFO opened for writing without a reader would have failed with ENXIO, a blocking open would hang).
      fs.writeFileSync(lockFile(), JSON.stringify({ pid: process.ppid, boot, live }));
      assert.throws(
        () => acquireLock(tmp.dir),
        (e: unknown) => e instanceof StoreError && e.code === 'LOCKED',
      );
    }
    assert.equal(parseOwner(JSON.stringify({ pid: 5, live: '../x' }))?.live, undefined, 'a name that is not a token’s is not read');
  });
});
