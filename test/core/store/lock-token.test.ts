import * as assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { StoreError } from '../../../src/core/store/errors';
import { acquireLock } from '../../../src/core/store/lock';
import { parseOwner } from '../../../src/core/store/lock-owner';
import { LiveToken, tokenState } from '../../../src/core/store/lock-token';
import { Store } from '../../../src/core/store/store';
import { eventsFor, rootHeader, tempDir } from '../../support/store-fixtures';

// The lock's liveness token (decision 0098, amended): a Unix socket the holder listens on. Tried
// as an attacker would: from a PID namespace that cannot see the holder's pid, with the holder's
// pid handed to an unrelated process, with a lock that names something else to ask, a holder
// stopped with SIGSTOP, a store folder too deep for a socket's path — and by a reader of every
// file of a live store folder, which a FIFO token would have left waiting for good.

const LOCK_MODULE = path.join(__dirname, '..', '..', '..', 'src', 'core', 'store', 'lock');
const STORE_MODULE = path.join(__dirname, '..', '..', '..', 'src', 'core', 'store', 'store');

const canUnshare = () => process.platform === 'linux' && spawnSync('unshare', ['--pid', '--fork', '--mount-proc', 'true']).status === 0;
const boot = () => fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();

/** What `acquireLock(dir)` does in a new PID namespace (its own /proc: this process's pid means nothing there). */
function acquireInChildNamespace(dir: string): string {
  const script = `require(${JSON.stringify(LOCK_MODULE)}).acquireLock(${JSON.stringify(dir)}).then(() => console.log('won'), (e) => console.log(e.code + ' ' + e.message));`;
  const r = spawnSync('unshare', ['--pid', '--fork', '--mount-proc', process.execPath, '-e', script], { encoding: 'utf8', timeout: 30_000 });
  return r.stdout.trim();
}

