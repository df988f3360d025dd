// A worktree whose files are written after its start (decisions 0089, 0093: a placed child's
// local worktree): its entry and branch exist at once, `filled` writes its files (exactly what a
// plain worktree holds) for its first reader, a fill cut short is written again, removal waits
// for a fill, and the child's changes move an unread one by its branch alone.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { moveLocal } from '../../../src/core/placement/placed-provider';
import { removeWorktree } from '../../../src/core/worktree/checkout';
import { filled, markUnfilled, moveUnfilled, unfilledMark } from '../../../src/core/worktree/filling';
import { linkedWorktreeAt, RepoStateCache } from '../../../src/core/worktree/repo-state';
import { gitIn, worktreeIn } from './fixture';

describe('worktree files written later (a placed child’s local worktree)', () => {
  let dir: string;
  let ws: string;
  let wts: string;
  beforeEach(() => {
    dir = fs.realpathSync(fs.mkdtempSync('/var/tmp/arbor-wt-later-'));
    ws = path.join(dir, 'ws');
    wts = path.join(dir, 'worktrees');
    // 300 files in 10 folders, committed; then one changed and one new (uncommitted: the base holds them).
    for (let d = 0; d < 10; d++) {
      fs.mkdirSync(path.join(ws, `pkg${d}`), { recursive: true });
      for (let f = 0; f < 30; f++) fs.writeFileSync(path.join(ws, `pkg${d}`, `f${f}.ts`), `export const v = ${d * 100 + f};\n`);
    }
    gitIn(ws, 'init', '-q', '-b', 'main');
    gitIn(ws, 'add', '-A');
    gitIn(ws, 'commit', '-qm', 'first');
    fs.writeFileSync(path.join(ws, 'pkg3', 'f7.ts'), 'changed\n');
    fs.writeFileSync(path.join(ws, 'new.txt'), 'fresh\n');
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const repos = new RepoStateCache();
  const create = (name: string, filesLater: boolean) => worktreeIn(ws, wts, name, { repos, ...(filesLater ? { filesLater } : {}) });

  /** What a worktree holds: every tracked path with its content, and whether git sees it clean. */
  const contents = (wt: string) => {
    const files = gitIn(wt, 'ls-files', '-z').split('\0').filter(Boolean).sort();
    return { files: files.map((f) => `${f}=${fs.readFileSync(path.join(wt, f), 'utf8')}`), status: gitIn(wt, 'status', '--porcelain') };
  };

  /** A child's change as a commit on `base` (what a collect brings back), made in the parent repository. */
  const childCommit = (base: string, file: string, text: string): string => {
    const idx = path.join(dir, `index-${Math.random().toString(36).slice(2)}`);
    const env = { ...process.env, GIT_INDEX_FILE: idx };
    const blob = execFileSync('git', ['hash-object', '-w', '--stdin'], { cwd: ws, input: text, encoding: 'utf8' }).trim();
    execFileSync('git', ['read-tree', base], { cwd: ws, env });
    execFileSync('git', ['update-index', '--add', '--cacheinfo', `100644,${blob},${file}`], { cwd: ws, env });
    const tree = execFileSync('git', ['write-tree'], { cwd: ws, env, encoding: 'utf8' }).trim();
    return execFileSync('git', ['-c', 'user.name=c', '-c', 'user.email=c@c', 'commit-tree', tree, '-p', base, '-m', 'child'], {
      cwd: ws,
      encoding: 'utf8',
    }).trim();
  };

  it('an unread worktree moves by its branch alone: nothing written; its first reader writes the new HEAD, exactly', async () => {
    const place = await create('moved', true);
    assert.deepEqual(fs.readdirSync(place.path), ['.git'], 'made without its files (decision 0093)');
    const commit = childCommit(place.base, 'pkg1/f2.ts', 'the child wrote this\n');
    await moveLocal({ path: place.path, head: place.base }, commit);
    assert.deepEqual(fs.readdirSync(place.path), ['.git'], 'moved without a file written');
    assert.equal(gitIn(ws, 'rev-parse', place.branch).trim(), commit, 'its branch is at the child’s commit');
    assert.equal(fs.existsSync(unfilledMark(place.path)), true, 'still marked: its first reader fills it');
    await filled(place.path);
    assert.equal(fs.readFileSync(path.join(place.path, 'pkg1', 'f2.ts'), 'utf8'), 'the child wrote this\n');
    assert.equal(fs.readFileSync(path.join(place.path, 'pkg3', 'f7.ts'), 'utf8'), 'changed\n', 'and the base’s files');
    assert.equal(gitIn(place.path, 'status', '--porcelain'), '', 'exactly its HEAD');
    // Read once, it has its files: the next change moves them (reset), as any worktree's.
    const next = childCommit(commit, 'pkg1/f2.ts', 'a follow-up\n');
    await moveLocal({ path: place.path, head: commit }, next);
    assert.equal(fs.readFileSync(path.join(place.path, 'pkg1', 'f2.ts'), 'utf8'), 'a follow-up\n');
    assert.equal(gitIn(place.path, 'status', '--porcelain'), '');
  });

  it('a reader arriving while the branch moves waits for it, then writes the moved HEAD (never the old one)', async () => {
    const place = await create('race', true);
    const commit = childCommit(place.base, 'race.txt', 'moved\n');
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const moving = moveUnfilled(place.path, async () => {
      await gate; // the move is under way when the reader arrives
      gitIn(place.path, 'update-ref', 'HEAD', commit, place.base);
    });
    assert.ok(moving, 'an unread worktree is moved by its branch');
    const reader = filled(place.path);
    assert.equal(
      moveUnfilled(place.path, async () => undefined),
      false,
      'one move or fill at a time',
    );
    release();
    await Promise.all([moving, reader]);
    assert.equal(fs.readFileSync(path.join(place.path, 'race.txt'), 'utf8'), 'moved\n');
    assert.equal(gitIn(place.path, 'status', '--porcelain'), '');
    assert.equal(
      moveUnfilled(place.path, async () => undefined),
      false,
      'a worktree with its files is moved as any',
    );
  });

  it('a commit whose objects did not all arrive is refused before the branch moves', async () => {
    const place = await create('torn', true);
    const commit = childCommit(place.base, 'torn.txt', 'a blob that will be lost\n');
    const blob = gitIn(ws, 'rev-parse', `${commit}:torn.txt`).trim();
    fs.rmSync(path.join(ws, '.git', 'objects', blob.slice(0, 2), blob.slice(2)));
    await assert.rejects(moveLocal({ path: place.path, head: place.base }, commit), /missing blob/);
    assert.equal(gitIn(ws, 'rev-parse', place.branch).trim(), place.base, 'the branch did not move');
    await filled(place.path);
    assert.equal(gitIn(place.path, 'status', '--porcelain'), '', 'and it still fills at its base');
  });

  it('a reader arriving while a refused move is under way still gets its files, at the HEAD that stayed', async () => {
    const place = await create('torn-read', true);
    const commit = childCommit(place.base, 'torn.txt', 'a blob that will be lost\n');
    const blob = gitIn(ws, 'rev-parse', `${commit}:torn.txt`).trim();
    fs.rmSync(path.join(ws, '.git', 'objects', blob.slice(0, 2), blob.slice(2)));
    const moving = moveLocal({ path: place.path, head: place.base }, commit);
    // The review asks while the move checks the objects: the move's refusal is the mover's, not the reader's.
    const reader = filled(place.path);
    await assert.rejects(moving, /missing blob/);
    await reader;
    assert.equal(gitIn(place.path, 'rev-parse', 'HEAD').trim(), place.base);
    assert.equal(gitIn(place.path, 'status', '--porcelain'), '', 'filled at the base');
  });

  it('has its entry and branch at once, and once filled exactly the files a plain worktree holds, eight at a time', async () => {
    const plain = await create('plain', false);
    const later = await Promise.all(Array.from({ length: 8 }, (_, i) => create(`later${i}`, true)));
    for (const place of later) {
      // At once: the branch at the base, HEAD on it (what a placed child's sync reads before the files).
      assert.equal(gitIn(ws, 'rev-parse', `${place.branch}`).trim(), place.base);
      assert.equal(gitIn(place.path, 'rev-parse', 'HEAD').trim(), place.base);
    }
    await Promise.all(later.map((p) => filled(p.path)));
    const want = contents(plain.path);
    assert.equal(want.status, '');
    assert.ok(want.files.includes('new.txt=fresh\n') && want.files.includes('pkg3/f7.ts=changed\n'));
    assert.equal(want.files.length, 301);
    for (const place of later) assert.deepEqual(contents(place.path), want, place.path);
    for (const place of later) assert.equal(fs.existsSync(unfilledMark(place.path)), false, `${place.path}: whole, its mark gone`);
  });

  it('writes the files again when a fill was cut short (an entry with no index: Arbor stopped meanwhile)', async () => {
    const plain = await create('plain', false);
    // The entry as `filesLater` makes it, and no fill at all: what a process killed before its fill leaves.
    const cut = path.join(wts, 'cut');
    markUnfilled(cut);
    gitIn(ws, 'worktree', 'add', '--quiet', '--no-checkout', '-b', 'arbor/cut', cut, plain.base);
    assert.equal(fs.existsSync(path.join(cut, 'pkg0')), false);
    await filled(cut);
    assert.deepEqual(contents(cut), contents(plain.path));
    assert.equal(fs.existsSync(unfilledMark(cut)), false, 'whole: its mark is gone');
    // A worktree already whole is left alone: nothing is written again.
    const before = fs.statSync(path.join(cut, 'pkg0', 'f0.ts')).mtimeMs;
    await filled(cut);
    assert.equal(fs.statSync(path.join(cut, 'pkg0', 'f0.ts')).mtimeMs, before);
  });

  it('writes a cut-short worktree once when several callers wait for it at the same time (no second fill racing the first)', async () => {
    const plain = await create('plain', false);
    const cut = path.join(wts, 'cut2');
    markUnfilled(cut);
    gitIn(ws, 'worktree', 'add', '--quiet', '--no-checkout', '-b', 'arbor/cut2', cut, plain.base);
    // After a restart the views, a review and an apply may all ask at once: each sees "no index".
    await Promise.all(Array.from({ length: 4 }, () => filled(cut)));
    assert.deepEqual(contents(cut), contents(plain.path));
  });

  it('never writes over a worktree it did not make without its files, whatever its index (a child’s work stays)', async () => {
    // A worktree child made whole, that worked: one file changed, one new. Its index is not where
    // git keeps it (git ran with GIT_INDEX_FILE, or someone removed it): nothing says its files are
    // missing — they are all there — and a review must not put HEAD's back over the child's work.
    const place = await create('worked', false);
    fs.writeFileSync(path.join(place.path, 'pkg0', 'f0.ts'), 'the child’s work\n');
    fs.writeFileSync(path.join(place.path, 'mine.txt'), 'new\n');
    fs.rmSync(path.join(gitIn(place.path, 'rev-parse', '--path-format=absolute', '--git-dir').trim(), 'index'));
    await filled(place.path);
    assert.equal(fs.readFileSync(path.join(place.path, 'pkg0', 'f0.ts'), 'utf8'), 'the child’s work\n');
    assert.equal(fs.readFileSync(path.join(place.path, 'mine.txt'), 'utf8'), 'new\n');
  });

  it('waits for the fill under way when asked by another spelling of its folder (a symlink on the way)', async () => {
    const place = await create('spelled', true);
    const alias = path.join(dir, 'alias');
    fs.symlinkSync(wts, alias);
    // The fill is recorded by the real path; a caller holding the folder's other name waits for it, never starts a second.
    await Promise.all([filled(path.join(alias, 'spelled')), filled(place.path)]);
    assert.equal(gitIn(place.path, 'status', '--porcelain'), '');
  });

  it('is read from its files at once (top, repository, HEAD) as git would say them, from a folder not yet written too', async () => {
    const place = await create('read', true);
    const known = linkedWorktreeAt(path.join(place.path, 'pkg4', 'deeper'));
    assert.deepEqual(known, {
      top: gitIn(ws, '-C', place.path, 'rev-parse', '--show-toplevel').trim(),
      commonDir: fs.realpathSync(gitIn(place.path, 'rev-parse', '--path-format=absolute', '--git-common-dir').trim()),
      head: place.base,
    });
    assert.equal(path.dirname(known!.commonDir), place.repo);
    // The repository's own checkout (a `.git` folder) and a folder outside any are git's to answer.
    assert.equal(linkedWorktreeAt(ws), undefined);
    assert.equal(linkedWorktreeAt(dir), undefined);
    await filled(place.path);
  });

  it('is removed cleanly while its files are still being written: no folder, no entry, no branch', async () => {
    const place = await create('gone', true);
    const reading = filled(place.path); // a reader's fill under way
    await removeWorktree(place, wts);
    await reading.catch(() => undefined); // (it ended before the folder went: removal waits for it)
    assert.equal(fs.existsSync(place.path), false);
    assert.ok(!gitIn(ws, 'worktree', 'list', '--porcelain').includes(place.path));
    assert.equal(gitIn(ws, 'branch', '--list', place.branch).trim(), '');
    assert.equal(fs.existsSync(unfilledMark(place.path)), false, 'nor its mark');
    await filled(place.path); // (a folder that is gone is its caller's business: no error)
  });
});
