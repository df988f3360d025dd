// The in-process base (decision 0082): the tree `workTreeOf` makes of a checkout must be the one
// git makes of it — the user's index as the tracked set, every file hashed afresh, `add -A`, the
// excludes left as recorded — in every case it accepts, and it must hand every case it cannot
// reproduce to git. The repository facts it relies on (`RepoStateCache`) must follow HEAD, the
// configuration and the repository's layout.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DEFAULT_BWRAP } from '../../../src/core/tools/sandbox/detect';
import { createWorktree, removeWorktree } from '../../../src/core/worktree/checkout';
import { RepoStateCache } from '../../../src/core/worktree/repo-state';
import { snapshot } from '../../../src/core/worktree/snapshot';
import { type WalkMemo, workTreeOf } from '../../../src/core/worktree/work-tree';
import { gitIn, initRepo, repoFoldersPerTest, worktreeIn } from './fixture';

/**
 * git's tree of `ws`'s files with the user's index as the tracked set but none of its stat data
 * (every file hashed afresh): a fresh index read from the index's own tree, then `add -A`.
 */
function referenceTree(ws: string, excludes: string[]): string {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-ref-'));
  const env = { ...process.env, GIT_INDEX_FILE: path.join(tmp, 'index') };
  const run = (...args: string[]) => execFileSync('git', args, { cwd: ws, env, encoding: 'utf8' }) as string;
  const recorded = gitIn(ws, 'write-tree').trim();
  run('read-tree', recorded);
  run('add', '-A', '--', '.', ...excludes.map((e) => `:(exclude)${e}`));
  const tree = run('write-tree').trim();
  fs.rmSync(tmp, { recursive: true, force: true });
  return tree;
}

const write = (ws: string, rel: string, content: string, mode?: number) => {
  fs.mkdirSync(path.dirname(path.join(ws, rel)), { recursive: true });
  fs.writeFileSync(path.join(ws, rel), content, mode === undefined ? {} : { mode });
};

