// A deleted conversation's checkpoint blobs go with it (decision 0059, amended s57): real store,
// real files, real git. What only the deleted sessions recorded is in no file of the store after;
// what a remaining session, the latest snapshot or a recording under way needs stays.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { forgetBlobs } from '../../../src/core/checkpoint/forget';
import { git } from '../../../src/core/checkpoint/git';
import { blobId, readBlobSync, writeBlobAsSync } from '../../../src/core/checkpoint/objects';
import { Shadows, shadowDirOf } from '../../../src/core/checkpoint/shadow';
import { makeHarness } from '../../support/harness';
import { subagentWorld } from '../subagent/helpers';
import { checkpointsOf, run, startOf, write } from './fixture';

/** Every file under `dir`, its bytes as stored and (when it inflates) inflated. */
function storeBytes(dir: string): { file: string; bytes: Buffer }[] {
  const out: { file: string; bytes: Buffer }[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile()) continue;
    const file = path.join(e.parentPath, e.name);
    let bytes: Buffer;
    try {
      bytes = fs.readFileSync(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue; // a write's temp file, renamed since it was listed
      throw err;
    }
    out.push({ file, bytes });
    try {
      out.push({ file: `${file} (inflated)`, bytes: zlib.inflateSync(bytes) });
    } catch {
      // not a zlib stream
    }
  }
  return out;
}

const holding = (dir: string, secret: string) =>
  storeBytes(dir)
    .filter((f) => f.bytes.includes(secret))
    .map((f) => f.file);

