import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ShadowRepo } from '../../../src/core/checkpoint/shadow';
import { StatIndex, TRUST_SLACK_MS } from '../../../src/core/checkpoint/stat-index';

// A command's snapshots skip git when the root's stat digest is the one taken just before the
// last snapshot (decision 0066). What must hold: every change git would record changes the
// digest — content, new, removed and renamed files at any depth, a `.gitignore` that un-ignores a
// folder — while an ignored folder's churn does not; a digest of entries touched within the
// slack is never trusted (a same-tick change could hide); and a snapshot of an unchanged root
// runs no git, while one after a change (by the user, between two commands) sees it.

const SLACK = 150;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('checkpoints: the stat index that lets a snapshot skip git', () => {
  let dir: string;
  let root: string;
  const put = (rel: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text);
  };
  beforeEach(() => {
    dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-statidx-')));
    root = path.join(dir, 'ws');
    fs.mkdirSync(root);
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const digestOf = (index: StatIndex): string => {
    const s = index.scan();
    assert.ok(s, 'the walk gave up');
    return s.digest;
  };

  it('changes with every change git would record: content (even of the same size), new, removed, renamed, at any depth', async () => {
    put('a.txt', 'one');
    put('src/deep/b.ts', 'export {};');
    const index = new StatIndex(root, ['.git'], SLACK);
    let last = digestOf(index);
    const step = async (what: string, change: () => void) => {
      await sleep(20); // past the file system's timestamp tick
      change();
      const d = digestOf(index);
      assert.notEqual(d, last, `the digest did not change: ${what}`);
      last = d;
    };
    await step('same-size rewrite', () => put('a.txt', 'two'));
    await step('new file deep down', () => put('src/deep/c.ts', 'x'));
    await step('removed', () => fs.rmSync(path.join(root, 'src/deep/c.ts')));
    await step('renamed', () => fs.renameSync(path.join(root, 'src/deep/b.ts'), path.join(root, 'src/deep/d.ts')));
    await step('a new folder with a file', () => put('lib/x/y.js', '1'));
    await step('a symlink', () => fs.symlinkSync('a.txt', path.join(root, 'link')));
    assert.equal(digestOf(index), digestOf(index), 'an unchanged root digests the same');
  });

  it('does not look inside ignored folders or .git, and reads .gitignore again when it changes', async () => {
    put('.gitignore', 'node_modules/\n');
    put('node_modules/pkg/index.js', 'a');
    put('.git/HEAD', 'ref: refs/heads/main\n');
    put('src/a.ts', 'a');
    const index = new StatIndex(root, ['.git'], SLACK);
    const first = digestOf(index);
    await sleep(20);
    put('node_modules/pkg/index.js', 'bb');
    put('node_modules/other/x.js', 'c');
    put('.git/HEAD', 'ref: refs/heads/other\n');
    assert.equal(digestOf(index), first, 'churn in an ignored folder or in .git is not a change');
    put('.gitignore', '# nothing ignored\n');
    const unignored = digestOf(index);
    assert.notEqual(unignored, first);
    await sleep(20);
    put('node_modules/pkg/index.js', 'ccc');
    assert.notEqual(digestOf(index), unignored, 'once un-ignored, the folder is walked');
  });

  it('keeps seeing a file git tracks once a rule comes to ignore its folder (git add -A still records it)', async () => {
    put('d/f.txt', 'one');
    const shadow = await ShadowRepo.open(path.join(dir, 'store'), root, SLACK);
    const first = await shadow.snapshot(1 << 20);
    put('.gitignore', 'd/\n');
    await sleep(SLACK + 50);
    let settled = await shadow.snapshot(1 << 20);
    for (let i = 0; i < 3 && shadow.counts.skipped === 0; i++) settled = await shadow.snapshot(1 << 20);
    assert.equal(shadow.counts.skipped, 1, 'an unchanged root is answered without git');
    assert.deepEqual(
      (await shadow.diff(first.tree, settled.tree)).map((c) => path.relative(root, c.path)),
      ['.gitignore'],
    );
    put('d/f.txt', 'two'); // same size, inside a folder the walk no longer enters
    const after = await shadow.snapshot(1 << 20);
    assert.deepEqual(
      (await shadow.diff(settled.tree, after.tree)).map((c) => path.relative(root, c.path)),
      ['d/f.txt'],
      'the tracked file under the now-ignored folder is still recorded',
    );
  });

  it('skips nothing while git does not ignore a folder the in-process rules prune (a symlinked .gitignore git will not follow)', async () => {
    put('rules.txt', 'd/\n');
    fs.symlinkSync('rules.txt', path.join(root, '.gitignore'));
    put('d/a.txt', 'a');
    const shadow = await ShadowRepo.open(path.join(dir, 'store'), root, SLACK);
    await sleep(SLACK + 50);
    const first = await shadow.snapshot(1 << 20);
    await shadow.snapshot(1 << 20);
    await shadow.snapshot(1 << 20);
    assert.equal(shadow.counts.skipped, 0, 'git disagrees about d/: every snapshot runs git');
    put('d/new.txt', 'n'); // inside the folder the walk does not enter
    const after = await shadow.snapshot(1 << 20);
    assert.ok(
      (await shadow.diff(first.tree, after.tree)).some((c) => path.relative(root, c.path) === path.join('d', 'new.txt')),
      'the new file is recorded',
    );
  });

  it('trusts a digest only when every entry is older than the slack', async () => {
    put('a.txt', 'one');
    const strict = new StatIndex(root, ['.git']);
    assert.equal(strict.scan()?.trusted, false, `a file written just now is within ${TRUST_SLACK_MS} ms`);
    const loose = new StatIndex(root, ['.git'], SLACK);
    await sleep(SLACK + 50);
    assert.equal(loose.scan()?.trusted, true);
    put('b.txt', 'two');
    assert.equal(loose.scan()?.trusted, false, 'a new file makes it untrusted again');
  });

  it('a snapshot of an unchanged root runs no git; one after a change between two commands sees the change', async () => {
    put('a.txt', 'one');
    put('src/b.ts', 'export {};');
    const shadow = await ShadowRepo.open(path.join(dir, 'store'), root, SLACK);
    await sleep(SLACK + 50);
    await shadow.snapshot(1 << 20); // the first also names the tracked files the rules ignore
    const first = await shadow.snapshot(1 << 20);
    const savedPath = process.env.PATH;
    try {
      process.env.PATH = path.join(dir, 'no-git-here'); // any git run would fail now
      const again = await shadow.snapshot(1 << 20);
      assert.equal(again.tree, first.tree, 'the same tree, without git');
    } finally {
      process.env.PATH = savedPath;
    }
    put('a.txt', 'two'); // the user edits between two commands (same size, within the slack)
    const after = await shadow.snapshot(1 << 20);
    assert.notEqual(after.tree, first.tree);
    assert.deepEqual(
      (await shadow.diff(first.tree, after.tree)).map((c) => path.relative(root, c.path)),
      ['a.txt'],
    );
    // Untrusted (just written): the next snapshot runs git again rather than trust a same-tick stat.
    put('a.txt', 'six');
    const racy = await shadow.snapshot(1 << 20);
    assert.deepEqual(
      (await shadow.diff(after.tree, racy.tree)).map((c) => path.relative(root, c.path)),
      ['a.txt'],
    );
  });
});
