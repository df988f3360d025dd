// Many children's worktrees made and removed at once in one repository (decision 0081's
// `repo-lock.ts`): `git worktree add` reads every other worktree's entry and fails on one half
// made ("failed to read worktrees/<name>/commondir"), as a 16-agent fan-out met. Git's bookkeeping
// goes one at a time, the files side by side: every one is made whole, grandchildren (a worktree
// made from a worktree) share their repository's lock, and all of them go again.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DEFAULT_BWRAP } from '../../../src/core/tools/sandbox/detect';
import { createWorktree, removeWorktree } from '../../../src/core/worktree/checkout';
import { commonGitDir, lockOf } from '../../../src/core/worktree/repo-lock';
import { gitIn, makeRepo, read } from './fixture';

describe('worktrees: many made and removed at once in one repository', function () {
  this.timeout(120_000);
  let base: string;
  beforeEach(() => (base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-wt-many-')))));
  afterEach(() => fs.rmSync(base, { recursive: true, force: true }));

  it('16 at once, then 8 grandchildren from them at once, then all removed a level at a time: each whole, none lost', async () => {
    const ws = makeRepo(base);
    const within = path.join(base, 'wts');
    const make = (from: string, name: string) =>
      createWorktree({ bwrap: DEFAULT_BWRAP, parentRoot: from, dir: path.join(within, name), branch: `arbor/${name}`, excludes: [], note: name });
    const kids = await Promise.all(Array.from({ length: 16 }, (_, i) => make(ws, `c${i}`)));
    for (const k of kids) {
      assert.equal(read(path.join(k.path, 'a.txt')), 'one\ntwo\n', "the parent's uncommitted change is in every one");
      assert.equal(read(path.join(k.path, 'new.txt')), 'fresh\n');
    }
    const grand = await Promise.all(kids.slice(0, 8).map((k, i) => make(k.path, `g${i}`)));
    assert.equal(commonGitDir(grand[0]!.path), commonGitDir(ws), "a worktree's worktree is the same repository");
    assert.equal(lockOf(grand[0]!.path), lockOf(ws), 'so it takes the same lock');
    const listed = gitIn(ws, 'worktree', 'list', '--porcelain').match(/^worktree /gm)?.length;
    assert.equal(listed, 1 + 16 + 8);
    // A subtree goes leaves first (a grandchild's repository is found from its parent's folder); each level at once.
    await Promise.all(grand.map((p) => removeWorktree(p, within)));
    await Promise.all(kids.map((p) => removeWorktree(p, within)));
    assert.equal(gitIn(ws, 'worktree', 'list', '--porcelain').match(/^worktree /gm)?.length, 1);
    assert.equal(gitIn(ws, 'branch', '--list', 'arbor/*').trim(), '', 'every branch went with its worktree');
  });
});
