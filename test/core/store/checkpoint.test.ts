import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Database } from 'sql.js';
import { JournaledDb, loadSqlJs, type Schema, Store, StoreError } from '../../../src/core/store';
import { CATALOG_SCHEMA, TREE_SCHEMA } from '../../../src/core/store/schema';
import { childHeader, closeAsIfKilled, eventsFor, rootHeader, sizeOf, storeFolderPerTest, tempDir } from '../../support/store-fixtures';

// DESIGN §3: the journal beside each sql.js file is folded into it by a checkpoint
// (write temp + fsync + rename, then the journal is reset); a crash at any step of that
// loses nothing and replays nothing twice. Schema versions upgrade files once.

describe('store: checkpoints', () => {
  const tmp = storeFolderPerTest();
  const { openStore } = tmp;
  const treeFile = (root: string, ext: 'db' | 'wal') => path.join(tmp.dir, 'trees', `${root}.${ext}`);

  it('with a tiny checkpointBytes, appends fold the journal into the database file as they go', async () => {
    const store = await openStore({ checkpointBytes: 4096 });
    await store.createSession(rootHeader('r'));
    let wal = 0;
    let db = 0;
    let shrinks = 0;
    // The threshold is max(checkpointBytes, database size), so checkpoints come at growing intervals.
    for (let i = 0; i < 150; i++) {
      await store.append('r', eventsFor('r', i * 4, i * 4 + 4));
      const nowWal = sizeOf(treeFile('r', 'wal'));
      const nowDb = sizeOf(treeFile('r', 'db'));
      if (nowWal < wal) {
        shrinks++;
        assert.ok(nowDb > db, `checkpoint ${shrinks} grew the database file (${db} → ${nowDb} bytes)`);
      }
      // The journal never holds much more than the threshold: max(checkpointBytes, database size).
      assert.ok(nowWal < Math.max(4096, db) + 8192, `journal of ${nowWal} bytes after append ${i} (database ${db} bytes)`);
      wal = nowWal;
      db = nowDb;
    }
    assert.ok(shrinks >= 3, `expected several checkpoints, saw ${shrinks}`);
    await store.close();

    const again = await openStore({ checkpointBytes: 4096 });
    assert.deepEqual((await again.inspect('r')).events, eventsFor('r', 0, 600));
    assert.deepEqual(again.problems, []);
  });

  it("checkpoint() folds every journal, the catalog's included, into its database file", async () => {
    const store = await openStore();
    await store.createSession(rootHeader('a'), eventsFor('a', 0, 5));
    await store.createSession(childHeader('a-1', 'a'), eventsFor('a-1', 0, 3));
    await store.createSession(rootHeader('b'), eventsFor('b', 0, 4));
    await store.checkpoint();
    for (const wal of [path.join(tmp.dir, 'catalog.wal'), treeFile('a', 'wal'), treeFile('b', 'wal')]) assert.equal(sizeOf(wal), 0, `${wal} is empty`);
    for (const db of [path.join(tmp.dir, 'catalog.db'), treeFile('a', 'db'), treeFile('b', 'db')]) assert.ok(sizeOf(db) > 0, `${db} holds the data`);
    await closeAsIfKilled(store);

    const again = await openStore();
    assert.deepEqual(
      again
        .list()
        .map((h) => h.id)
        .sort(),
      ['a', 'a-1', 'b'],
    );
    assert.deepEqual((await again.inspect('a-1')).events, eventsFor('a-1', 0, 3));
  });

  it('keeps appends acknowledged while a checkpoint is being written', async () => {
    const store = await openStore();
    await store.createSession(rootHeader('r'));
    await store.createSession(childHeader('c', 'r'));
    let n = 0;
    for (let round = 0; round < 30; round++) {
      await store.append('r', eventsFor('r', n, n + 3)); // the journal is not empty: the checkpoint has work
      await store.append('c', eventsFor('c', n, n + 3));
      n += 3;
      // The checkpoint starts first; the appends come while it is at a different step each round.
      const checkpoint = store.checkpoint();
      for (let i = 0; i < round % 10; i++) await new Promise((r) => setImmediate(r));
      await Promise.all([store.append('r', eventsFor('r', n, n + 3)), store.append('c', eventsFor('c', n, n + 3)), checkpoint]);
      n += 3;
    }
    assert.deepEqual((await store.inspect('r')).events, eventsFor('r', 0, n), 'in memory');
    await closeAsIfKilled(store);

    const afterKill = await openStore();
    assert.deepEqual(afterKill.problems, []);
    assert.deepEqual((await afterKill.inspect('r')).events, eventsFor('r', 0, n), 'after a kill');
    assert.deepEqual((await afterKill.inspect('c')).events, eventsFor('c', 0, n), 'after a kill');
    await afterKill.close();

    const afterClose = await openStore();
    assert.deepEqual((await afterClose.inspect('r')).events, eventsFor('r', 0, n), 'after a clean close');
  });

  it('replays nothing twice after a crash between the rename and the journal reset', async () => {
    const store = await openStore();
    await store.createSession(rootHeader('r'), eventsFor('r', 0, 5));
    await store.createSession(childHeader('c', 'r'), eventsFor('c', 0, 2));
    await store.append('r', eventsFor('r', 5, 12));
    await store.append('c', eventsFor('c', 2, 4));
    // The journals as they were just before the checkpoint...
    const wals = [path.join(tmp.dir, 'catalog.wal'), treeFile('r', 'wal')].map((f) => [f, fs.readFileSync(f)] as const);
    assert.ok(wals.every(([, b]) => b.length > 0));
    await store.checkpoint();
    await store.close();
    // ...are back beside database files that already hold every record in them.
    for (const [f, bytes] of wals) fs.writeFileSync(f, bytes);

    const again = await openStore();
    assert.deepEqual(again.problems, []);
    assert.deepEqual(
      again
        .list()
        .map((h) => h.id)
        .sort(),
      ['c', 'r'],
    );
    assert.deepEqual(
      again.children('r').map((h) => h.id),
      ['c'],
    );
    assert.deepEqual((await again.inspect('r')).events, eventsFor('r', 0, 12));
    assert.deepEqual((await again.inspect('c')).events, eventsFor('c', 0, 4));
    // New records follow the stale ones and are replayed exactly once too.
    await again.append('r', eventsFor('r', 12, 15));
    await again.createSession(childHeader('d', 'r'), eventsFor('d', 0, 1));
    await closeAsIfKilled(again);

    const third = await openStore();
    assert.deepEqual(third.problems, []);
    assert.deepEqual(
      third.children('r').map((h) => h.id),
      ['c', 'd'],
    );
    assert.deepEqual((await third.inspect('r')).events, eventsFor('r', 0, 15));
    assert.deepEqual((await third.inspect('d')).events, eventsFor('d', 0, 1));
  });

  it('ignores the temp file of a checkpoint cut short before its rename; the journal still holds everything', async () => {
    const store = await openStore();
    await store.createSession(rootHeader('r'), eventsFor('r', 0, 5));
    await store.checkpoint();
    await store.append('r', eventsFor('r', 5, 10));
    await closeAsIfKilled(store);
    const tmpFile = `${treeFile('r', 'db')}.tmp-999999`;
    fs.writeFileSync(tmpFile, Buffer.alloc(3000, 7)); // half a database file, never renamed

    const again = await openStore();
    assert.deepEqual((await again.inspect('r')).events, eventsFor('r', 0, 10));
    assert.deepEqual(again.problems, []);
    assert.equal(fs.existsSync(tmpFile), false, 'the stale temp file is removed');
  });
});

