// A worktree whose files are written after its start (decision 0089: a placed child's local
// worktree): its entry and branch exist at once, `filled` resolves when its files are exactly
// what a plain worktree holds, a fill cut short is written again, and removal waits for a fill.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createWorktree, removeWorktree } from '../../../src/core/worktree/checkout';
import { filled } from '../../../src/core/worktree/filling';
import { linkedWorktreeAt, RepoStateCache } from '../../../src/core/worktree/repo-state';
import { gitIn } from './fixture';

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
  const create = (name: string, filesLater: boolean) =>
    createWorktree({
      parentRoot: ws,
      dir: path.join(wts, name),
      branch: `arbor/${name}`,
      excludes: [wts],
      note: name,
      repos,
      ...(filesLater ? { filesLater } : {}),
    });

  /** What a worktree holds: every tracked path with its content, and whether git sees it clean. */
  const contents = (wt: string) => {
    const files = gitIn(wt, 'ls-files', '-z').split('\0').filter(Boolean).sort();
    return { files: files.map((f) => `${f}=${fs.readFileSync(path.join(wt, f), 'utf8')}`), status: gitIn(wt, 'status', '--porcelain') };
  };

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
  });

  it('writes the files again when a fill was cut short (an entry with no index: Arbor stopped meanwhile)', async () => {
    const plain = await create('plain', false);
    // The entry as `filesLater` makes it, and no fill at all: what a process killed before its fill leaves.
    const cut = path.join(wts, 'cut');
    gitIn(ws, 'worktree', 'add', '--quiet', '--no-checkout', '-b', 'arbor/cut', cut, plain.base);
    assert.equal(fs.existsSync(path.join(cut, 'pkg0')), false);
    await filled(cut);
    assert.deepEqual(contents(cut), contents(plain.path));
    // A worktree already whole is left alone: nothing is written again.
    const before = fs.statSync(path.join(cut, 'pkg0', 'f0.ts')).mtimeMs;
    await filled(cut);
    assert.equal(fs.statSync(path.join(cut, 'pkg0', 'f0.ts')).mtimeMs, before);
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
    await removeWorktree(place, wts);
    assert.equal(fs.existsSync(place.path), false);
    assert.ok(!gitIn(ws, 'worktree', 'list', '--porcelain').includes(place.path));
    assert.equal(gitIn(ws, 'branch', '--list', place.branch).trim(), '');
    await filled(place.path); // (a folder that is gone is its caller's business: no error)
  });
});
