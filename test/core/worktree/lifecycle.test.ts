// The worktree lifecycle through `harness.worktrees` (decision 0060), with real git: diff,
// apply without and with a conflict (a conflict changes nothing), discard, keep, cleanup with
// the node, cold resume rooted in the worktree again, and isolation from a workflow's agent()
// and from an agent file.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { makeHarness } from '../../support/harness';
import { ofType } from '../subagent/helpers';
import { gitIn, placeOf, read, results, worktreeWorld } from './fixture';

const write = (p: string, content: string) => ({ toolCalls: [{ name: 'write_file', arguments: { path: p, content } }] });

describe('worktree lifecycle: review, apply, discard, keep', () => {
  const w = worktreeWorld();

  /** A one-shot worktree child that writes `files` (relative to its root) and settles. */
  async function childThatWrites(files: Record<string, string>, label = 'edit'): Promise<string> {
    w.script.on('c', ...Object.entries(files).map(([p, c]) => write(p, c)), { text: 'edited' });
    const run = await w.t.h.subagents.start(w.root, 'spawn', { prompt: '[[c]] edit', label, isolation: 'worktree' });
    await run.result;
    await run.dispose();
    return run.id;
  }

  it('diff shows base and child content per file and a unified diff; list counts the files', async () => {
    const id = await childThatWrites({ 'a.txt': 'one\ntwo\nthree\n', 'added.txt': 'new file\n' });
    const { files, listing } = await w.t.h.worktrees.diff(id);
    assert.deepEqual(
      files.map((f) => [f.path, f.status, f.before, f.after]),
      [
        ['a.txt', 'modified', 'one\ntwo\n', 'one\ntwo\nthree\n'],
        ['added.txt', 'added', undefined, 'new file\n'],
      ],
    );
    assert.match(files[0].unified, /^\+three$/m);
    assert.equal(listing.state, 'open');
    assert.equal(listing.filesChanged, 2);
    const [l] = await w.t.h.worktrees.list();
    assert.deepEqual([l.id, l.state, l.nodeExists, l.folderExists, l.filesChanged], [id, 'open', true, true, 2]);
  });

  it('apply merges into the working tree (no commit, index untouched), then removes worktree and branch', async () => {
    const id = await childThatWrites({ 'keep.txt': 'k1\nk2\nk3\nk4\nCHILD\n', 'added.txt': 'new file\n' });
    const place = await placeOf(w, id);
    // The parent changed another line of the same file meanwhile: a clean 3-way merge.
    fs.writeFileSync(path.join(w.ws, 'keep.txt'), 'PARENT\nk2\nk3\nk4\nk5\n');
    const head = gitIn(w.ws, 'rev-parse', 'HEAD');
    const index = fs.readFileSync(path.join(w.ws, '.git', 'index'));
    const r = await w.t.h.worktrees.apply(id);
    assert.deepEqual(r, { applied: true, files: ['added.txt', 'keep.txt'] });
    assert.equal(read(path.join(w.ws, 'keep.txt')), 'PARENT\nk2\nk3\nk4\nCHILD\n');
    assert.equal(read(path.join(w.ws, 'added.txt')), 'new file\n');
    assert.equal(read(path.join(w.ws, 'a.txt')), 'one\ntwo\n', 'untouched by the child: the parent version stays');
    assert.equal(gitIn(w.ws, 'rev-parse', 'HEAD'), head);
    assert.deepEqual(fs.readFileSync(path.join(w.ws, '.git', 'index')), index);
    assert.equal(fs.existsSync(place.path), false);
    assert.equal(gitIn(w.ws, 'branch', '--list', place.branch), '');
    const states = ofType((await w.t.h.readSession(id)).events, 'worktree').map((e) => e.state);
    assert.deepEqual(states, ['open', 'applied']);
    assert.equal((await w.t.h.worktrees.list())[0].state, 'applied');
    await assert.rejects(w.t.h.worktrees.apply(id), /already applied/);
  });

  it('attack: apply never writes through a link planted where its temporary file goes (outside the workspace stays untouched)', async () => {
    const id = await childThatWrites({ 'keep.txt': 'k1\nk2\nk3\nk4\nCHILD\n' });
    // Something in the workspace (a sibling's command) plants links at every name apply's
    // temporary file could take, each pointing at a file outside the workspace.
    const outside = path.join(path.dirname(w.ws), 'outside.txt');
    fs.writeFileSync(outside, 'the user file outside\n');
    fs.symlinkSync(outside, path.join(w.ws, `.arbor-apply-${process.pid}-keep.txt`));
    const r = await w.t.h.worktrees.apply(id);
    assert.equal(r.applied, true);
    assert.equal(read(outside), 'the user file outside\n', 'nothing is written outside the workspace');
    assert.equal(read(path.join(w.ws, 'keep.txt')), 'k1\nk2\nk3\nk4\nCHILD\n');
    assert.equal(fs.lstatSync(path.join(w.ws, 'keep.txt')).isFile(), true, 'the file itself, not a link put in its place');
  });

  it('attack: a subtree rewind after the worktree child was applied says its worktree is gone, and writes nothing there', async () => {
    w.script.on('root', { text: 'hi' });
    await w.root.accept('[[root]] hi');
    await w.t.h.settle();
    const id = await childThatWrites({ 'keep.txt': 'k1\nk2\nk3\nk4\nCHILD\n' });
    const place = await placeOf(w, id);
    await w.t.h.settle();
    assert.equal((await w.t.h.worktrees.apply(id)).applied, true);
    const plan = await w.t.h.checkpoints.plan({ sessionId: w.root.id, toSeq: 0, subtree: true });
    assert.deepEqual(
      plan.files.map((f) => [f.relative, f.conflict?.reason]),
      [['keep.txt', 'unavailable']],
    );
    assert.match(plan.files[0].conflict?.text ?? '', /worktree .*is gone/);
    const out = await w.t.h.checkpoints.apply(plan, {}, 'restore');
    assert.deepEqual(out.restored, []);
    assert.equal(fs.existsSync(place.path), false, 'no half worktree is made again');
    assert.equal(read(path.join(w.ws, 'keep.txt')), 'k1\nk2\nk3\nk4\nCHILD\n', 'the applied change stays, as the plan said');
  });

  it('apply with a conflict changes nothing and returns the conflicts (never auto-resolved)', async () => {
    const id = await childThatWrites({ 'a.txt': 'one\nCHILD\n', 'added.txt': 'new file\n' });
    const place = await placeOf(w, id);
    fs.writeFileSync(path.join(w.ws, 'a.txt'), 'one\nPARENT\n');
    const status = gitIn(w.ws, 'status', '--porcelain');
    const r = await w.t.h.worktrees.apply(id);
    assert.equal(r.applied, false);
    assert.ok(!r.applied);
    assert.deepEqual(
      r.conflicts.map((c) => c.path),
      ['a.txt'],
    );
    assert.match(r.conflicts[0].message, /CONFLICT \(content\)/);
    assert.equal(read(path.join(w.ws, 'a.txt')), 'one\nPARENT\n');
    assert.equal(fs.existsSync(path.join(w.ws, 'added.txt')), false, 'nothing of the clean part was written either');
    assert.equal(gitIn(w.ws, 'status', '--porcelain'), status);
    assert.equal(fs.existsSync(place.path), true, 'the worktree stays for the user to resolve');
    assert.equal((await w.t.h.worktrees.list())[0].state, 'open');
  });

  it('discard removes worktree and branch; keep commits onto the branch and keeps it', async () => {
    const gone = await childThatWrites({ 'x.txt': 'x\n' }, 'gone');
    const kept = await childThatWrites({ 'y.txt': 'y\n' }, 'kept');
    const g = await placeOf(w, gone);
    const k = await placeOf(w, kept);
    await w.t.h.worktrees.discard(gone);
    assert.equal(fs.existsSync(g.path), false);
    assert.equal(gitIn(w.ws, 'branch', '--list', g.branch), '');
    const r = await w.t.h.worktrees.keep(kept);
    assert.equal(r.branch, k.branch);
    assert.equal(fs.existsSync(k.path), false);
    assert.equal(gitIn(w.ws, 'show', `${k.branch}:y.txt`), 'y\n');
    assert.equal(gitIn(w.ws, 'rev-parse', `${k.branch}^`).trim(), k.base, 'the kept work sits on the base');
    const list = await w.t.h.worktrees.list();
    assert.deepEqual(
      list.map((l) => [l.id, l.state]).sort(),
      [
        [gone, 'discarded'],
        [kept, 'kept'],
      ].sort(),
    );
    assert.equal(list.find((l) => l.id === kept)?.filesChanged, 1);
    // A kept branch can still be reviewed and applied.
    assert.deepEqual(
      (await w.t.h.worktrees.diff(kept)).files.map((f) => f.path),
      ['y.txt'],
    );
    assert.deepEqual(await w.t.h.worktrees.apply(kept), { applied: true, files: ['y.txt'] });
    assert.equal(read(path.join(w.ws, 'y.txt')), 'y\n');
  });

  it("a kept child whose changes git cannot list says so, never '0 files changed'", async () => {
    const kept = await childThatWrites({ 'z.txt': 'z\n' }, 'kept');
    const k = await placeOf(w, kept);
    await w.t.h.worktrees.keep(kept);
    // Its commit's object gone (a broken clone, a disk error): git's diff of the branch fails.
    const head = gitIn(w.ws, 'rev-parse', k.branch).trim();
    fs.rmSync(path.join(w.ws, '.git', 'objects', head.slice(0, 2), head.slice(2)));
    const l = (await w.t.h.worktrees.list()).find((x) => x.id === kept);
    assert.equal(l?.state, 'kept');
    assert.equal(l?.filesChanged, undefined, 'no count where git could not count');
    assert.match(l?.changesUnread ?? '', /its changes could not be listed \(git .*\); nothing was discarded: see its branch arbor\/.* with git/);
  });

  it('deleting the node removes its worktree and branch', async () => {
    const id = await childThatWrites({ 'x.txt': 'x\n' });
    const place = await placeOf(w, id);
    await w.t.h.deleteSession(id);
    assert.equal(fs.existsSync(place.path), false);
    assert.equal(gitIn(w.ws, 'branch', '--list', place.branch), '');
    assert.deepEqual(await w.t.h.worktrees.list(), []);
    assert.deepEqual(await w.t.h.worktrees.orphans(), []);
  });

  it('a cold resume (another harness on the same store) roots the child in its worktree again', async () => {
    w.script.on('c', write('first.txt', '1\n'), { text: 'first done' });
    const { childId } = await w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: '[[c]] start', isolation: 'worktree' });
    await w.t.h.settle();
    const place = await placeOf(w, childId);
    await w.t.h.close();
    const t2 = await makeHarness(w.server, { workspace: [w.ws], storeDir: w.t.storeDir, releaseDelayMs: 5 });
    try {
      w.script.on('c', write(path.join(w.ws, 'a.txt'), 'HACK\n'), write('second.txt', '2\n'), { text: 'second done' });
      const r = await t2.h.send(childId, '[[c]] more');
      assert.ok(r);
      await t2.h.settle();
      const res = ofType(await t2.h.store.readEvents(childId), 'tool/result');
      assert.deepEqual(
        res.map((x) => x.isError),
        [false, true, false],
      );
      assert.equal(read(path.join(place.root, 'second.txt')), '2\n');
      assert.equal(read(path.join(w.ws, 'a.txt')), 'one\ntwo\n');
      assert.equal(fs.existsSync(path.join(w.ws, 'second.txt')), false);
    } finally {
      await t2.h.close();
    }
  });

  it("a workflow's agent() and an agent file start children in worktrees", async () => {
    fs.mkdirSync(path.join(w.ws, '.arbor', 'agents'), { recursive: true });
    fs.writeFileSync(path.join(w.ws, '.arbor', 'agents', 'iso.md'), '---\nname: iso\ndescription: works apart\nisolation: worktree\n---\nYou work apart.\n');
    w.t.h.project.refresh();
    w.script.on('f', write('from-file.txt', 'f\n'), { text: 'file agent done' });
    const run = await w.t.h.subagents.start(w.root, 'spawn', { prompt: '[[f]] go', agent: 'iso' });
    await run.result;
    await run.dispose();
    assert.equal(read(path.join((await placeOf(w, run.id)).root, 'from-file.txt')), 'f\n');

    const script = "const r = await agent('[[wa]] go', { label: 'wf', isolation: 'worktree' }); return r;";
    w.script.on(
      'root',
      { toolCalls: [{ name: 'workflow', arguments: { script, meta: { name: 'iso', description: 'one isolated agent' } } }] },
      { text: 'root done' },
    );
    w.script.on('wa', write('from-wf.txt', 'w\n'), { text: 'wf agent done' });
    await w.root.accept('[[root]] run it');
    await w.t.h.settle();
    const wfChild = w.t.h.store.descendants(w.root.id).find((h) => h.id !== run.id);
    assert.ok(wfChild);
    const place = await placeOf(w, wfChild.id);
    assert.equal(read(path.join(place.root, 'from-wf.txt')), 'w\n');
    assert.equal(fs.existsSync(path.join(w.ws, 'from-wf.txt')), false);
    assert.deepEqual((await w.t.h.worktrees.list()).map((l) => l.id).sort(), [run.id, wfChild.id].sort());
    assert.ok((await results(w, w.root.id)).some((r) => r.name === 'workflow' && !r.isError));
  });
});
