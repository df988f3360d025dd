import * as assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { StoreError } from '../../../src/core/store/errors';
import { acquireLock } from '../../../src/core/store/lock';
import { type LockOwner, ownerText, parseOwner, thisOwner } from '../../../src/core/store/lock-owner';
import { tempDir } from '../../support/store-fixtures';

// A pid means something only in its PID namespace, in one boot of one host. A lock written from
// a container or sandbox (another PID namespace) or another host cannot be checked from here,
// so it holds; one from an earlier boot of this host is stale (decision 0098).

const LOCK_MODULE = path.join(__dirname, '..', '..', '..', 'src', 'core', 'store', 'lock');

/** The PID namespace inode of `pid`'s children once it has forked (unshare --fork runs the program as its child). */
async function namespaceOf(pid: number): Promise<number> {
  const self = fs.statSync('/proc/self/ns/pid').ino;
  for (let i = 0; i < 100; i++) {
    for (const name of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(name)) continue;
      try {
        const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        const ino = fs.statSync(`/proc/${name}/ns/pid`).ino;
        if (ppid === pid && ino !== self) return ino;
      } catch {
        // gone meanwhile
      }
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no process in a new PID namespace under ${pid}`);
}

/** A pid that no process has here: one that just exited. */
async function deadPid(): Promise<number> {
  const p = spawn(process.execPath, ['-e', '0']);
  await new Promise((resolve) => p.on('close', resolve));
  return p.pid!;
}

describe('store lock: holders in other PID namespaces, boots and hosts', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => (tmp = tempDir('arbor-lock-ns-')));
  afterEach(() => tmp.remove());
  const lockFile = () => path.join(tmp.dir, 'arbor.lock');
  const writeLock = (o: LockOwner) => fs.writeFileSync(lockFile(), ownerText(o));

  it('records the pid, PID namespace, boot id and host, and releases only its own lock', async () => {
    const release = await acquireLock(tmp.dir);
    const owner = parseOwner(fs.readFileSync(lockFile(), 'utf8'));
    assert.equal(owner?.pid, process.pid);
    if (fs.existsSync('/proc/self/ns/pid')) {
      assert.equal(owner?.pidns, fs.statSync('/proc/self/ns/pid').ino);
      assert.equal(owner?.boot, fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim());
    }
    release();
    assert.deepEqual(fs.readdirSync(tmp.dir), []);
  });

  it('a lock from a PID namespace that still runs holds, even when its pid is dead here; the error says where and how to remove it', async function () {
    if (spawnSync('unshare', ['--pid', '--fork', '--mount-proc', 'true']).status !== 0) this.skip(); // needs root (or user namespaces) and util-linux
    const me = thisOwner();
    const inside = spawn('unshare', ['--pid', '--fork', '--kill-child', '--mount-proc', 'sleep', '30'], { stdio: 'ignore' });
    try {
      const ns = await namespaceOf(inside.pid!);
      writeLock({ ...me, pid: await deadPid(), pidns: ns });
      await assert.rejects(
        () => acquireLock(tmp.dir),
        (e: unknown) => e instanceof StoreError && e.code === 'LOCKED' && /another PID namespace/.test(e.message) && e.message.includes(`delete ${lockFile()}`),
      );
      assert.equal(parseOwner(fs.readFileSync(lockFile(), 'utf8'))?.pidns, ns, 'the lock is untouched');
    } finally {
      inside.kill('SIGKILL');
    }
  });

  it('a lock from a PID namespace nobody runs in any more (a sandboxed holder killed with it) is taken over', async () => {
    const me = thisOwner();
    writeLock({ ...me, pid: await deadPid(), pidns: (me.pidns ?? 1) + 7919 });
    const release = await acquireLock(tmp.dir);
    assert.equal(parseOwner(fs.readFileSync(lockFile(), 'utf8'))?.pid, process.pid);
    release();
  });

  it('a lock from another host holds; one from an earlier boot of this host is stale and taken over', async () => {
    const me = thisOwner();
    const dead = await deadPid();
    writeLock({ ...me, pid: dead, host: `${me.host}-elsewhere`, boot: 'another-boot' });
    await assert.rejects(
      () => acquireLock(tmp.dir),
      (e: unknown) => e instanceof StoreError && e.code === 'LOCKED' && e.message.includes(`on host ${me.host}-elsewhere`),
    );
    writeLock({ ...me, pid: process.pid + 1, pidns: (me.pidns ?? 1) + 1, boot: 'an-earlier-boot' });
    const release = await acquireLock(tmp.dir);
    assert.equal(parseOwner(fs.readFileSync(lockFile(), 'utf8'))?.pid, process.pid);
    release();
    assert.deepEqual(fs.readdirSync(tmp.dir), []);
  });

  it('a holder that died but was never reaped (a zombie: signal 0 still reaches it) is taken over', async function () {
    if (process.platform !== 'linux') this.skip();
    // `sh` starts a short program in the background, then becomes a long `sleep` that never reaps
    // it: once the short one exits it is a zombie whose pid signal 0 still answers for.
    const parent = spawn('sh', ['-c', 'sleep 0.05 & echo $!; exec sleep 30'], { stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      const zombie = Number(await new Promise<string>((resolve) => parent.stdout!.once('data', (d) => resolve(String(d).trim()))));
      for (let i = 0; i < 200 && !fs.readFileSync(`/proc/${zombie}/stat`, 'latin1').includes(') Z '); i++) await new Promise((r) => setTimeout(r, 10));
      assert.match(fs.readFileSync(`/proc/${zombie}/stat`, 'latin1'), /\) Z /, 'the holder is a zombie');
      process.kill(zombie, 0); // what the old check asked: it still answers
      writeLock({ ...thisOwner(), pid: zombie });
      (await acquireLock(tmp.dir))();
    } finally {
      parent.kill();
    }
  });

  it('still reads an old lock (a bare pid): dead is taken over, alive holds', async () => {
    fs.writeFileSync(lockFile(), String(await deadPid()));
    (await acquireLock(tmp.dir))();
    const holder = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 10000)']);
    try {
      fs.writeFileSync(lockFile(), String(holder.pid));
      await assert.rejects(
        () => acquireLock(tmp.dir),
        (e: unknown) => e instanceof StoreError && e.code === 'LOCKED' && e.message.includes(`in use by process ${holder.pid}. Close that Arbor`),
      );
    } finally {
      holder.kill();
    }
  });

  it('a holder in its own PID namespace (unshare --pid) keeps the lock from this one; once it is killed with its namespace, a holder in a new namespace takes it over', async function () {
    if (spawnSync('unshare', ['--pid', '--fork', '--mount-proc', 'true']).status !== 0) this.skip(); // needs root (or user namespaces) and util-linux
    const hold = `require(${JSON.stringify(LOCK_MODULE)}).acquireLock(${JSON.stringify(tmp.dir)}).then(() => console.log('held')); setInterval(() => {}, 1000);`;
    const first = spawn('unshare', ['--pid', '--fork', '--kill-child', '--mount-proc', process.execPath, '-e', hold], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      await new Promise<void>((resolve) => first.stdout!.on('data', () => resolve()));
      await assert.rejects(
        () => acquireLock(tmp.dir),
        (e: unknown) => e instanceof StoreError && e.code === 'LOCKED' && /in another PID namespace/.test(e.message),
      );
    } finally {
      first.kill('SIGKILL'); // --kill-child: its child, pid 1 of the namespace, goes, and with it the whole namespace
      await new Promise((r) => first.on('close', r));
    }
    const script = `require(${JSON.stringify(LOCK_MODULE)}).acquireLock(${JSON.stringify(tmp.dir)}).then(() => console.log('won'), (e) => console.log(e.code + ' ' + e.message));`;
    for (let i = 0; i < 40; i++) {
      const r = spawnSync('unshare', ['--pid', '--fork', '--mount-proc', process.execPath, '-e', script], { encoding: 'utf8' });
      if (r.stdout.trim() === 'won') return;
      await new Promise((res) => setTimeout(res, 50)); // the killed namespace's last process may still be exiting
    }
    assert.fail('a holder in a new namespace could not take over the lock of one killed with its namespace');
  });
});
