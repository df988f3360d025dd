// A child of a parent with nothing uncommitted starts at HEAD itself (no second commit of the same
// tree), read in-process from HEAD's loose commit; anything else keeps its own base commit on HEAD.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { looseCommitTree } from '../../../src/core/worktree/objects';
import { RepoStateCache } from '../../../src/core/worktree/repo-state';
import { gitIn, initRepo, repoFoldersPerTest, worktreeIn } from './fixture';

describe('worktree base: at HEAD when the parent has nothing uncommitted', () => {
  let ws: string;
  let wts: string;
  repoFoldersPerTest('arbor-wt-head-', (f) => ({ ws, wts } = f));
  beforeEach(() => initRepo(ws));

  const repos = new RepoStateCache();
  const create = (name: string) => worktreeIn(ws, wts, name, { repos });
  const head = () => gitIn(ws, 'rev-parse', 'HEAD').trim();

  it('is HEAD for a clean parent, and its own commit on HEAD once the parent changes a file or adds one', async () => {
    const clean = await create('clean');
    assert.equal(clean.base, head());
    assert.equal(gitIn(clean.path, 'status', '--porcelain'), '');
    fs.writeFileSync(path.join(ws, 'a.txt'), 'changed\n');
    const dirty = await create('dirty');
    assert.notEqual(dirty.base, head());
    assert.equal(gitIn(ws, 'rev-parse', `${dirty.base}^`).trim(), head());
    assert.equal(fs.readFileSync(path.join(dirty.path, 'a.txt'), 'utf8'), 'changed\n');
    fs.writeFileSync(path.join(ws, 'a.txt'), 'one\n');
    fs.writeFileSync(path.join(ws, 'untracked.txt'), 'new\n');
    const added = await create('added');
    assert.notEqual(added.base, head());
    assert.equal(fs.readFileSync(path.join(added.path, 'untracked.txt'), 'utf8'), 'new\n');
  });

  it('reads a loose commit’s tree as git does, and nothing from a packed, absent or mismatched one (git says a packed HEAD’s)', async () => {
    const objects = path.join(ws, '.git', 'objects');
    assert.equal(looseCommitTree(objects, head()), gitIn(ws, 'rev-parse', 'HEAD^{tree}').trim());
    assert.equal(looseCommitTree(objects, gitIn(ws, 'rev-parse', 'HEAD^{tree}').trim()), undefined); // a tree, not a commit
    assert.equal(looseCommitTree(objects, '0'.repeat(40)), undefined);
    assert.equal(looseCommitTree(objects, '../../etc'), undefined);
    // A loose file whose bytes are not the object its name says: not trusted.
    const id = head();
    const file = path.join(objects, id.slice(0, 2), id.slice(2));
    const other = path.join(objects, 'ff', 'f'.repeat(38));
    fs.mkdirSync(path.dirname(other), { recursive: true });
    fs.copyFileSync(file, other);
    assert.equal(looseCommitTree(objects, 'f'.repeat(40)), undefined);
    fs.rmSync(other);
    // Packed (after a gc): not read here, so git is asked HEAD's tree, and a clean parent's child still starts at HEAD.
    gitIn(ws, 'gc', '-q');
    assert.equal(looseCommitTree(objects, id), undefined);
    const packed = await create('packed');
    assert.equal(packed.base, id);
    // Changed since: a commit of its own on HEAD.
    fs.writeFileSync(path.join(ws, 'a.txt'), 'after the gc\n');
    const changed = await create('changed');
    assert.notEqual(changed.base, id);
    assert.equal(gitIn(ws, 'rev-parse', `${changed.base}^`).trim(), id);
  });
});
