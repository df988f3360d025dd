// The base a worktree child starts from (issue 25: made with the empty worktree and the snapshot
// at once, its commit written in-process). Each case tries to make the base miss or distort a
// change of the parent: the base's tree must be what git itself makes of the parent's files
// (hashing every file afresh), the worktree's files those files, the parent untouched.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DEFAULT_BWRAP } from '../../../src/core/tools/sandbox/detect';
import { createWorktree, removeWorktree } from '../../../src/core/worktree/checkout';
import { WorktreeError } from '../../../src/core/worktree/git';
import { writeIndexTree } from '../../../src/core/worktree/index-tree';
import { commitBody, writeCommit } from '../../../src/core/worktree/objects';
import { gitIn, initRepo, repoFoldersPerTest } from './fixture';

/** The tree git makes of `ws`'s files with a fresh index (every file hashed, no stat cache), leaving out `excludes`. */
function referenceTree(ws: string, excludes: string[]): string {
  const index = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-ref-')), 'index');
  const env = { ...process.env, GIT_INDEX_FILE: index };
  const run = (...args: string[]) => execFileSync('git', args, { cwd: ws, env, encoding: 'utf8' }) as string;
  run('read-tree', '--empty');
  run('add', '-A', '--', '.', ...excludes.map((e) => `:(exclude)${e}`));
  const tree = run('write-tree').trim();
  fs.rmSync(path.dirname(index), { recursive: true, force: true });
  return tree;
}

