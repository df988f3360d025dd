// A placed child's worktree whose files cannot be written (decision 0089: its fill failed, and
// fails again) can still be discarded or forgotten: removing a folder needs no files.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { filled, markUnfilled } from '../../../src/core/worktree/filling';
import { gitIn, worktreeWorld } from './fixture';

describe('worktree: one whose files cannot be written', function () {
  this.timeout(60_000);
  const w = worktreeWorld();

  it('is discarded all the same (its folder, entry and branch go); a review reads its branch, asking for its files says why they cannot be written', async () => {
    const head = gitIn(w.ws, 'rev-parse', 'HEAD').trim();
    // What a placed child's worktree is after Arbor and its fill were killed (-9): marked, no
    // index, and git's index.lock left behind, so every fill fails again until someone removes it.
    const cut = path.join(w.t.h.worktrees.dir, 'stuck');
    fs.mkdirSync(path.dirname(cut), { recursive: true });
    markUnfilled(cut);
    gitIn(w.ws, 'worktree', 'add', '--quiet', '--no-checkout', '-b', 'arbor/stuck', cut, head);
    fs.writeFileSync(path.join(gitIn(cut, 'rev-parse', '--path-format=absolute', '--git-dir').trim(), 'index.lock'), '');
    const real = fs.realpathSync(cut);
    await w.root.append({ type: 'worktree', state: 'open', repo: w.ws, path: real, root: real, branch: 'arbor/stuck', base: head });
    // A review reads its branch (decision 0093: nothing of it was ever written), so it still shows it…
    const review = await w.t.h.worktrees.diff(w.root.id);
    assert.deepEqual(review.files, [], 'the branch at its base: nothing changed');
    assert.equal(review.listing.unwritten, true);
    // …while asking for its files fails, saying why.
    await assert.rejects(filled(real), /index\.lock|read-tree/);
    await w.t.h.worktrees.discard(w.root.id);
    assert.equal(fs.existsSync(real), false);
    assert.equal(gitIn(w.ws, 'branch', '--list', 'arbor/stuck').trim(), '');
  });
});