describe('store: schema versions', () => {
  let tmp: ReturnType<typeof tempDir>;
  let dbs: JournaledDb<Note>[] = [];
  beforeEach(() => {
    tmp = tempDir();
    dbs = [];
    migrations = 0;
  });
  afterEach(async () => {
    for (const db of dbs) await db.close().catch(() => undefined);
    tmp.remove();
  });

  interface Note {
    id: number;
    text: string;
    tag?: string;
  }
  let migrations = 0;
  const V1: Schema = {
    kind: 'notes',
    version: 1,
    create: (db) => {
      db.run('CREATE TABLE meta (key TEXT PRIMARY KEY, value)');
      db.run('CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL)');
    },
    migrations: {},
  };
  const V2: Schema = {
    kind: 'notes',
    version: 2,
    create: (db) => {
      V1.create(db);
      db.run('ALTER TABLE notes ADD COLUMN tag TEXT');
    },
    migrations: {
      1: (db) => {
        migrations++;
        db.run('ALTER TABLE notes ADD COLUMN tag TEXT');
      },
    },
  };
  const openNotes = async (schema: Schema): Promise<JournaledDb<Note>> => {
    const db = await JournaledDb.open<Note>(
      tmp.dir,
      'notes',
      {
        schema,
        apply: (d: Database, n: Note) =>
          schema.version === 1
            ? d.run('INSERT INTO notes (id, text) VALUES (?, ?)', [n.id, n.text])
            : d.run('INSERT INTO notes (id, text, tag) VALUES (?, ?, ?)', [n.id, n.text, n.tag ?? null]),
      },
      {},
    );
    dbs.push(db);
    return db;
  };
  const rows = (db: JournaledDb<Note>) => db.db.exec('SELECT * FROM notes ORDER BY id')[0]?.values ?? [];
  /** The schema version recorded in the file on disk (not in anyone's memory). */
  const versionOnDisk = async (): Promise<number> => {
    const SQL = await loadSqlJs();
    const raw = new SQL.Database(fs.readFileSync(path.join(tmp.dir, 'notes.db')));
    try {
      return Number(raw.exec("SELECT value FROM meta WHERE key = 'schema'")[0].values[0][0]);
    } finally {
      raw.close();
    }
  };

  it('upgrades a v1 file once, with the migration hook, and records version 2 in the file', async () => {
    const v1 = await openNotes(V1);
    await v1.write([{ id: 1, text: 'one' }]);
    await v1.write([{ id: 2, text: 'two' }]);
    await v1.close();
    assert.equal(await versionOnDisk(), 1);

    const v2 = await openNotes(V2);
    assert.equal(migrations, 1);
    assert.deepEqual(rows(v2), [
      [1, 'one', null],
      [2, 'two', null],
    ]);
    await v2.close(); // nothing written after the upgrade
    assert.equal(await versionOnDisk(), 2, 'the upgraded file is on disk');

    const again = await openNotes(V2);
    assert.equal(migrations, 1, 'an upgraded file is not migrated again');
    await again.write([{ id: 3, text: 'three', tag: 'new' }]);
    assert.deepEqual(rows(again), [
      [1, 'one', null],
      [2, 'two', null],
      [3, 'three', 'new'],
    ]);
  });

  it('replays v1 journal records left by a crash after upgrading the file', async () => {
    const v1 = await openNotes(V1);
    await v1.write([{ id: 1, text: 'one' }]);
    await v1.checkpoint();
    await v1.write([{ id: 2, text: 'two' }]);
    await v1.close({ checkpoint: false }); // record 2 only in the journal, as after kill -9

    const v2 = await openNotes(V2);
    assert.equal(migrations, 1);
    assert.deepEqual(rows(v2), [
      [1, 'one', null],
      [2, 'two', null],
    ]);
  });

  it('refuses a file from a newer schema with SCHEMA_TOO_NEW and leaves it where it is', async () => {
    const v2 = await openNotes(V2);
    await v2.write([{ id: 1, text: 'one', tag: 'x' }]);
    await v2.close();
    const before = fs.readdirSync(tmp.dir).sort();
    const bytes = fs.readFileSync(path.join(tmp.dir, 'notes.db'));

    await assert.rejects(openNotes(V1), (err: unknown) => {
      assert.ok(err instanceof StoreError);
      assert.equal(err.code, 'SCHEMA_TOO_NEW');
      assert.equal(err.file, path.join(tmp.dir, 'notes.db'));
      assert.match(err.message, /notes\.db/);
      assert.match(err.message, /schema 2.*up to 1.*update Arbor/);
      return true;
    });
    assert.deepEqual(fs.readdirSync(tmp.dir).sort(), before, 'nothing quarantined');
    assert.ok(fs.readFileSync(path.join(tmp.dir, 'notes.db')).equals(bytes), 'the file is untouched');

    const newer = await openNotes(V2);
    assert.deepEqual(rows(newer), [[1, 'one', 'x']]);
  });

  describe('through the Store', () => {
    /** Open a store file as a newer Arbor would (schema 99, no-op migrations), which upgrades it. */
    const fromTheFuture = async (dir: string, base: string, schema: Schema): Promise<void> => {
      const noop = () => undefined;
      const future: Schema = { ...schema, version: 99, migrations: Object.fromEntries(Array.from({ length: 98 }, (_, i) => [i + 1, noop])) };
      const db = await JournaledDb.open<object>(dir, base, { schema: future, apply: noop });
      await db.close();
    };

    it('refuses a tree file from a newer Arbor without quarantining it; other trees work', async () => {
      const store = await Store.open(tmp.dir);
      await store.createSession(rootHeader('new'), eventsFor('new', 0, 5));
      await store.createSession(rootHeader('old'), eventsFor('old', 0, 5));
      await store.close();
      await fromTheFuture(path.join(tmp.dir, 'trees'), 'new', TREE_SCHEMA);

      const again = await Store.open(tmp.dir);
      try {
        await assert.rejects(again.inspect('new'), (err: unknown) => err instanceof StoreError && err.code === 'SCHEMA_TOO_NEW' && /new\.db/.test(err.message));
        await assert.rejects(again.append('new', eventsFor('new', 5, 6)), (err: unknown) => err instanceof StoreError && err.code === 'SCHEMA_TOO_NEW');
        assert.deepEqual(again.problems, []);
        assert.deepEqual(
          fs.readdirSync(path.join(tmp.dir, 'trees')).filter((f) => f.includes('.corrupt-')),
          [],
        );
        assert.deepEqual((await again.inspect('old')).events, eventsFor('old', 0, 5));
        await again.append('old', eventsFor('old', 5, 7));
        assert.equal(await again.length('old'), 7);
      } finally {
        await again.close();
      }
    });

    it('refuses to open a store whose catalog is from a newer Arbor, and releases the lock', async () => {
      const store = await Store.open(tmp.dir);
      await store.createSession(rootHeader('r'), eventsFor('r', 0, 5));
      await store.close();
      await fromTheFuture(tmp.dir, 'catalog', CATALOG_SCHEMA);

      await assert.rejects(
        Store.open(tmp.dir),
        (err: unknown) => err instanceof StoreError && err.code === 'SCHEMA_TOO_NEW' && /catalog\.db/.test(err.message),
      );
      assert.deepEqual(
        fs.readdirSync(tmp.dir).filter((f) => f.includes('.corrupt-') || f === 'arbor.lock'),
        [],
      );
    });
  });
});