describe('in-process base: the tree git add -A makes, or git', () => {
  let dir: string;
  let ws: string;
  let wts: string;
  repoFoldersPerTest('arbor-wt-tree-', (f) => ({ dir, ws, wts } = f));

  async function mine(excludes: string[] = []): Promise<string | undefined> {
    const s = await new RepoStateCache().state(ws);
    assert.ok(s.plain, 'a plain repository');
    return workTreeOf({ top: ws, index: s.index, objects: s.objects, excludes: excludes.map((e) => path.join(ws, e)), excludeLines: s.plain.excludeLines });
  }

  it('matches git on changes, deletions, type changes, modes, links, nested and ignored folders, and the excludes', async () => {
    initRepo(ws);
    write(ws, '.gitignore', 'secret.env\nbuild/\n/top.log\n**/gen/*.js\n*.tmp\n!keep.tmp\n');
    write(ws, 'sub/.gitignore', 'local-only.txt\n');
    write(ws, 'tracked/mod.txt', 'v1\n');
    write(ws, 'tracked/same-size.txt', 'aaaa\n');
    write(ws, 'tracked/gone.txt', 'bye\n');
    write(ws, 'tracked/run.sh', 'echo hi\n');
    write(ws, 'tracked/was-exec.sh', 'echo x\n', 0o755);
    write(ws, 'becomes-dir', 'a file first\n');
    write(ws, 'becomes-file/inner.txt', 'inside\n');
    write(ws, 'real/a.txt', 'real a\n');
    write(ws, 'via-link/a.txt', 'shadowed by a link\n');
    write(ws, 'other/a.txt', 'other a\n');
    write(ws, 'deep/er/still/deeper/x.txt', 'deep\n');
    write(ws, 'build/tracked-in-ignored.txt', 'tracked before the rule\n');
    write(ws, 'store/tracked.db', 'recorded\n');
    gitIn(ws, 'add', '-A');
    gitIn(ws, 'add', '-f', 'build/tracked-in-ignored.txt');
    fs.symlinkSync('tracked/mod.txt', path.join(ws, 'link-old'));
    gitIn(ws, 'add', 'link-old');
    gitIn(ws, 'commit', '-qm', 'second');
    // Make the index older than every change below, so stat data decides, not racy hashing.
    const past = Math.floor(Date.now() / 1000) - 60;
    fs.utimesSync(path.join(ws, '.git', 'index'), past, past);

    write(ws, 'tracked/mod.txt', 'v2\n');
    const sameSize = path.join(ws, 'tracked/same-size.txt');
    const st = fs.statSync(sameSize);
    fs.writeFileSync(sameSize, 'bbbb\n');
    fs.utimesSync(sameSize, st.atime, st.mtime); // same size, same mtime: only ctime says it changed
    fs.rmSync(path.join(ws, 'tracked/gone.txt'));
    fs.chmodSync(path.join(ws, 'tracked/run.sh'), 0o755);
    fs.chmodSync(path.join(ws, 'tracked/was-exec.sh'), 0o644);
    fs.rmSync(path.join(ws, 'becomes-dir'));
    write(ws, 'becomes-dir/now.txt', 'a folder now\n');
    fs.rmSync(path.join(ws, 'becomes-file'), { recursive: true });
    write(ws, 'becomes-file', 'a file now\n');
    fs.rmSync(path.join(ws, 'via-link'), { recursive: true });
    fs.symlinkSync('other', path.join(ws, 'via-link')); // tracked via-link/a.txt is gone: a link is not a folder
    fs.rmSync(path.join(ws, 'link-old'));
    fs.symlinkSync('tracked/run.sh', path.join(ws, 'link-old'));
    fs.symlinkSync('nowhere/at/all', path.join(ws, 'dangling'));
    write(ws, 'deep/er/still/deeper/y.txt', 'new deep\n');
    write(ws, 'empty-dir/.keep-not', '');
    fs.rmSync(path.join(ws, 'empty-dir/.keep-not'));
    write(ws, 'naïve name with spaces.txt', 'unicode\n');
    write(ws, 'secret.env', 'TOKEN=1\n');
    write(ws, 'top.log', 'anchored: ignored\n');
    write(ws, 'sub/top.log', 'anchored rule does not reach here\n');
    write(ws, 'sub/local-only.txt', 'ignored by the nested file\n');
    write(ws, 'sub/gen/out.js', 'ignored by **\n');
    write(ws, 'sub/gen/out.ts', 'not ignored\n');
    write(ws, 'x.tmp', 'ignored\n');
    write(ws, 'keep.tmp', 're-included\n');
    write(ws, 'build/tracked-in-ignored.txt', 'changed inside an ignored folder\n');
    write(ws, 'build/untracked.js', 'ignored\n');
    write(ws, 'store/tracked.db', 'changed, but excluded: stays as recorded\n');
    write(ws, 'store/new.db', 'excluded\n');
    fs.appendFileSync(path.join(ws, '.git', 'info', 'exclude'), 'from-info-exclude.txt\n');
    write(ws, 'from-info-exclude.txt', 'ignored through info/exclude\n');
    fs.writeFileSync(path.join(dir, 'global-ignore'), '*.global\n');
    gitIn(ws, 'config', 'core.excludesFile', path.join(dir, 'global-ignore'));
    write(ws, 'sub/x.global', 'ignored through core.excludesFile\n');

    const tree = await mine(['store']);
    assert.ok(tree, 'the in-process path takes this repository');
    assert.equal(tree, referenceTree(ws, ['store']));
    // The production fallback (a copy of the index, `git add -A`) agrees too.
    assert.equal((await snapshot(ws, { bwrap: DEFAULT_BWRAP, excludes: [path.join(ws, 'store')] })).tree, tree);
    const listed = gitIn(ws, 'ls-tree', '-r', '--name-only', tree!).split('\n');
    assert.ok(listed.includes('build/tracked-in-ignored.txt') && listed.includes('store/tracked.db') && !listed.includes('store/new.db'));
    assert.ok(listed.includes('keep.tmp') && listed.includes('sub/top.log') && !listed.includes('from-info-exclude.txt') && !listed.includes('sub/x.global'));
    assert.equal(gitIn(ws, 'show', `${tree}:tracked/same-size.txt`), 'bbbb\n', 'a change only ctime shows is seen');
    assert.equal(gitIn(ws, 'show', `${tree}:store/tracked.db`), 'recorded\n');
    gitIn(ws, 'fsck', '--no-dangling', '--no-progress');
  });

  it('matches git on randomly made repositories (ignore rules of the forms it reads, every kind of change)', async () => {
    let seed = 82;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const pick = <T>(xs: readonly T[]): T => xs[rnd(xs.length)];
    const names = ['a', 'b', 'gen', 'build', 'doc', 'x', 'keep', 'top', 'é'];
    const exts = ['.txt', '.log', '.md', '.tmp', '', '.js'];
    const patterns = ['*.log', 'build/', '/top', '!keep.log', '**/gen', 'a/**/b', '*.tmp', 'doc/*.md', '?x', 'x/', '!*.md', 'gen/*', 'é*'];
    const randomPath = () => Array.from({ length: 1 + rnd(3) }, () => pick(names)).join('/') + pick(exts);
    const put = (rel: string, content: string) => {
      try {
        write(ws, rel, content, rnd(4) === 0 ? 0o755 : 0o644);
      } catch {
        // a file where a folder of the path is wanted (or the other way): skip this one
      }
    };
    let taken = 0;
    for (let round = 0; round < 12; round++) {
      fs.rmSync(ws, { recursive: true, force: true });
      fs.mkdirSync(ws);
      initRepo(ws);
      for (let i = 0; i < 25; i++) put(randomPath(), `v${rnd(3)}\n`);
      for (const dir of ['', 'a', 'a/b', 'doc']) {
        if (rnd(2) && (dir === '' || fs.existsSync(path.join(ws, dir)))) {
          const lines = Array.from({ length: 1 + rnd(4) }, () => pick(patterns));
          if (fs.statSync(path.join(ws, dir)).isDirectory()) put(path.join(dir, '.gitignore'), `${lines.join('\n')}\n`);
        }
      }
      gitIn(ws, 'add', '-A');
      gitIn(ws, 'commit', '-qm', `round ${round}`, '--allow-empty');
      const past = Math.floor(Date.now() / 1000) - 60;
      fs.utimesSync(path.join(ws, '.git', 'index'), past, past);
      const tracked = gitIn(ws, 'ls-files', '-z').split('\0').filter(Boolean);
      for (let i = 0; i < 15; i++) {
        const rel = rnd(2) && tracked.length ? pick(tracked) : randomPath();
        const abs = path.join(ws, rel);
        const what = rnd(5);
        try {
          if (what === 0) fs.rmSync(abs, { recursive: true, force: true });
          else if (what === 1 && fs.lstatSync(abs).isFile()) fs.chmodSync(abs, fs.statSync(abs).mode ^ 0o100);
          else if (what === 2 && !fs.existsSync(abs)) {
            fs.mkdirSync(path.dirname(abs), { recursive: true });
            fs.symlinkSync(pick(tracked.length ? tracked : ['a.txt']), abs);
          } else put(rel, `changed ${rnd(100)}\n`);
        } catch {
          // a file where the path wants a folder, or nothing there: skip this change
        }
      }
      const tree = await mine();
      if (tree !== undefined) {
        taken++;
        assert.equal(tree, referenceTree(ws, []), `round ${round}: ${gitIn(ws, 'status', '--porcelain', '--ignored')}`);
      }
    }
    assert.ok(taken >= 6, `the in-process path took ${taken} of 12 rounds`);
  });

  it('keeps folder listings between walks only while the folders are unchanged', async () => {
    initRepo(ws);
    write(ws, 'a/one.txt', '1\n');
    write(ws, 'a/b/two.txt', '2\n');
    gitIn(ws, 'add', '-A');
    gitIn(ws, 'commit', '-qm', 'folders');
    const s = await new RepoStateCache().state(ws);
    const memo: WalkMemo = { listings: new Map() };
    const { listings } = memo;
    const walk = () => workTreeOf({ top: ws, index: s.index, objects: s.objects, excludes: [], excludeLines: [], memo, slackMs: 0 });
    await new Promise((r) => setTimeout(r, 20)); // every folder's ctime before the walk: its listing kept
    assert.equal(await walk(), referenceTree(ws, []));
    assert.ok(listings.has('a') && listings.has('a/b') && memo.index, 'the listings and the parsed index are kept');
    const steps: [string, () => void][] = [
      ['a new file in a kept folder', () => write(ws, 'a/b/three.txt', '3\n')],
      ['a file removed', () => fs.rmSync(path.join(ws, 'a/one.txt'))],
      ['a file renamed', () => fs.renameSync(path.join(ws, 'a/b/two.txt'), path.join(ws, 'a/b/zwei.txt'))],
      ['a file replaced by a folder', () => write(ws, 'a/b/three.txt/inner.txt', 'x\n')],
      ['a new folder', () => write(ws, 'a/c/d/deep.txt', 'deep\n')],
      ['changed in place', () => fs.appendFileSync(path.join(ws, 'a/b/zwei.txt'), 'more\n')],
      [
        'an ignored file',
        () => {
          write(ws, '.gitignore', 'secret.txt\n');
          write(ws, 'a/secret.txt', 's\n');
        },
      ],
      ['the index changed: the ignored file tracked', () => gitIn(ws, 'add', '-f', 'a/secret.txt')],
      ['the index changed: a file untracked', () => gitIn(ws, 'rm', '-q', '--cached', 'a.txt')],
    ];
    for (const [what, step] of steps) {
      if (what === 'a file replaced by a folder') fs.rmSync(path.join(ws, 'a/b/three.txt'));
      step();
      await new Promise((r) => setTimeout(r, 20));
      assert.equal(await walk(), referenceTree(ws, []), what);
    }
    const tree = (await walk()) as string;
    assert.ok(gitIn(ws, 'ls-tree', '-r', '--name-only', tree).split('\n').includes('a/secret.txt'), 'tracked through the new index');
  });

  it('hashes a racily clean entry again (recorded in the same instant as the index)', async () => {
    initRepo(ws);
    const f = path.join(ws, 'racy.txt');
    const second = Math.floor(Date.now() / 1000) - 100;
    fs.writeFileSync(f, 'aaaa\n');
    fs.utimesSync(f, second, second);
    gitIn(ws, 'add', 'racy.txt');
    fs.utimesSync(path.join(ws, '.git', 'index'), second, second);
    fs.writeFileSync(f, 'bbbb\n');
    fs.utimesSync(f, second, second);
    const tree = await mine();
    assert.equal(gitIn(ws, 'show', `${tree}:racy.txt`), 'bbbb\n');
  });

  it('leaves to git what it does not reproduce, and the worktree made then is still exact', async () => {
    initRepo(ws);
    const cases: [string, () => void, () => void][] = [
      ['.gitattributes', () => write(ws, 'sub/.gitattributes', '*.txt text eol=crlf\n'), () => fs.rmSync(path.join(ws, 'sub'), { recursive: true })],
      [
        'a nested repository',
        () => {
          fs.mkdirSync(path.join(ws, 'nested'));
          gitIn(path.join(ws, 'nested'), 'init', '-q');
        },
        () => fs.rmSync(path.join(ws, 'nested'), { recursive: true }),
      ],
      ['a bracket pattern', () => write(ws, '.gitignore', '*.[oa]\n'), () => fs.rmSync(path.join(ws, '.gitignore'))],
      [
        'a linked .gitignore',
        () => {
          write(ws, 'rules', 'x\n');
          fs.symlinkSync('rules', path.join(ws, '.gitignore'));
        },
        () => fs.rmSync(path.join(ws, '.gitignore')),
      ],
      [
        'an assume-unchanged entry',
        () => gitIn(ws, 'update-index', '--assume-unchanged', 'a.txt'),
        () => gitIn(ws, 'update-index', '--no-assume-unchanged', 'a.txt'),
      ],
      [
        'a name that is not UTF-8',
        () => fs.writeFileSync(Buffer.concat([Buffer.from(`${ws}/raw-`), Buffer.from([0xff])]), 'raw\n'),
        () => fs.rmSync(Buffer.concat([Buffer.from(`${ws}/raw-`), Buffer.from([0xff])])),
      ],
    ];
    for (const [what, make, unmake] of cases) {
      make();
      assert.equal(await mine(), undefined, what);
      unmake();
    }
    assert.ok(await mine(), 'plain again');
    gitIn(ws, 'config', 'core.autocrlf', 'true');
    const repos = new RepoStateCache();
    assert.equal((await repos.state(ws)).plain, undefined, 'line-ending conversion: git');
    write(ws, 'changed.txt', 'made while not plain\n');
    const place = await createWorktree({ bwrap: DEFAULT_BWRAP, parentRoot: ws, dir: path.join(wts, 'w'), branch: 'arbor/w', excludes: [], note: 'w', repos });
    assert.equal(gitIn(ws, 'show', `${place.base}:changed.txt`), 'made while not plain\n');
    assert.equal(gitIn(ws, 'rev-parse', `${place.base}^{tree}`).trim(), referenceTree(ws, []));
    gitIn(ws, 'config', 'core.autocrlf', 'false');
    assert.ok((await repos.state(ws)).plain, 'the configuration is read again when it changes');
    await removeWorktree(place, wts);
  });

  it('follows HEAD through loose and packed refs, a detached HEAD and a linked worktree; a .git between root and top is noticed', async () => {
    initRepo(ws);
    const repos = new RepoStateCache();
    const head = () => gitIn(ws, 'rev-parse', 'HEAD').trim();
    assert.equal((await repos.state(ws)).head, head());
    write(ws, 'b.txt', 'b\n');
    gitIn(ws, 'add', '-A');
    gitIn(ws, 'commit', '-qm', 'next');
    assert.equal((await repos.state(ws)).head, head(), 'a new commit');
    gitIn(ws, 'pack-refs', '--all');
    assert.equal(fs.existsSync(path.join(ws, '.git', 'refs', 'heads', 'main')), false);
    assert.equal((await repos.state(ws)).head, head(), 'a packed ref');
    gitIn(ws, 'checkout', '-q', '--detach', 'HEAD~1');
    assert.equal((await repos.state(ws)).head, head(), 'detached');
    gitIn(ws, 'checkout', '-q', 'main');

    const linked = path.join(dir, 'linked');
    gitIn(ws, 'worktree', 'add', '-q', '-b', 'side', linked);
    write(linked, 'side.txt', 'on the side\n');
    const s = await repos.state(linked);
    assert.equal(s.head, gitIn(linked, 'rev-parse', 'HEAD').trim());
    assert.notEqual(s.gitDir, s.commonDir);
    const place = await createWorktree({
      bwrap: DEFAULT_BWRAP,
      parentRoot: linked,
      dir: path.join(wts, 'l'),
      branch: 'arbor/l',
      excludes: [],
      note: 'l',
      repos,
    });
    assert.equal(gitIn(linked, 'rev-parse', `${place.base}^{tree}`).trim(), referenceTree(linked, []));
    await removeWorktree(place, wts);

    fs.mkdirSync(path.join(ws, 'inner'));
    const inner = path.join(ws, 'inner');
    assert.equal((await repos.state(inner)).top, ws);
    gitIn(inner, 'init', '-q', '-b', 'main');
    assert.equal((await repos.state(inner)).top, inner, 'a repository made inside is seen');
  });

  it('a worktree child made through the cache starts from exactly the parent files, leaving the parent as it was', async () => {
    initRepo(ws);
    write(ws, 'tracked/x.txt', 'x1\n');
    gitIn(ws, 'add', '-A');
    gitIn(ws, 'commit', '-qm', 'x');
    write(ws, 'tracked/x.txt', 'x2\n');
    write(ws, 'untracked/y.txt', 'y\n');
    fs.symlinkSync('tracked/x.txt', path.join(ws, 'link'));
    const before = { status: gitIn(ws, 'status', '--porcelain'), index: fs.readFileSync(path.join(ws, '.git', 'index')) };
    const repos = new RepoStateCache();
    for (const name of ['one', 'two']) {
      const place = await worktreeIn(ws, wts, name, { repos });
      assert.equal(gitIn(ws, 'rev-parse', `${place.base}^{tree}`).trim(), referenceTree(ws, []));
      assert.equal(gitIn(place.path, 'status', '--porcelain', '--ignored'), '');
      assert.equal(gitIn(place.path, 'branch', '--show-current').trim(), `arbor/${name}`);
      assert.equal(fs.readFileSync(path.join(place.path, 'tracked/x.txt'), 'utf8'), 'x2\n');
      assert.equal(fs.readlinkSync(path.join(place.path, 'link')), 'tracked/x.txt');
      await removeWorktree(place, wts);
    }
    // From a subfolder, and four children at once through one cache (their `worktree add`s one at a time: git's are not safe side by side).
    const made = await Promise.all(
      ['sub-a', 'sub-b', 'sub-c', 'sub-d'].map((name) =>
        createWorktree({
          bwrap: DEFAULT_BWRAP,
          parentRoot: path.join(ws, 'tracked'),
          dir: path.join(wts, name),
          branch: `arbor/${name}`,
          excludes: [wts],
          note: name,
          repos,
        }),
      ),
    );
    for (const place of made) {
      assert.equal(place.root, path.join(place.path, 'tracked'));
      assert.equal(gitIn(ws, 'rev-parse', `${place.base}^{tree}`).trim(), referenceTree(ws, []));
      assert.equal(fs.readFileSync(path.join(place.root, 'x.txt'), 'utf8'), 'x2\n');
      await removeWorktree(place, wts);
    }
    assert.equal(gitIn(ws, 'status', '--porcelain'), before.status);
    assert.deepEqual(fs.readFileSync(path.join(ws, '.git', 'index')), before.index);
    await assert.rejects(
      createWorktree({ bwrap: DEFAULT_BWRAP, parentRoot: ws, dir: path.join(wts, 'taken'), branch: 'main', excludes: [], note: 'taken', repos }),
      /worktree/,
    );
    assert.equal(fs.existsSync(path.join(wts, 'taken')), false, 'nothing left behind');
  });

  it('a repository that borrows its objects (git clone --shared: alternates, HEAD packed in the lender) gets an exact base, its new objects its own; the lender is not written', async () => {
    const lender = path.join(dir, 'lender');
    fs.mkdirSync(lender);
    initRepo(lender);
    write(lender, 'tracked/x.txt', 'x1\n');
    gitIn(lender, 'add', '-A');
    gitIn(lender, 'commit', '-qm', 'x');
    gitIn(lender, 'gc', '-q'); // every object packed: HEAD's commit is in a pack of the lender's, not loose
    const lenderObjects = gitIn(lender, 'count-objects', '-v');
    fs.rmSync(ws, { recursive: true, force: true });
    gitIn(dir, 'clone', '-q', '--shared', lender, ws);
    assert.ok(fs.existsSync(path.join(ws, '.git', 'objects', 'info', 'alternates')), 'the clone borrows the lender’s objects');
    const repos = new RepoStateCache();
    // Nothing uncommitted: the base is HEAD itself, found though it is in the lender's pack.
    const clean = await worktreeIn(ws, wts, 'clean', { repos });
    assert.equal(clean.base, gitIn(ws, 'rev-parse', 'HEAD').trim());
    assert.equal(fs.readFileSync(path.join(clean.path, 'tracked/x.txt'), 'utf8'), 'x1\n');
    await removeWorktree(clean, wts);
    // Changed, added and removed files: the base holds them, written in the borrower.
    write(ws, 'tracked/x.txt', 'x2\n');
    write(ws, 'fresh/y.txt', 'y\n');
    fs.rmSync(path.join(ws, 'a.txt'));
    const place = await worktreeIn(ws, wts, 'changed', { repos });
    assert.equal(gitIn(ws, 'rev-parse', `${place.base}^{tree}`).trim(), referenceTree(ws, []));
    assert.equal(gitIn(ws, 'rev-parse', `${place.base}^`).trim(), gitIn(ws, 'rev-parse', 'HEAD').trim(), 'on HEAD');
    assert.equal(fs.readFileSync(path.join(place.path, 'tracked/x.txt'), 'utf8'), 'x2\n');
    assert.equal(fs.readFileSync(path.join(place.path, 'fresh/y.txt'), 'utf8'), 'y\n');
    assert.equal(fs.existsSync(path.join(place.path, 'a.txt')), false);
    assert.equal(gitIn(place.path, 'status', '--porcelain'), '');
    gitIn(ws, 'fsck', '--no-progress', '--connectivity-only');
    assert.equal(gitIn(lender, 'count-objects', '-v'), lenderObjects, 'nothing written in the lender');
    await removeWorktree(place, wts);
  });
});