describe('worktree base: every uncommitted change of the parent, nothing else', () => {
  let dir: string;
  let ws: string;
  let wts: string;
  repoFoldersPerTest('arbor-wt-base-', (f) => ({ dir, ws, wts } = f));

  const create = (name: string, root = ws) =>
    createWorktree({
      bwrap: DEFAULT_BWRAP,
      parentRoot: root,
      dir: path.join(wts, name),
      branch: `arbor/${name}`,
      excludes: [path.join(ws, 'store'), wts],
      note: name,
    });

  it('holds modified, staged-then-modified, deleted, renamed, untracked, executable and linked files; ignored and excluded ones stay out', async () => {
    initRepo(ws);
    const w = (rel: string, content: string) => {
      fs.mkdirSync(path.dirname(path.join(ws, rel)), { recursive: true });
      fs.writeFileSync(path.join(ws, rel), content);
    };
    w('.gitignore', 'secret.env\nbuild/\n');
    w('tracked/mod.txt', 'v1\n');
    w('tracked/staged.txt', 's1\n');
    w('tracked/gone.txt', 'bye\n');
    w('tracked/old-name.txt', 'moved\n');
    w('tracked/run.sh', 'echo hi\n');
    gitIn(ws, 'add', '-A');
    gitIn(ws, 'commit', '-qm', 'second');
    w('tracked/mod.txt', 'v2\n');
    w('tracked/staged.txt', 's2\n');
    gitIn(ws, 'add', 'tracked/staged.txt');
    w('tracked/staged.txt', 's3 (after staging)\n');
    fs.rmSync(path.join(ws, 'tracked/gone.txt'));
    fs.renameSync(path.join(ws, 'tracked/old-name.txt'), path.join(ws, 'tracked/new-name.txt'));
    fs.chmodSync(path.join(ws, 'tracked/run.sh'), 0o755);
    w('deep/new/dir/fresh.txt', 'untracked\n');
    w('naïve name with spaces.txt', 'unicode\n');
    fs.symlinkSync('tracked/mod.txt', path.join(ws, 'link-to-mod'));
    w('secret.env', 'TOKEN=1\n');
    w('build/out.js', 'ignored\n');
    w('store/log.db', 'the store\n');
    const before = { status: gitIn(ws, 'status', '--porcelain'), head: gitIn(ws, 'rev-parse', 'HEAD'), index: fs.readFileSync(path.join(ws, '.git', 'index')) };

    const place = await create('all');

    assert.equal(gitIn(ws, 'rev-parse', `${place.base}^{tree}`).trim(), referenceTree(ws, ['store']), "the base's tree is git's own of the parent's files");
    assert.equal(gitIn(ws, 'rev-parse', `${place.base}^`), before.head, 'the base sits on HEAD');
    assert.equal(gitIn(place.path, 'rev-parse', 'HEAD').trim(), place.base);
    assert.equal(gitIn(place.path, 'branch', '--show-current').trim(), 'arbor/all');
    assert.equal(gitIn(place.path, 'status', '--porcelain', '--ignored'), '', 'the worktree is its base, clean, nothing ignored in it');
    const listed = gitIn(place.path, 'ls-files', '-z').split('\0').filter(Boolean).sort();
    for (const rel of listed) {
      const mine = path.join(place.path, rel);
      const theirs = path.join(ws, rel);
      if (fs.lstatSync(theirs).isSymbolicLink()) assert.equal(fs.readlinkSync(mine), fs.readlinkSync(theirs), rel);
      else assert.deepEqual(fs.readFileSync(mine), fs.readFileSync(theirs), rel);
    }
    assert.ok(listed.includes('tracked/new-name.txt') && !listed.includes('tracked/old-name.txt') && !listed.includes('tracked/gone.txt'));
    assert.ok(listed.includes('deep/new/dir/fresh.txt') && listed.includes('naïve name with spaces.txt') && listed.includes('link-to-mod'));
    assert.ok(!listed.includes('secret.env') && !listed.some((f) => f.startsWith('build/') || f.startsWith('store/')));
    assert.equal(fs.statSync(path.join(place.path, 'tracked/run.sh')).mode & 0o111, 0o111, 'the executable bit came along');
    assert.equal(fs.readFileSync(path.join(place.path, 'tracked/staged.txt'), 'utf8'), 's3 (after staging)\n', 'the file as it is, not as staged');
    assert.equal(gitIn(ws, 'status', '--porcelain'), before.status, "the parent's status is unchanged");
    assert.deepEqual(fs.readFileSync(path.join(ws, '.git', 'index')), before.index, "the parent's index is unchanged");
    gitIn(ws, 'fsck', '--no-dangling', '--no-progress');
    await removeWorktree(place, wts);
  });

  it('sees a change made in the same instant as the last index write (a racily clean entry is hashed again)', async () => {
    initRepo(ws);
    gitIn(ws, 'config', 'core.trustctime', 'false');
    const f = path.join(ws, 'racy.txt');
    const second = Math.floor(Date.now() / 1000) - 100;
    fs.writeFileSync(f, 'aaaa\n');
    fs.utimesSync(f, second, second);
    gitIn(ws, 'add', 'racy.txt');
    // The index written in the same second as the file, then the file changed within it, same size, same mtime.
    fs.utimesSync(path.join(ws, '.git', 'index'), second, second);
    fs.writeFileSync(f, 'bbbb\n');
    fs.utimesSync(f, second, second);
    // git itself sees the change (its racy check); asked without letting it rewrite the index.
    const status = execFileSync('git', ['status', '--porcelain'], { cwd: ws, encoding: 'utf8', env: { ...process.env, GIT_OPTIONAL_LOCKS: '0' } });
    assert.match(status, /^AM racy\.txt$/m);
    const place = await create('racy');
    assert.equal(fs.readFileSync(path.join(place.path, 'racy.txt'), 'utf8'), 'bbbb\n');
    assert.equal(gitIn(ws, 'show', `${place.base}:racy.txt`), 'bbbb\n');
  });

  it('starts from a subfolder of the repository, and from a repository without commits', async () => {
    initRepo(ws);
    fs.mkdirSync(path.join(ws, 'sub'));
    fs.writeFileSync(path.join(ws, 'sub', 'x.txt'), 'x\n');
    const place = await create('sub', path.join(ws, 'sub'));
    assert.equal(place.root, path.join(place.path, 'sub'));
    assert.equal(fs.readFileSync(path.join(place.root, 'x.txt'), 'utf8'), 'x\n');
    assert.equal(fs.readFileSync(path.join(place.path, 'a.txt'), 'utf8'), 'one\n', 'the whole repository, not only the subfolder');

    const empty = path.join(dir, 'empty');
    fs.mkdirSync(empty);
    gitIn(empty, 'init', '-q', '-b', 'main');
    fs.writeFileSync(path.join(empty, 'only.txt'), 'first file\n');
    const root = await createWorktree({
      bwrap: DEFAULT_BWRAP,
      parentRoot: empty,
      dir: path.join(wts, 'root'),
      branch: 'arbor/root',
      excludes: [],
      note: 'root',
    });
    assert.equal(fs.readFileSync(path.join(root.path, 'only.txt'), 'utf8'), 'first file\n');
    assert.equal(gitIn(empty, 'rev-list', '--count', root.base).trim(), '1', 'a root commit');
  });

  it('leaves nothing behind when it fails: outside a repository, or a branch that already exists', async () => {
    const plain = path.join(dir, 'plain');
    fs.mkdirSync(plain);
    await assert.rejects(
      createWorktree({ bwrap: DEFAULT_BWRAP, parentRoot: plain, dir: path.join(wts, 'x'), branch: 'arbor/x', excludes: [], note: 'x' }),
      (e: unknown) => e instanceof WorktreeError && e.code === 'NOT_A_REPO' && /git init/.test(e.message),
    );
    assert.equal(fs.existsSync(path.join(wts, 'x')), false);

    initRepo(ws);
    gitIn(ws, 'branch', 'arbor/taken');
    await assert.rejects(create('taken'), (e: unknown) => e instanceof WorktreeError && e.code === 'GIT_FAILED');
    assert.equal(fs.existsSync(path.join(wts, 'taken')), false, 'the empty worktree was removed');
    assert.equal(gitIn(ws, 'worktree', 'list', '--porcelain').match(/^worktree /gm)?.length, 1, 'git knows only the main checkout');
    assert.equal(gitIn(ws, 'rev-parse', 'arbor/taken'), gitIn(ws, 'rev-parse', 'HEAD'), 'the existing branch is untouched');
  });

  it('writes the tree git write-tree writes, and leaves to git every index it does not read (v4, skip-worktree)', async () => {
    initRepo(ws);
    for (const rel of ['foo-bar', 'foo.txt', 'foo/x', 'foo/y/z', 'foo0', 'a b/c', 'Z.md', 'é.txt']) {
      fs.mkdirSync(path.dirname(path.join(ws, rel)), { recursive: true });
      fs.writeFileSync(path.join(ws, rel), `${rel}\n`);
    }
    // A name that is not UTF-8 (bytes are what git stores), a link, an executable, a submodule entry.
    fs.writeFileSync(Buffer.concat([Buffer.from(`${ws}/raw-`), Buffer.from([0xff, 0xfe])]), 'raw\n');
    fs.symlinkSync('foo.txt', path.join(ws, 'link'));
    fs.writeFileSync(path.join(ws, 'run.sh'), '#!/bin/sh\n', { mode: 0o755 });
    gitIn(ws, 'add', '-A');
    gitIn(ws, 'update-index', '--add', '--cacheinfo', `160000,${gitIn(ws, 'rev-parse', 'HEAD').trim()},vendor/sub`);
    const objects = path.join(ws, '.git', 'objects');
    const index = path.join(ws, '.git', 'index');
    const theirs = gitIn(ws, 'write-tree').trim();
    fs.rmSync(path.join(objects, theirs.slice(0, 2), theirs.slice(2)));
    assert.equal(await writeIndexTree(index, objects), theirs);
    assert.equal(gitIn(ws, 'cat-file', '-t', theirs).trim(), 'tree', 'the root tree object is written');
    gitIn(ws, 'fsck', '--no-dangling', '--no-progress');

    gitIn(ws, 'update-index', '--skip-worktree', 'foo.txt');
    assert.equal(await writeIndexTree(index, objects), undefined, 'skip-worktree: left to git');
    gitIn(ws, 'update-index', '--no-skip-worktree', 'foo.txt');
    gitIn(ws, 'update-index', '--index-version', '4');
    assert.equal(await writeIndexTree(index, objects), undefined, 'index v4: left to git');
    // And the worktree made from a v4 index (git's write-tree then) still holds every change.
    fs.writeFileSync(path.join(ws, 'foo.txt'), 'changed after\n');
    const place = await create('v4');
    assert.equal(gitIn(ws, 'rev-parse', `${place.base}^{tree}`).trim(), referenceTree(ws, ['store']));
  });

  it('writes the same commit object git commit-tree writes', async () => {
    initRepo(ws);
    const tree = gitIn(ws, 'rev-parse', 'HEAD^{tree}').trim();
    const parent = gitIn(ws, 'rev-parse', 'HEAD').trim();
    const when = new Date('2026-03-04T05:06:07Z');
    for (const message of ['arbor: base of subagent a label\twith a tab  \n\n\n', 'arbor: base of subagent plain']) {
      const mine = await writeCommit(path.join(ws, '.git', 'objects'), commitBody(tree, parent, message, when));
      const stamp = `${Math.floor(when.getTime() / 1000)} ${(() => {
        const off = -when.getTimezoneOffset();
        return `${off < 0 ? '-' : '+'}${String(Math.floor(Math.abs(off) / 60)).padStart(2, '0')}${String(Math.abs(off) % 60).padStart(2, '0')}`;
      })()}`;
      const theirs = require('node:child_process')
        .execFileSync('git', ['commit-tree', tree, '-p', parent, '-m', message], {
          cwd: ws,
          encoding: 'utf8',
          env: {
            ...process.env,
            GIT_AUTHOR_NAME: 'Arbor',
            GIT_AUTHOR_EMAIL: 'arbor@localhost',
            GIT_COMMITTER_NAME: 'Arbor',
            GIT_COMMITTER_EMAIL: 'arbor@localhost',
            GIT_AUTHOR_DATE: stamp,
            GIT_COMMITTER_DATE: stamp,
          },
        })
        .trim();
      assert.equal(mine, theirs, JSON.stringify(message));
      assert.equal(gitIn(ws, 'cat-file', '-t', mine).trim(), 'commit');
    }
  });
});
