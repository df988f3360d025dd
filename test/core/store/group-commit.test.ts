import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { SessionEvent } from '../../../src/core/session/events';
import { type Store, StoreError, scanJournal } from '../../../src/core/store';
import { mergeTreeOps, type TreeOp } from '../../../src/core/store/tree';
import { replaceSync } from '../../support/file-syncs';
import { childHeader, closeAsIfKilled, eventsFor, rootHeader, storeFolderPerTest } from '../../support/store-fixtures';

// Decision 0063: appends issued together, or while an fdatasync is in flight, from one session
// or from any session of the same store file, are written together and covered by one
// fdatasync; each caller resolves only once a completed fdatasync covers its own record, and a
// failed one acknowledges none of the callers it was to cover.

/**
 * Watch every fdatasync of the process: the bytes each covers (the file's size when it was
 * called: written before it) once it has completed. `during(call)` runs when one is called.
 */
async function watchSyncs(during?: (call: number) => void) {
  /** Per inode: the most bytes a completed fdatasync covered. */
  const covered = new Map<number, number>();
  let calls = 0;
  let failNext = false;
  const restore = await replaceSync(
    'datasync',
    (original) =>
      function (this: fs.promises.FileHandle) {
        const st = fs.fstatSync(this.fd);
        const n = ++calls;
        if (failNext) {
          failNext = false;
          return Promise.reject(Object.assign(new Error('EIO: i/o error, fdatasync (injected)'), { code: 'EIO' }));
        }
        const done = original.call(this).then(() => {
          covered.set(st.ino, Math.max(covered.get(st.ino) ?? 0, st.size));
        });
        during?.(n);
        return done;
      },
  );
  return {
    get calls() {
      return calls;
    },
    failNextSync() {
      failNext = true;
    },
    /** True when the journal on disk holds `events` of `session` inside bytes a completed fdatasync covered. */
    durable(wal: string, session: string, events: readonly SessionEvent[]): boolean {
      const buf = fs.readFileSync(wal);
      const ino = fs.statSync(wal).ino;
      const want = new Set(events.map((e) => e.seq));
      let off = 0;
      for (const rec of scanJournal(buf).records) {
        off += 12 + Buffer.byteLength(JSON.stringify(rec));
        for (const op of rec.ops as { op: string; session?: string; events?: SessionEvent[] }[]) {
          if (op.op !== 'events' || op.session !== session) continue;
          for (const e of op.events ?? []) if (want.delete(e.seq) && off > (covered.get(ino) ?? 0)) return false;
        }
      }
      return want.size === 0;
    },
    restore,
  };
}