describe('checkpoints: a deleted conversation’s blobs go with it', () => {
  const w = subagentWorld();
  const ws = () => fs.realpathSync(w.t.workspace);
  const file = (rel: string) => path.join(ws(), rel);
  const read = (rel: string) => (fs.existsSync(file(rel)) ? fs.readFileSync(file(rel), 'utf8') : null);
  const shadow = () => shadowDirOf(w.t.storeDir, ws());
  const has = (content: string) => readBlobSync(shadow(), blobId(Buffer.from(content))) !== undefined;

  /** Delete a session and wait for its sweep (it runs after the deletion returns). */
  async function forget(id: string): Promise<void> {
    await w.t.h.deleteSession(id);
    await w.t.h.whenForgotten();
  }

  async function turn(tag: string, ...steps: Parameters<typeof w.script.on>[1][]): Promise<string> {
    const a = await w.t.h.createSession({ title: tag });
    w.script.on(tag, ...steps, { text: 'done' });
    await a.accept(`[[${tag}]] go`);
    await w.t.h.settle();
    return a.id;
  }

  it('the .env a deleted session overwrote is in no file of the store; the latest snapshot stays', async () => {
    const secret = 'TOKEN=s3cret-only-in-the-env';
    fs.writeFileSync(file('.gitignore'), '.env\n');
    fs.writeFileSync(file('.env'), `${secret}\n`);
    fs.writeFileSync(file('kept.txt'), 'the workspace as it is\n');
    const a = await turn('a', { toolCalls: [write('.env', 'TOKEN=\n')] }, { toolCalls: [run('echo made > made.txt')] });
    assert.equal(read('.env'), 'TOKEN=\n');
    assert.ok(holding(w.t.storeDir, secret).length > 0, 'recorded before the deletion (the probe can see it)');

    await forget(a);
    assert.deepEqual(holding(w.t.storeDir, secret), [], 'the old .env is in no file of the store');
    assert.ok((w.t.h.forgotten?.removed ?? 0) > 0 && w.t.h.forgotten?.failed.length === 0, `the sweep removed blobs: ${JSON.stringify(w.t.h.forgotten)}`);
    assert.deepEqual(fs.readdirSync(path.join(shadow(), 'objects', 'pack')), [], 'the shadow never packs');
    // The latest snapshot (the shadow's index) is whole: every blob it names is still there.
    const staged = (await git({ gitDir: shadow(), workTree: shadow() }, ['ls-files', '-z', '--stage'])).stdout.split('\0').filter(Boolean);
    assert.ok(staged.some((l) => l.endsWith('\tkept.txt')) && staged.some((l) => l.endsWith('\tmade.txt')), staged.join(' | '));
    for (const l of staged) assert.ok(readBlobSync(shadow(), l.split(' ')[1]), `the snapshot's blob of ${l} stays`);
    assert.ok(has('the workspace as it is\n') && has('made\n'));
    const fsck = await git({ gitDir: shadow(), workTree: ws() }, ['write-tree']);
    assert.equal(fsck.code, 0, `the index still writes its tree: ${fsck.stderr}`);
  });

  it('a blob another session recorded stays, and that session’s rewind still works', async () => {
    fs.writeFileSync(file('s.txt'), 'orig\n');
    const a = await turn('a', { toolCalls: [write('s.txt', 'mid\n'), write('only-a.txt', 'only A wrote this\n')] });
    const b = await turn('b', { toolCalls: [write('s.txt', 'late\n')] });
    assert.ok(has('orig\n') && has('mid\n') && has('only A wrote this\n'));

    await forget(a);
    assert.equal(has('orig\n'), false, 'only A’s before: removed');
    assert.equal(has('only A wrote this\n'), false, 'only A’s after: removed');
    assert.equal(has('mid\n'), true, 'A’s after is B’s before: stays');
    assert.equal(has('late\n'), true);

    // The user edits s.txt; B's rewind overwrites the edit (asked, chosen): its own record holds it.
    fs.writeFileSync(file('s.txt'), 'the user’s edit\n');
    const plan = await w.t.h.checkpoints.plan({ sessionId: b, toSeq: await startOf(w.t.h, b) });
    assert.deepEqual(
      plan.files.map((f) => [f.relative, f.conflict?.reason]),
      [['s.txt', 'edited-since']],
    );
    await w.t.h.checkpoints.apply(plan, {}, 'restore');
    assert.equal(read('s.txt'), 'mid\n', 'B’s rewind found A’s after (its before)');
    const c = await turn('c', { toolCalls: [write('c.txt', 'c\n')] });
    await forget(c);
    assert.equal(has('the user’s edit\n'), true, 'what the rewind overwrote stays while B does');
    const undo = await w.t.h.checkpoints.planUndo(b, (await w.t.h.checkpoints.lastRewind(b)) ?? -1);
    await w.t.h.checkpoints.apply(undo);
    assert.equal(read('s.txt'), 'the user’s edit\n', 'the rewind’s undo found what it overwrote');
    // B deleted too: its rewind's record and its undo's go with it.
    await forget(b);
    for (const gone of ['mid\n', 'late\n', 'the user’s edit\n']) assert.equal(has(gone), false, `${gone.trim()} went with B`);
  });

  it('attack: bytes stored while a sweep runs are kept; a sweep after their recording ends removes what no log names', async () => {
    const shadows = new Shadows(w.t.storeDir);
    const repo = await shadows.of(ws());
    const bytes = Buffer.from('stored during the sweep\n');
    await repo.storeBlob(bytes); // outside any recording: no pin lasts past the next sweep
    let end: (() => void) | undefined;
    const during = await forgetBlobs({
      storeDir: w.t.storeDir,
      pins: shadows.pins,
      referenced: async () => {
        // A recording begins and hands the same bytes out after the sweep settled its pins and before it removes anything.
        end = shadows.pins.begin();
        repo.storeLater(bytes);
        await repo.settled();
        return new Set();
      },
    });
    assert.equal(during.failed.length, 0, during.failed.join());
    assert.ok(has('stored during the sweep\n'), 'the bytes a recording holds stay');
    end?.();
    const after = await forgetBlobs({ storeDir: w.t.storeDir, pins: shadows.pins, referenced: async () => new Set() });
    assert.ok(after.removed > 0);
    assert.equal(has('stored during the sweep\n'), false, 'its recording ended and no log names it: removed');
    await repo.storeBlob(bytes);
    assert.ok(has('stored during the sweep\n'), 'stored again after the sweep: written anew');
  });

  it('attack: a turn of another session recording the same bytes while the sweep runs keeps them', async () => {
    // Ignored files: no command's snapshot holds them, so B's record in the making is all that needs the blob.
    fs.writeFileSync(file('.gitignore'), '*.env\n');
    const a = await turn('a', { toolCalls: [write('a.env', 'the same bytes\n')] });
    // B's step: its write_file stores the bytes A already stored (the object is there: nothing is
    // written), and a command of the same step holds the step's record back until `go` appears.
    const bAgent = await w.t.h.createSession({ title: 'b' });
    w.script.on('b', { toolCalls: [write('b.env', 'the same bytes\n'), run('while [ ! -f go ]; do sleep 0.05; done')] }, { text: 'done' });
    await bAgent.accept('[[b]] go');
    for (let i = 0; read('b.env') !== 'the same bytes\n'; i++) {
      assert.ok(i < 400, 'b.env written');
      await new Promise((r) => setTimeout(r, 25));
    }
    await new Promise((r) => setTimeout(r, 300)); // the write_file's after-hook has run
    assert.equal(checkpointsOf(bAgent.session.events).length, 0, 'B’s record is not in yet');

    await forget(a);
    assert.ok(has('the same bytes\n'), 'the sweep left the blob B’s step holds');
    fs.writeFileSync(file('go'), '');
    await w.t.h.settle();
    const id = blobId(Buffer.from('the same bytes\n'));
    assert.ok(
      checkpointsOf(bAgent.session.events).some((e) => e.changes.some((c) => c.after === id)),
      'B recorded the bytes',
    );
    assert.ok(has('the same bytes\n'), 'the blob B’s record names survived the sweep');
    // Once B's record is in, its pin goes at the next sweep and its log keeps the blob.
    const c = await turn('c', { toolCalls: [write('c.txt', 'c\n')] });
    await forget(c);
    assert.ok(has('the same bytes\n'));
    assert.equal(has('c\n'), false, 'C’s own blob went: the pins of ended steps do not keep what no log names');
    fs.writeFileSync(file('b.env'), 'the same bytes\n');
    const plan = await w.t.h.checkpoints.plan({ sessionId: bAgent.id, toSeq: await startOf(w.t.h, bAgent.id) });
    assert.ok(
      plan.files.every((f) => f.conflict?.reason !== 'unavailable'),
      JSON.stringify(plan.files.map((f) => [f.relative, f.conflict])),
    );
  });

  it('attack: a deleted session’s step cut by a stop leaves no intent that keeps the .env it overwrote', async () => {
    const secret = 'TOKEN=s3cret-of-a-stopped-step';
    fs.writeFileSync(file('.gitignore'), '.env\n');
    fs.writeFileSync(file('.env'), `${secret}\n`);
    const a = await w.t.h.createSession({ title: 'a' });
    w.script.on('a', { toolCalls: [write('.env', 'TOKEN=\n'), run('sleep 30')] }, { text: 'done' });
    void a.accept('[[a]] go');
    for (let i = 0; read('.env') !== 'TOKEN=\n'; i++) {
      assert.ok(i < 400, '.env written');
      await new Promise((r) => setTimeout(r, 25));
    }
    await new Promise((r) => setTimeout(r, 300));
    await w.t.h.interruptSubtree(a.id);
    await w.t.h.settle();
    assert.ok(holding(w.t.storeDir, secret).length > 0, 'recorded before the deletion (the probe can see it)');
    await forget(a.id);
    assert.deepEqual(holding(w.t.storeDir, secret), [], 'the old .env is in no file of the store');
  });

  it('attack: a tracked file a deleted session overwrote after a command’s snapshot is in no file of the store', async () => {
    const secret = 'PASSWORD=s3cret-in-a-tracked-file';
    fs.writeFileSync(file('config.txt'), `${secret}\n`);
    // A command first (its snapshots put config.txt, secret and all, in the shadow's index), then the overwrite.
    const a = await turn('a', { toolCalls: [run('echo made > made.txt')] }, { toolCalls: [write('config.txt', 'PASSWORD=\n')] });
    assert.equal(read('config.txt'), 'PASSWORD=\n');
    assert.ok(holding(w.t.storeDir, secret).length > 0, 'recorded before the deletion (the probe can see it)');
    await forget(a);
    assert.deepEqual(holding(w.t.storeDir, secret), [], 'the old config.txt is in no file of the store');
    // The shadow still works: a command of another session records its change, and its rewind restores.
    const b = await turn('b', { toolCalls: [run('echo later > config.txt')] });
    assert.equal(read('config.txt'), 'later\n');
    const plan = await w.t.h.checkpoints.plan({ sessionId: b, toSeq: await startOf(w.t.h, b) });
    await w.t.h.checkpoints.apply(plan);
    assert.equal(read('config.txt'), 'PASSWORD=\n', 'B’s rewind restored what it found');
  });

  it('attack: a command run while an earlier shadow is swept keeps its before (a blob only its before tree names)', async () => {
    // Two roots, each with many loose blobs no one needs: sweeping the first takes a while, and a
    // command of a remaining session runs meanwhile in both (its before and after snapshots). Its
    // files' earlier content is in no log (the user's own) and no longer in the index after it:
    // only its before tree names it, which was not pinned yet when the sweep began.
    const other = fs.realpathSync(fs.mkdtempSync(path.join(path.dirname(w.t.storeDir), 'root2-')));
    const roots = [ws(), other];
    const shadows = new Shadows(w.t.storeDir);
    const repos = await Promise.all(roots.map((r) => shadows.of(r)));
    for (const r of roots) fs.writeFileSync(path.join(r, 'f.txt'), `the user’s own ${r}\n`);
    for (const repo of repos) await repo.snapshot(1 << 20);
    for (const r of roots)
      for (let i = 0; i < 4000; i++) writeBlobAsSync(shadowDirOf(w.t.storeDir, r), blobId(Buffer.from(`junk ${i}`)), Buffer.from(`junk ${i}`));
    const sweep = forgetBlobs({ storeDir: w.t.storeDir, pins: shadows.pins, referenced: async () => new Set() });
    const end = shadows.pins.begin(); // the command's step
    const before = await Promise.all(repos.map((repo) => repo.snapshot(1 << 20)));
    for (const r of roots) fs.writeFileSync(path.join(r, 'f.txt'), 'the command’s\n');
    const after = await Promise.all(repos.map((repo) => repo.snapshot(1 << 20)));
    const changes = (await Promise.all(repos.map((repo, i) => repo.diff(before[i].tree, after[i].tree)))).flat();
    const done = await sweep;
    end();
    assert.equal(done.failed.length, 0, done.failed.join());
    assert.ok(done.removed >= 8000, `the junk went: ${done.removed}`);
    assert.equal(changes.length, 2, JSON.stringify(changes));
    for (const c of changes) {
      const gitDir = shadowDirOf(w.t.storeDir, roots.find((r) => c.path.startsWith(r)) as string);
      assert.ok(c.before && readBlobSync(gitDir, c.before)?.toString().startsWith('the user’s own'), `the command’s before of ${c.path} stays`);
    }
  });

  it('a kill -9 between the deletion and the sweep: B intact, the next deletion sweeps the leftovers', async () => {
    fs.writeFileSync(file('s.txt'), 'orig\n');
    const a = await turn('a', { toolCalls: [write('s.txt', 'mid\n'), write('only-a.txt', 'only A wrote this\n')] });
    const b = await turn('b', { toolCalls: [write('s.txt', 'late\n')] });
    const storeDir = w.t.storeDir;
    await w.t.h.close();

    const host = spawn(process.execPath, [path.join(__dirname, '..', '..', 'support', 'crash-forget-host.js'), storeDir, ws(), w.server.baseURL, a], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    host.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const signal = await new Promise((r) => host.once('exit', (_code, sig) => r(sig)));
    assert.equal(signal, 'SIGKILL', `killed in the sweep: ${out}`);
    assert.ok(has('only A wrote this\n') && has('orig\n'), 'the kill came before any blob was removed');

    const t = await makeHarness(w.server, { workspace: [ws()], storeDir });
    try {
      assert.equal(t.h.store.has(a), false, 'the deletion was durable');
      assert.ok(t.h.store.has(b));
      const c = await t.h.createSession({ title: 'c' });
      await t.h.deleteSession(c.id);
      await t.h.whenForgotten();
      assert.equal(has('only A wrote this\n'), false, 'the leftovers went with the next deletion');
      assert.equal(has('orig\n'), false);
      assert.equal(has('mid\n'), true, 'B’s before stays');
      const plan = await t.h.checkpoints.plan({ sessionId: b, toSeq: await startOf(t.h, b) });
      await t.h.checkpoints.apply(plan);
      assert.equal(read('s.txt'), 'mid\n', 'B’s rewind works');
    } finally {
      await t.cleanup();
    }
  });
});
