// A bundle's pack taken in without reading a ref (decision 0081): a real bundle's objects arrive
// whole, and what is no bundle (or a bundle cut before its pack) is refused in words, never fed to git.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ingestBundle, packOf } from '../../../src/core/placement/bundle';
import { bareRepo } from '../../../src/core/worktree/git';

const env = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' };
const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, env, encoding: 'utf8' }).trim();

describe('placement: a bundle taken in as a pack', () => {
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-bundle-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('the objects of a bundle of what the other side lacks arrive; the commit and its tree are whole there', async () => {
    const src = path.join(dir, 'src');
    fs.mkdirSync(src);
    git(src, 'init', '-q', '-b', 'main');
    fs.writeFileSync(path.join(src, 'a.txt'), 'one\n');
    git(src, 'add', '-A');
    git(src, 'commit', '-qm', 'one');
    const first = git(src, 'rev-parse', 'HEAD');
    const dst = path.join(dir, 'dst.git');
    git(dir, 'init', '-q', '--bare', dst);
    await ingestBundle(bareRepo(dst), execFileSync('git', ['bundle', 'create', '-', 'HEAD'], { cwd: src, env, stdio: ['ignore', 'pipe', 'ignore'] }));
    assert.equal(git(dst, 'cat-file', '-t', first), 'commit');
    fs.writeFileSync(path.join(src, 'b.txt'), 'two\n');
    git(src, 'add', '-A');
    git(src, 'commit', '-qm', 'two');
    const second = git(src, 'rev-parse', 'HEAD');
    // Only what the far side lacks: its prerequisite is the first commit, which is there.
    await ingestBundle(
      bareRepo(dst),
      execFileSync('git', ['bundle', 'create', '-', 'HEAD', `^${first}`], { cwd: src, env, stdio: ['ignore', 'pipe', 'ignore'] }),
    );
    assert.equal(git(dst, 'show', `${second}:b.txt`), 'two');
    assert.equal(git(dst, 'rev-list', '--count', second), '2');
  });

  it('what is no bundle, or a bundle without its pack, is SYNC_FAILED in words', () => {
    assert.throws(() => packOf(Buffer.from('PACK\0\0\0\x02')), /SYNC_FAILED: what came is not a git bundle/);
    assert.throws(() => packOf(Buffer.from('# v2 git bundle\nabc HEAD\n')), /SYNC_FAILED: the bundle has no pack/);
    assert.throws(() => packOf(Buffer.from('# v2 git bundle\nabc HEAD\n\nNOTAPACK')), /SYNC_FAILED: the bundle has no pack/);
    assert.equal(packOf(Buffer.from('# v3 git bundle\n@object-format=sha1\nabc HEAD\n\nPACKrest')).toString(), 'PACKrest');
  });
});