describe('store: group commit (decision 0063)', () => {
  const tmp = storeFolderPerTest();
  let store: Store;
  const wal = () => path.join(tmp.dir, 'trees', 'root.wal');

  beforeEach(async () => {
    store = await tmp.openStore();
    await store.createSession(rootHeader('root'));
    await store.createSession(childHeader('kid-a', 'root'));
    await store.createSession(childHeader('kid-b', 'root'));
  });
  afterEach(() => store.close().catch(() => undefined));

  it('writes appends issued together by several sessions of one file as one commit, and acknowledges each only once a completed fdatasync covers it', async () => {
    const watch = await watchSyncs();
    try {
      const before = store.stats();
      const sessions = ['root', 'kid-a', 'kid-b'];
      const late: string[] = [];
      const all = sessions.flatMap((id) =>
        [0, 1, 2].map((k) => {
          const events = eventsFor(id, k * 2, k * 2 + 2);
          return store.append(id, events).then(() => {
            if (!watch.durable(wal(), id, events)) late.push(`${id} ${k}`);
          });
        }),
      );
      await Promise.all(all);
      const after = store.stats();
      assert.deepEqual(late, [], 'acknowledged before a completed fdatasync covered them');
      assert.equal(after.commits - before.commits, 1, 'nine appends issued in one turn of the event loop: one commit');
      assert.equal(after.syncs - before.syncs, 1);
      assert.equal(after.records - before.records, 9, 'nine appends counted (written as one journal record: decision 0088)');
      assert.equal(after.events - before.events, 18);
      for (const id of sessions) assert.deepEqual(await store.readEvents(id), eventsFor(id, 0, 6), id);
    } finally {
      watch.restore();
    }
  });

  it("a group commit is one journal record, each session's appends joined into one op in order; it reads back and replays the same (decision 0088)", async () => {
    const sessions = ['root', 'kid-a', 'kid-b'];
    const scan0 = scanJournal(fs.readFileSync(wal())).records.length;
    // Interleaved: root 0-1, kid-a 0-1, kid-b 0-1, root 2-3, …
    await Promise.all([0, 1, 2].flatMap((k) => sessions.map((id) => store.append(id, eventsFor(id, k * 2, k * 2 + 2)))));
    const records = scanJournal(fs.readFileSync(wal())).records.slice(scan0);
    assert.equal(records.length, 1, 'one record for the group');
    const ops = records[0].ops as { op: string; session: string; events: SessionEvent[] }[];
    assert.deepEqual(
      ops.map((o) => [o.session, o.events.map((e) => e.seq)]),
      sessions.map((id) => [id, [0, 1, 2, 3, 4, 5]]),
    );
    for (const id of sessions) assert.deepEqual(await store.readEvents(id), eventsFor(id, 0, 6), id);
    await closeAsIfKilled(store);
    store = await tmp.openStore();
    for (const id of sessions) assert.deepEqual(await store.readEvents(id), eventsFor(id, 0, 6), `${id} after replay`);
    await store.append('kid-a', eventsFor('kid-a', 6, 7));
    assert.deepEqual(await store.readEvents('kid-a'), eventsFor('kid-a', 0, 7));
  });

  it("appends never join across their session's creation or deletion, and leave the ops given unchanged", () => {
    const ev = (id: string, a: number, b: number) => ({ op: 'events' as const, session: id, events: eventsFor(id, a, b) });
    const given: TreeOp[] = [
      ev('a', 0, 1),
      ev('b', 0, 1),
      ev('a', 1, 2),
      { op: 'delete', session: 'a' },
      { op: 'session', header: rootHeader('a') },
      ev('a', 0, 1),
      ev('b', 1, 2),
      ev('a', 1, 2),
    ];
    const copy = structuredClone(given);
    const merged = mergeTreeOps(given);
    assert.deepEqual(
      merged.map((o) =>
        o.op === 'events' ? `${o.session}:${o.events.map((e) => e.seq).join(',')}` : `${o.op} ${o.op === 'session' ? o.header.id : o.session}`,
      ),
      ['a:0,1', 'b:0,1', 'delete a', 'session a', 'a:0,1'],
    );
    assert.deepEqual(given, copy, "the callers' ops are not changed");
  });

  it('appends that arrive while an fdatasync is in flight, from any session of the file, share the next one', async () => {
    const arrivals: Promise<void>[] = [];
    const watch = await watchSyncs((call) => {
      // While the first commit's fdatasync runs: twelve appends from the three sessions.
      if (call !== 1) return;
      for (const id of ['root', 'kid-a', 'kid-b']) for (let k = 1; k <= 4; k++) arrivals.push(store.append(id, eventsFor(id, k, k + 1)));
    });
    try {
      const before = store.stats();
      await Promise.all([
        store.append('root', eventsFor('root', 0, 1)),
        store.append('kid-a', eventsFor('kid-a', 0, 1)),
        store.append('kid-b', eventsFor('kid-b', 0, 1)),
      ]);
      await Promise.all(arrivals);
      assert.equal(arrivals.length, 12);
      assert.equal(store.stats().commits - before.commits, 2, 'fifteen appends, two commits');
      for (const id of ['root', 'kid-a', 'kid-b']) assert.deepEqual(await store.readEvents(id), eventsFor(id, 0, 5), id);
    } finally {
      watch.restore();
    }
  });

  it('a failed fdatasync acknowledges none of the appends it was to cover; a reopen shows exactly the acknowledged ones', async () => {
    await store.append('root', eventsFor('root', 0, 2));
    const watch = await watchSyncs();
    watch.failNextSync();
    let results: PromiseSettledResult<void>[];
    try {
      results = await Promise.allSettled([store.append('root', eventsFor('root', 2, 4)), store.append('kid-a', eventsFor('kid-a', 0, 3))]);
    } finally {
      watch.restore();
    }
    for (const r of results) assert.ok(r.status === 'rejected' && r.reason instanceof StoreError && r.reason.code === 'IO', String(r.status));
    await store.close();
    store = await tmp.openStore();
    assert.deepEqual(await store.readEvents('root'), eventsFor('root', 0, 2), 'the acknowledged append, without the failed group');
    assert.deepEqual(await store.readEvents('kid-a'), []);
    await store.append('kid-a', eventsFor('kid-a', 0, 1));
    assert.deepEqual(await store.readEvents('kid-a'), eventsFor('kid-a', 0, 1), 'the file takes writes again after the reopen');
  });
});
