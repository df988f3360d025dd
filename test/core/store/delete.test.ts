import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { StoreError } from '../../../src/core/store/errors';
import { TreeFile } from '../../../src/core/store/tree';
import { childHeader, closeAsIfKilled, eventsFor, rootHeader, storeFolderPerTest } from '../../support/store-fixtures';

describe('store: deleting a session deletes its subtree, durably, and nothing else', () => {
  const folder = storeFolderPerTest();

  it('removes the session and all its descendants from list, children and reads; survives reopen', async () => {
    let s = await folder.openStore();
    await s.createSession(rootHeader('r1'), eventsFor('r1', 0, 10));
    await s.createSession(childHeader('r1.a', 'r1'), eventsFor('r1.a', 0, 5));
    await s.createSession(childHeader('r1.a.b', 'r1.a', 2), eventsFor('r1.a.b', 0, 5));
    await s.createSession(childHeader('r1.c', 'r1'), eventsFor('r1.c', 0, 5));
    await s.createSession(rootHeader('r2'), eventsFor('r2', 0, 10));

    const gone = await s.deleteSession('r1.a');
    assert.deepEqual(gone.sort(), ['r1.a', 'r1.a.b']);
    const ids = () =>
      s
        .list()
        .map((h) => h.id)
        .sort();
    assert.deepEqual(ids(), ['r1', 'r1.c', 'r2']);
    assert.deepEqual(
      s.children('r1').map((h) => h.id),
      ['r1.c'],
    );
    await assert.rejects(s.readEvents('r1.a.b'), (e: unknown) => e instanceof StoreError && e.code === 'UNKNOWN_SESSION');
    assert.equal((await s.readEvents('r1.c')).length, 5, 'a sibling in the same tree file is untouched');

    await s.close();
    s = await folder.openStore();
    assert.deepEqual(ids(), ['r1', 'r1.c', 'r2']);
    assert.equal((await s.readEvents('r1')).length, 10);
    assert.equal((await s.readEvents('r2')).length, 10);
    // The id is free again: a new session may take it.
    await s.createSession(childHeader('r1.a', 'r1'), eventsFor('r1.a', 0, 3));
    assert.equal((await s.readEvents('r1.a')).length, 3);
  });

  it('deletes a whole tree from its root and refuses an unknown id', async () => {
    const s = await folder.openStore();
    await s.createSession(rootHeader('t1'), eventsFor('t1', 0, 10));
    await s.createSession(childHeader('t1.x', 't1'), eventsFor('t1.x', 0, 5));
    assert.deepEqual((await s.deleteSession('t1')).sort(), ['t1', 't1.x']);
    assert.deepEqual(s.list(), []);
    await assert.rejects(s.deleteSession('t1'), (e: unknown) => e instanceof StoreError && e.code === 'UNKNOWN_SESSION');
  });
});

describe('store: deleting a whole tree removes its files (decision 0098)', () => {
  const folder = storeFolderPerTest();
  const treeFiles = () => fs.readdirSync(path.join(folder.dir, 'trees')).sort();

  it('removes trees/<root>.db and .wal once the deletion is durable; later opens do not read them', async () => {
    let s = await folder.openStore();
    await s.createSession(rootHeader('keep'), eventsFor('keep', 0, 3));
    await s.createSession(rootHeader('gone'), eventsFor('gone', 0, 10));
    await s.createSession(childHeader('gone.c', 'gone'), eventsFor('gone.c', 0, 4));
    await s.checkpoint(); // both files of the tree exist
    assert.deepEqual(treeFiles(), ['gone.db', 'gone.wal', 'keep.db', 'keep.wal']);
    assert.deepEqual((await s.deleteSession('gone')).sort(), ['gone', 'gone.c']);
    assert.deepEqual(treeFiles(), ['keep.db', 'keep.wal']);
    await s.close();
    s = await folder.openStore();
    assert.deepEqual(
      s.list().map((h) => h.id),
      ['keep'],
    );
    // The id is free again, for a new tree that starts from nothing.
    await s.createSession(rootHeader('gone'), eventsFor('gone', 0, 2));
    await s.close();
    s = await folder.openStore();
    assert.deepEqual(await s.readEvents('gone'), eventsFor('gone', 0, 2));
    assert.deepEqual(s.children('gone'), []);
  });

  it('a crash between the catalog write and the removal: the next open removes the files, and nothing comes back', async () => {
    let s = await folder.openStore();
    await s.createSession(rootHeader('keep'), eventsFor('keep', 0, 3));
    await s.createSession(rootHeader('gone'), eventsFor('gone', 0, 10));
    await s.close();
    const left = ['gone.db', 'gone.wal'].map((f) => [f, fs.readFileSync(path.join(folder.dir, 'trees', f))] as const);
    s = await folder.openStore();
    await s.deleteSession('gone');
    await closeAsIfKilled(s);
    for (const [f, bytes] of left) fs.writeFileSync(path.join(folder.dir, 'trees', f), bytes); // as if never removed
    s = await folder.openStore();
    assert.deepEqual(
      s.list().map((h) => h.id),
      ['keep'],
      'the acknowledged deletion holds',
    );
    assert.deepEqual(s.problems, []);
    assert.deepEqual(treeFiles(), ['keep.db', 'keep.wal']);
  });

  it('an unknown tree file holding no session (left by deletions before 0098) is removed at open', async () => {
    let s = await folder.openStore();
    await s.createSession(rootHeader('keep'), eventsFor('keep', 0, 3));
    await s.close();
    const empty = await TreeFile.open(path.join(folder.dir, 'trees'), 'emptied', {});
    await empty.close();
    assert.ok(treeFiles().includes('emptied.db'));
    s = await folder.openStore();
    assert.deepEqual(treeFiles(), ['keep.db', 'keep.wal']);
    assert.deepEqual(
      s.list().map((h) => h.id),
      ['keep'],
    );
  });
});
