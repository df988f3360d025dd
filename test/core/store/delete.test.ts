import assert from 'node:assert/strict';
import { StoreError } from '../../../src/core/store/errors';
import { childHeader, eventsFor, rootHeader, storeFolderPerTest } from '../../support/store-fixtures';

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