/** A process that opens a store in `dir` and holds it, once it says so. */
async function holder(dir: string): Promise<ReturnType<typeof spawn>> {
  const hold = `require(${JSON.stringify(STORE_MODULE)}).Store.open(${JSON.stringify(dir)}).then(() => console.log('held')); setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['-e', hold], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`the holder exited (${code}) before it held the store`)));
  });
  return child;
}

const tokens = (dir: string) => fs.readdirSync(dir).filter((n) => n.startsWith('arbor.lock.live-'));

describe('store lock: the holder’s liveness token', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => (tmp = tempDir('arbor-lock-token-')));
  afterEach(() => tmp.remove());
  const lockFile = () => path.join(tmp.dir, 'arbor.lock');

  it('an open store names a socket it listens on; closing it removes the lock and the socket', async () => {
    const store = await Store.open(tmp.dir);
    try {
      const owner = parseOwner(fs.readFileSync(lockFile(), 'utf8'));
      assert.ok(owner?.live, 'the lock names a token');
      assert.ok(fs.lstatSync(path.join(tmp.dir, owner.live)).isSocket());
      assert.equal(await tokenState(tmp.dir, owner.live), 'alive');
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
    // Once it is closed, the child namespace takes the store.
    assert.equal(acquireInChildNamespace(tmp.dir), 'won');
  });

  it('a store folder deeper than a socket path may be: the token answers all the same, to a child namespace too', async () => {
    const deep = path.join(tmp.dir, ...Array.from({ length: 6 }, (_, i) => `a-rather-long-folder-name-${i}`));
    fs.mkdirSync(deep, { recursive: true });
    assert.ok(Buffer.byteLength(path.join(deep, 'arbor.lock.live-0123456789abcdef')) > 108, 'past sun_path');
    const store = await Store.open(deep);
    try {
      const owner = parseOwner(fs.readFileSync(path.join(deep, 'arbor.lock'), 'utf8'));
      assert.ok(owner?.live);
      assert.ok(fs.lstatSync(path.join(deep, owner.live)).isSocket(), 'the socket is in the store folder');
      assert.equal(await tokenState(deep, owner.live), 'alive');
      if (canUnshare()) assert.match(acquireInChildNamespace(deep), /^LOCKED .*in another PID namespace/);
    } finally {
      await store.close();
    }
    assert.deepEqual(tokens(deep), []);
  });

  it('a holder stopped with SIGSTOP still holds by its token alone, asked past its queue; killed with SIGKILL, its lock and token are taken over', async () => {
    const held = await holder(tmp.dir);
    try {
      held.kill('SIGSTOP');
      // Its pid told to mean nothing (dead here): only the token can say it runs.
      const dead = spawn(process.execPath, ['-e', '0']);
      await new Promise((r) => dead.on('close', r));
      const text = fs.readFileSync(lockFile(), 'utf8');
      const owner = parseOwner(text)!;
      fs.writeFileSync(lockFile(), JSON.stringify({ ...owner, pid: dead.pid }));
      // A stopped listener accepts nothing: every connect waits in its queue (511 long), and past it the kernel says EAGAIN.
      for (let i = 0; i < 600; i++) assert.equal(await tokenState(tmp.dir, owner.live!), 'alive', `ask ${i}`);
      await assert.rejects(
        () => acquireLock(tmp.dir),
        (e: unknown) => e instanceof StoreError && e.code === 'LOCKED' && e.message.includes(`in use by process ${dead.pid}`),
      );
      fs.writeFileSync(lockFile(), text);
    } finally {
      held.kill('SIGKILL');
      await new Promise((r) => held.on('close', r));
    }
    const stale = parseOwner(fs.readFileSync(lockFile(), 'utf8'))!;
    assert.ok(stale.live && tokens(tmp.dir).includes(stale.live), 'the dead holder left its token');
    // Its pid handed out again: an unrelated process runs under it (as after a crash and a busy hour).
    const unrelated = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)']);
    try {
      fs.writeFileSync(lockFile(), JSON.stringify({ ...stale, pid: unrelated.pid }));
      const release = await acquireLock(tmp.dir);
      const now = parseOwner(fs.readFileSync(lockFile(), 'utf8'));
      assert.equal(now?.pid, process.pid);
      assert.ok(now?.live && now.live !== stale.live, 'the new holder names a token of its own');
      assert.deepEqual(tokens(tmp.dir), [now.live], 'the dead holder’s token is removed; the new holder’s is all');
      release();
    } finally {
      unrelated.kill();
    }
  });

  it('a live holder’s token holds even when its recorded pid is dead here; the refused acquire leaves no token of its own', async () => {
    const token = await LiveToken.make(tmp.dir);
    assert.ok(token, 'a socket can be made here');
    try {
      const dead = spawn(process.execPath, ['-e', '0']);
      await new Promise((r) => dead.on('close', r));
      fs.writeFileSync(lockFile(), JSON.stringify({ pid: dead.pid, pidns: 1, boot: boot(), host: 'x', live: token.name }));
      await assert.rejects(
        () => acquireLock(tmp.dir),
        (e: unknown) => e instanceof StoreError && e.code === 'LOCKED' && e.message.includes(`in use by process ${dead.pid}`),
      );
      // The refused acquire made a token of its own before it asked (acquireLock owns it) and closed it.
      assert.deepEqual(tokens(tmp.dir), [token.name], 'only the holder’s token is left');
    } finally {
      token.close();
    }
  });

  it('a lock naming anything but a token socket in its folder asks nothing else: it is judged by its pid', async () => {
    const outside = path.join(tmp.dir, 'elsewhere');
    fs.mkdirSync(outside);
    // A live listener elsewhere, which a lock must not borrow to look alive.
    const elsewhere = net.createServer((s) => s.destroy());
    await new Promise<void>((r) => elsewhere.listen(path.join(outside, 'sock'), r));
    try {
      // A token-named regular file, a path out of the folder, a link to the live socket elsewhere.
      fs.writeFileSync(path.join(tmp.dir, 'arbor.lock.live-00000000000000aa'), '');
      fs.symlinkSync(path.join(outside, 'sock'), path.join(tmp.dir, 'arbor.lock.live-00000000000000bb'));
      for (const live of ['arbor.lock.live-00000000000000aa', '../elsewhere/sock', 'arbor.lock.live-00000000000000bb']) {
        assert.equal(await tokenState(tmp.dir, live), 'unknown', live);
        // Judged by its pid: a dead one is taken over (the link to a live socket did not make it look alive).
        const dead = spawn(process.execPath, ['-e', '0']);
        await new Promise((r) => dead.on('close', r));
        fs.writeFileSync(lockFile(), JSON.stringify({ pid: dead.pid, boot: boot(), live }));
        (await acquireLock(tmp.dir))();
      }
      assert.equal(parseOwner(JSON.stringify({ pid: 5, live: '../x' }))?.live, undefined, 'a name that is not a token’s is not read');
    } finally {
      elsewhere.close();
    }
  });

  it('a reader of every file of a live store folder (a backup, a grep -r) never waits on the token', async () => {
    const store = await Store.open(tmp.dir);
    try {
      await store.createSession(rootHeader('r'), eventsFor('r', 0, 5));
      assert.equal(tokens(tmp.dir).length, 1, 'the folder holds the live token');
      // Open and read every entry, as a naive tool does; a FIFO token left this waiting for a writer for good.
      const script = `const fs = require('fs'), path = require('path'); let n = 0;
        const walk = (d) => { for (const e of fs.readdirSync(d)) { const p = path.join(d, e);
          if (fs.lstatSync(p).isDirectory()) { walk(p); continue; }
          try { fs.readFileSync(p); n++; } catch (err) { n++; } } };
        walk(${JSON.stringify(tmp.dir)}); console.log(n);`;
      const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 20_000 });
      assert.equal(r.signal, null, 'the reader finished');
      assert.ok(Number(r.stdout.trim()) >= 3, `it read every entry (${r.stdout.trim()})`);
    } finally {
      await store.close();
    }
  });

  it('tokens left without their lock (the lock deleted by hand, a contender that died) are removed by the next holder; a live one is kept', async () => {
    // A dead one: its listener closed without removing the file (what a SIGKILL leaves).
    const deadName = 'arbor.lock.live-00000000000000dd';
    const dead = net.createServer();
    await new Promise<void>((r) => dead.listen(path.join(tmp.dir, deadName), r));
    const deadFile = path.join(tmp.dir, deadName);
    const copy = `${deadFile}.keep`;
    fs.renameSync(deadFile, copy); // close() would unlink it: keep the socket file aside, then put it back
    await new Promise((r) => dead.close(r));
    fs.renameSync(copy, deadFile);
    assert.equal(await tokenState(tmp.dir, deadName), 'gone');
    const live = await LiveToken.make(tmp.dir);
    assert.ok(live);
    try {
      const store = await Store.open(tmp.dir);
      const mine = parseOwner(fs.readFileSync(lockFile(), 'utf8'))!.live!;
      assert.deepEqual(tokens(tmp.dir).sort(), [live.name, mine].sort(), 'the dead one removed, the live one and the holder’s own kept');
      await store.close();
    } finally {
      live.close();
    }
  });

  it('a lock that is a link to nothing is refused, saying so, at once (it never spins)', async () => {
    fs.symlinkSync(path.join(tmp.dir, 'nowhere'), lockFile());
    await assert.rejects(
      () => acquireLock(tmp.dir),
      (e: unknown) => e instanceof StoreError && e.code === 'LOCKED' && /symbolic link to nothing; delete that link/.test(e.message),
    );
    assert.deepEqual(
      fs.readdirSync(tmp.dir).filter((n) => n !== 'arbor.lock'),
      [],
      'nothing left beside it',
    );
  });

  it('a store opened by a relative path names a token that answers', async () => {
    const rel = path.relative(process.cwd(), tmp.dir);
    const store = await Store.open(rel);
    try {
      const owner = parseOwner(fs.readFileSync(lockFile(), 'utf8'));
      assert.equal(await tokenState(tmp.dir, owner!.live!), 'alive');
    } finally {
      await store.close();
    }
  });
});
