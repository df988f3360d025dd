import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { SessionEvent } from '../../../src/core/session/events';
import { sessionStatus } from '../../../src/core/session/status';
import { summarize } from '../../../src/core/session/summary';
import { Store } from '../../../src/core/store/store';
import { childHeader, eventsFor, restoreFiles, rootHeader, snapshotFiles, storeFolderPerTest, tempDir } from '../../support/store-fixtures';

// Issue 9.8: the status fold's summary is kept with every append and persisted by a clean
// close, so opening reads no log; after a crash it is marked stale and folded from the logs.
describe('store: session summaries kept incrementally', () => {
  const folder = storeFolderPerTest();

  /** The summary of a session from its whole log, the way every reader used to fold it. */
  const folded = async (store: Store, id: string) => summarize(store.header(id)!, await store.readEvents(id));

  it('folds each append as it lands: equal to a fold of the whole log, turn by turn', async () => {
    const store = await folder.openStore();
    await store.createSession(rootHeader('r'));
    await store.createSession(childHeader('c', 'r'), eventsFor('c', 0, 3));
    for (let seq = 0; seq < 23; seq += 4) await store.append('r', eventsFor('r', seq, Math.min(seq + 4, 23)));
    await store.append('c', eventsFor('c', 3, 5));
    for (const id of ['r', 'c']) assert.deepEqual(store.summaryOf(id), await folded(store, id), id);
    const r = store.summaryOf('r')!;
    assert.equal(r.length, 23);
    assert.equal(r.openTurn, true, 'seq 20 opened a turn that has not ended');
    assert.equal(sessionStatus(r), 'interrupted', 'an open turn no process runs is interrupted, never settled');
    assert.equal(sessionStatus(store.summaryOf('c')!), 'settled', 'a delegated child whose turn completed');
    assert.deepEqual(r.tokens, { prompt: 2 + 7 + 12 + 17 + 22, completion: 5 * 7, cacheHit: 5 * 3 });
  });

  it('a clean close persists them: the next open knows every summary without reading a log', async () => {
    const store = await folder.openStore();
    await store.createSession(rootHeader('r'));
    await store.createSession(childHeader('c', 'r'));
    await store.append('r', eventsFor('r', 0, 10));
    await store.append('c', eventsFor('c', 0, 7));
    const before = { r: store.summaryOf('r'), c: store.summaryOf('c') };
    await store.close();

    // Unreadable logs, readable catalog: what is shown comes from the catalog alone.
    const trees = path.join(folder.dir, 'trees');
    const saved = snapshotFiles(trees);
    for (const f of fs.readdirSync(trees)) fs.writeFileSync(path.join(trees, f), 'not a database');
    const again = await folder.openStore();
    assert.deepEqual({ r: again.summaryOf('r'), c: again.summaryOf('c') }, before);
    assert.equal(sessionStatus(again.summaryOf('c')!), 'interrupted', 'c stopped inside its second turn');
    await again.close();
    restoreFiles(trees, saved);
  });

  it('stored summaries are read when first asked for: an append, a delete and a close before that keep them right', async () => {
    const store = await folder.openStore();
    for (const id of ['a', 'b', 'c', 'd']) await store.createSession(rootHeader(id));
    for (const id of ['a', 'b', 'c', 'd']) await store.append(id, eventsFor(id, 0, 6));
    const expect = { c: await folded(store, 'c'), d: await folded(store, 'd') };
    await store.close();

    const next = await folder.openStore();
    // None of them asked for yet: 'a' is appended to, 'b' deleted, 'c' and 'd' left alone.
    await next.append('a', eventsFor('a', 6, 9));
    await next.deleteSession('b');
    assert.deepEqual(next.summaryOf('a'), await folded(next, 'a'), 'the stored summary, then the append folded on it');
    assert.equal(next.summaryOf('a')?.length, 9);
    assert.equal(next.summaryOf('b'), undefined, 'deleted before it was ever read');
    assert.deepEqual(next.summaryOf('c'), expect.c);
    await next.close(); // 'd' was never read in this open: its stored row stays exact

    const last = await folder.openStore();
    assert.deepEqual(last.summaryOf('d'), expect.d);
    assert.equal(last.summaryOf('a')?.length, 9);
    assert.equal(last.summaryOf('b'), undefined);
    assert.deepEqual(
      last.listRefs().map((h) => h.id),
      ['a', 'c', 'd'],
    );
    await last.close();
  });

  it('after a crash they are stale: folded from the logs once, right, and persisted again', async () => {
    const store = await folder.openStore();
    await store.createSession(rootHeader('r'));
    await store.append('r', eventsFor('r', 0, 5));
    await store.close();

    const live = await folder.openStore();
    assert.equal(live.summaryOf('r')?.length, 5);
    await live.append('r', eventsFor('r', 5, 8)); // a turn opens; then the process "dies"
    const crashed = tempDir('arbor-summary-crash-');
    try {
      for (const [rel, bytes] of snapshotFiles(folder.dir)) {
        fs.mkdirSync(path.dirname(path.join(crashed.dir, rel)), { recursive: true });
        fs.writeFileSync(path.join(crashed.dir, rel), bytes);
      }
      const after = await Store.open(crashed.dir);
      assert.equal(after.summaryOf('r'), undefined, 'the first write marked the stored summaries stale');
      const s = await after.summary('r');
      assert.deepEqual(s, await folded(after, 'r'));
      assert.equal(s.length, 8);
      assert.equal(s.openTurn, true);
      await after.close();
      const reopened = await Store.open(crashed.dir);
      assert.deepEqual(reopened.summaryOf('r'), s, 'the close wrote what the fold found');
      await reopened.close();
    } finally {
      crashed.remove();
    }
  });

  it('a fork: its seed is the parent history (no tokens, no stops, no queue of its own); deleting drops the summary', async () => {
    const store = await folder.openStore();
    await store.createSession(rootHeader('r'));
    const parent = eventsFor('r', 0, 5);
    await store.append('r', parent);
    const seed: SessionEvent[] = [...parent, { seq: 5, at: parent[4].at, type: 'inbox/accepted', messageId: 'm1', text: 'queued', source: { kind: 'user' } }];
    const endSeed: SessionEvent = { seq: 6, at: parent[4].at, type: 'session/end-seed', seedLength: 6, droppedInbox: ['m1'] };
    await store.createSession({ ...rootHeader('f'), origin: 'fork', parentSession: 'r', seedLength: 6 }, [...seed, endSeed]);
    const f = store.summaryOf('f')!;
    assert.deepEqual(f.tokens, { prompt: 0, completion: 0, cacheHit: 0 });
    assert.equal(f.lastStopReason, undefined);
    assert.equal(f.inbox, 0);
    assert.equal(sessionStatus(f), 'idle');
    await store.deleteSession('f');
    assert.equal(store.summaryOf('f'), undefined);
    await assert.rejects(store.summary('f'), /No session f/);
  });

  it('an older store (catalog schema 1, no summaries) opens, folds on demand and is upgraded', async () => {
    const store = await folder.openStore();
    await store.createSession(rootHeader('r'));
    await store.append('r', eventsFor('r', 0, 5));
    await store.close();
    // Make the catalog what schema 1 wrote: no summaries table, version 1.
    const { loadSqlJs } = await import('../../../src/core/store/sqljs');
    const SQL = await loadSqlJs();
    const file = path.join(folder.dir, 'catalog.db');
    const db = new SQL.Database(fs.readFileSync(file));
    db.run('DROP TABLE summaries');
    db.run("DELETE FROM meta WHERE key = 'summaries'");
    db.run("UPDATE meta SET value = 1 WHERE key = 'schema'");
    const { seal } = await import('../../../src/core/store/db-file');
    const bytes = db.export();
    seal(bytes);
    fs.writeFileSync(file, bytes);
    const old = await folder.openStore();
    assert.equal(old.summaryOf('r'), undefined);
    assert.equal((await old.summary('r')).length, 5);
    await old.close();
    const upgraded = await folder.openStore();
    assert.equal(upgraded.summaryOf('r')?.lastStopReason, 'completed');
  });
});
