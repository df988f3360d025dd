import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { SessionEvent, SessionHeader } from '../../../src/core/session/events';
import { encodeRecord, Store, StoreError, type StoreErrorCode, scanJournal } from '../../../src/core/store';
import { childHeader, childIds, closeAsIfKilled, eventsFor, prng, rootHeader, storeFolderPerTest } from '../../support/store-fixtures';

// DESIGN §3: "quarantine a corrupt file with a clear message and keep the other sessions
// usable"; "a torn tail is detected (checksum) and dropped". Each damaged file below is one
// of the four kinds a store holds: the catalog's database and journal, a tree's database
// and journal.

/**
 * The store every case starts from. Tree `one` (root, child) and tree `two` (root, child)
 * were folded into their database files by a clean close; then more events and a late child
 * per tree went only into the journals (the process was killed before any checkpoint).
 */
const HEADERS: Record<string, SessionHeader> = {
  one: rootHeader('one'),
  'one-kid': childHeader('one-kid', 'one'),
  'one-late': childHeader('one-late', 'one'),
  two: rootHeader('two'),
  'two-kid': childHeader('two-kid', 'two'),
  'two-late': childHeader('two-late', 'two'),
};
/** Event counts in the database files (first phase) and in all (after the journals). */
const IN_DB: Record<string, number> = { one: 10, 'one-kid': 5, two: 10, 'two-kid': 5 };
const ALL: Record<string, number> = { one: 20, 'one-kid': 7, 'one-late': 3, two: 15, 'two-kid': 5, 'two-late': 2 };
/** Records in trees/one.wal, in order: one 10–13, one 13–15, one 15–20, one-late created, one-kid 5–7. */
const ONE_WAL_RECORDS = 5;

async function populate(dir: string): Promise<void> {
  const store = await Store.open(dir);
  await store.createSession(HEADERS.one, eventsFor('one', 0, 10));
  await store.createSession(HEADERS['one-kid'], eventsFor('one-kid', 0, 5));
  await store.createSession(HEADERS.two, eventsFor('two', 0, 10));
  await store.createSession(HEADERS['two-kid'], eventsFor('two-kid', 0, 5));
  await store.close();

  const again = await Store.open(dir);
  await again.append('one', eventsFor('one', 10, 13));
  await again.append('one', eventsFor('one', 13, 15));
  await again.append('one', eventsFor('one', 15, 20));
  await again.createSession(HEADERS['one-late'], eventsFor('one-late', 0, 3));
  await again.append('one-kid', eventsFor('one-kid', 5, 7));
  await again.append('two', eventsFor('two', 10, 15));
  await again.createSession(HEADERS['two-late'], eventsFor('two-late', 0, 2));
  await closeAsIfKilled(again);
}

type Damage = 'garbage' | 'zero-filled' | 'emptied' | 'truncated to half';
function damage(file: string, how: Damage): void {
  const size = fs.statSync(file).size;
  assert.ok(size > 0, `${file} holds data before it is damaged`);
  if (how === 'garbage') {
    const rnd = prng(size);
    fs.writeFileSync(file, Buffer.from(Array.from({ length: size }, () => Math.floor(rnd() * 256))));
  } else if (how === 'zero-filled') fs.writeFileSync(file, Buffer.alloc(size));
  else if (how === 'emptied') fs.truncateSync(file, 0);
  else {
    // Half, but inside a record: a journal cut exactly between two records reads as a clean,
    // shorter journal (nothing on disk can tell it apart from one that never held more).
    let half = Math.floor(size / 2);
    if (file.endsWith('.wal') && recordOffsets(fs.readFileSync(file)).includes(half)) half++;
    fs.truncateSync(file, half);
  }
}

const QUARANTINED = /\.corrupt-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z$/;
const byId = (a: SessionHeader, b: SessionHeader) => a.id.localeCompare(b.id);

async function rejectsWith(p: Promise<unknown>, codes: StoreErrorCode[], ...patterns: RegExp[]): Promise<StoreError> {
  let caught: unknown;
  await assert.rejects(p, (err: unknown) => ((caught = err), true));
  assert.ok(caught instanceof StoreError, `expected a StoreError, got ${String(caught)}`);
  assert.ok(codes.includes(caught.code), `code ${caught.code} (${caught.message})`);
  for (const re of patterns) assert.match(caught.message, re);
  return caught;
}

describe('store: damaged files', () => {
  const tmp = storeFolderPerTest();
  const { openStore } = tmp;
  const file = (rel: string) => path.join(tmp.dir, rel);
  const quarantinedCopies = (rel: string) =>
    fs
      .readdirSync(path.dirname(file(rel)))
      .filter((f) => f.startsWith(`${path.basename(rel)}.corrupt-`))
      .map((f) => path.join(path.dirname(file(rel)), f));

  beforeEach(() => populate(tmp.dir));

  /** Every session of the tree is whole: all its events, readable and appendable. */
  async function assertTreeWhole(store: Store, root: 'one' | 'two'): Promise<void> {
    for (const id of Object.keys(ALL).filter((k) => k.startsWith(root))) {
      assert.deepEqual((await store.inspect(id)).events, eventsFor(id, 0, ALL[id]), id);
    }
    await store.append(root, eventsFor(root, ALL[root], ALL[root] + 2));
    assert.deepEqual(await store.readEvents(root, ALL[root]), eventsFor(root, ALL[root], ALL[root] + 2));
    await store.createSession(childHeader(`${root}-new`, root), eventsFor(`${root}-new`, 0, 1));
  }

  /** Each listed session's events are a prefix of what was written, at least what the database file held. */
  async function assertPrefixes(store: Store, ids: string[]): Promise<Record<string, number>> {
    const lengths: Record<string, number> = {};
    for (const id of ids) {
      const events: SessionEvent[] = await store.readEvents(id);
      assert.ok(events.length >= (IN_DB[id] ?? 0) && events.length <= ALL[id], `${id}: ${events.length} events`);
      assert.deepEqual(events, eventsFor(id, 0, events.length), id);
      lengths[id] = events.length;
    }
    return lengths;
  }

  describe('the catalog database', () => {
    for (const how of ['garbage', 'zero-filled', 'emptied', 'truncated to half'] as const) {
      it(`${how}: is quarantined and rebuilt from the tree files; every session is back`, async () => {
        damage(file('catalog.db'), how);
        const store = await openStore();

        const problem = store.problems.find((p) => p.file === file('catalog.db'));
        assert.ok(problem, `catalog.db is reported: ${JSON.stringify(store.problems)}`);
        assert.match(problem.movedTo, QUARANTINED);
        assert.ok(fs.existsSync(problem.movedTo), 'the damaged bytes are kept aside');
        assert.ok(problem.reason.length > 0);

        assert.deepEqual(store.list().sort(byId), Object.values(HEADERS).sort(byId));
        assert.deepEqual(childIds(store, 'one'), ['one-kid', 'one-late']);
        await assertTreeWhole(store, 'one');
        await assertTreeWhole(store, 'two');
        await store.close();

        const again = await openStore();
        assert.deepEqual(again.problems, [], 'the rebuilt catalog is sound');
        assert.equal(again.list().length, Object.keys(HEADERS).length + 2);
        assert.equal(await again.length('one-new'), 1);
      });
    }
  });

  /** Change one character inside the bytes `marker` in `rel`: still valid SQLite, still valid JSON, different data. */
  function alter(rel: string, marker: string, replacement: string): void {
    const bytes = fs.readFileSync(file(rel));
    const at = bytes.indexOf(marker);
    assert.ok(at > 0, `${marker} is in ${rel}`);
    bytes.write(replacement, at);
    fs.writeFileSync(file(rel), bytes);
  }

  it('a changed letter inside the catalog database is caught: quarantined and rebuilt, never a wrong header', async () => {
    alter('catalog.db', 'Root two', 'Root twp');
    const store = await openStore();
    assert.ok(store.problems.some((p) => p.file === file('catalog.db')));
    assert.deepEqual(store.header('two'), HEADERS.two);
  });

  describe('the catalog journal', () => {
    it('garbage: is moved aside and reported; the catalog is rebuilt from the tree files', async () => {
      damage(file('catalog.wal'), 'garbage');
      const store = await openStore();
      const problem = store.problems.find((p) => p.file === file('catalog.wal'));
      assert.ok(problem, `catalog.wal is reported: ${JSON.stringify(store.problems)}`);
      assert.match(problem.movedTo, QUARANTINED);
      assert.deepEqual(quarantinedCopies('catalog.wal'), [problem.movedTo]);
      assert.deepEqual(store.list().sort(byId), Object.values(HEADERS).sort(byId));
      await assertTreeWhole(store, 'one');
      await assertTreeWhole(store, 'two');
    });

    for (const how of ['zero-filled', 'truncated to half'] as const) {
      it(`${how}: is a torn tail, cut off without quarantine; the lost entries come back from the tree files`, async () => {
        damage(file('catalog.wal'), how);
        const store = await openStore();
        assert.deepEqual(store.problems, []);
        assert.deepEqual(quarantinedCopies('catalog.wal'), []);
        assert.deepEqual(store.list().sort(byId), Object.values(HEADERS).sort(byId));
        assert.deepEqual(childIds(store, 'two'), ['two-kid', 'two-late']);
        await assertTreeWhole(store, 'one');
        await assertTreeWhole(store, 'two');
      });
    }
  });

  describe('a tree database', () => {
    for (const how of ['garbage', 'zero-filled', 'emptied', 'truncated to half'] as const) {
      it(`${how}: CORRUPT names the file, which is quarantined; the other tree stays readable and writable`, async () => {
        damage(file('trees/one.db'), how);
        const store = await openStore();
        assert.deepEqual(store.list().sort(byId), Object.values(HEADERS).sort(byId), 'the catalog still lists them');

        const err = await rejectsWith(store.inspect('one'), ['CORRUPT'], /one\.db/, /moved aside/);
        assert.equal(err.file, file('trees/one.db'));
        const moved = store.problems.filter((p) => p.file.startsWith(file('trees/one.')));
        assert.deepEqual(moved.map((p) => path.basename(p.file)).sort(), ['one.db', 'one.wal']);
        for (const p of moved) {
          assert.match(p.movedTo, QUARANTINED);
          assert.ok(fs.existsSync(p.movedTo));
          assert.equal(fs.existsSync(p.file), false);
        }
        // Every session of that tree fails clearly, for reading and writing alike.
        await rejectsWith(store.inspect('one-kid'), ['CORRUPT'], /one\.db/);
        await rejectsWith(store.readEvents('one-late'), ['CORRUPT'], /one\.db/);
        await rejectsWith(store.append('one', eventsFor('one', 20, 21)), ['CORRUPT']);
        await rejectsWith(store.createSession(childHeader('one-more', 'one')), ['CORRUPT']);

        await assertTreeWhole(store, 'two');
        await store.close();

        // Next time: the sessions are listed but their data is gone (in the *.corrupt-* copy).
        const again = await openStore();
        assert.deepEqual(again.problems, []);
        for (const id of ['one', 'one-kid', 'one-late']) await rejectsWith(again.inspect(id), ['CORRUPT', 'MISSING_DATA'], new RegExp(id), /corrupt/);
        await rejectsWith(again.append('one', eventsFor('one', 0, 1)), ['CORRUPT', 'MISSING_DATA']);
        assert.deepEqual(await again.readEvents('two'), eventsFor('two', 0, ALL.two + 2));
        assert.equal(await again.length('two-new'), 1);
      });
    }
  });

  it('a changed letter inside a stored event is caught: CORRUPT and quarantined, never the altered event', async () => {
    alter('trees/one.db', 'one/6:', 'one/6;');
    const store = await openStore();
    const err = await rejectsWith(store.inspect('one'), ['CORRUPT'], /one\.db/, /checksum/);
    assert.equal(err.file, file('trees/one.db'));
    assert.equal(quarantinedCopies('trees/one.db').length, 1);
    await assertTreeWhole(store, 'two');
  });

  describe('a tree journal', () => {
    it("garbage: the database file's state is kept, the journal moved aside and reported; the other tree is untouched", async () => {
      damage(file('trees/one.wal'), 'garbage');
      const store = await openStore();
      assert.deepEqual((await store.inspect('one')).events, eventsFor('one', 0, IN_DB.one), 'the good prefix');
      const problem = store.problems.find((p) => p.file === file('trees/one.wal'));
      assert.ok(problem, `one.wal is reported: ${JSON.stringify(store.problems)}`);
      assert.match(problem.movedTo, QUARANTINED);
      assert.match(problem.reason, /byte 0/);
      assert.deepEqual((await store.inspect('one-kid')).events, eventsFor('one-kid', 0, IN_DB['one-kid']));
      await rejectsWith(store.inspect('one-late'), ['MISSING_DATA', 'CORRUPT'], /one-late/);
      // The tree goes on from its good prefix.
      await store.append('one', eventsFor('one', IN_DB.one, IN_DB.one + 3));
      await assertTreeWhole(store, 'two');
      await store.close();

      const again = await openStore();
      assert.deepEqual(again.problems, []);
      assert.deepEqual(await again.readEvents('one'), eventsFor('one', 0, IN_DB.one + 3));
    });

    it('garbage in the middle, good records after it: the records before it are kept, the journal moved aside and reported', async () => {
      const wal = file('trees/one.wal');
      const bytes = fs.readFileSync(wal);
      const scan = scanJournal(bytes);
      assert.equal(scan.records.length, ONE_WAL_RECORDS);
      // Overwrite the middle of the third record's payload (one 15–20).
      const third = recordOffsets(bytes)[2];
      bytes.fill(0x7a, third + 40, third + 80);
      fs.writeFileSync(wal, bytes);

      const store = await openStore();
      assert.deepEqual(await store.readEvents('one'), eventsFor('one', 0, 15), 'records 1 and 2 are kept');
      assert.deepEqual(await store.readEvents('one-kid'), eventsFor('one-kid', 0, IN_DB['one-kid']), 'records after the damage are not replayed');
      await rejectsWith(store.readEvents('one-late'), ['MISSING_DATA', 'CORRUPT']);
      const problem = store.problems.find((p) => p.file === wal);
      assert.ok(problem, `one.wal is reported: ${JSON.stringify(store.problems)}`);
      assert.match(problem.reason, new RegExp(`byte ${third}\\b`));
      assert.ok(fs.readFileSync(problem.movedTo).equals(bytes), 'the damaged journal is kept whole, aside');
      await store.append('one', eventsFor('one', 15, 16));
      await assertTreeWhole(store, 'two');
      await store.close();

      const again = await openStore();
      assert.deepEqual(again.problems, []);
      assert.deepEqual(await again.readEvents('one'), eventsFor('one', 0, 16));
    });

    for (const how of ['zero-filled', 'truncated to half', 'emptied'] as const) {
      it(`${how}: whole records before the damage are kept, nothing is quarantined, and appends go on`, async () => {
        damage(file('trees/one.wal'), how);
        const store = await openStore();
        const lengths = await assertPrefixes(store, ['one', 'one-kid']);
        assert.deepEqual(store.problems, []);
        assert.deepEqual(quarantinedCopies('trees/one.wal'), []);
        await store.append('one', eventsFor('one', lengths.one, lengths.one + 2));
        await assertTreeWhole(store, 'two');
        await store.close();

        const again = await openStore();
        assert.deepEqual(again.problems, []);
        assert.deepEqual(await again.readEvents('one'), eventsFor('one', 0, lengths.one + 2));
      });
    }
  });

  describe('a torn tail written by hand', () => {
    // What a crash can leave after the last whole record: part of the next one (a real record
    // appending `one` 20–21, which was never acknowledged).
    const tails: [string, (rec: Buffer) => Buffer][] = [
      ['half a header', (rec) => rec.subarray(0, 6)],
      ['a header without its payload', (rec) => rec.subarray(0, 12)],
      ['a payload cut short', (rec) => rec.subarray(0, rec.length - 3)],
      ['a whole record whose checksum does not match', (rec) => Buffer.concat([rec.subarray(0, rec.length - 2), Buffer.from('!}')])],
      ['zeros (space allocated, never written)', (rec) => Buffer.alloc(rec.length)],
    ];
    for (const [what, tail] of tails) {
      it(`${what}: is dropped, nothing else is lost, and appends continue after the good records`, async () => {
        const wal = file('trees/one.wal');
        const good = fs.readFileSync(wal);
        const records = scanJournal(good).records;
        const next = encodeRecord({
          lsn: records[records.length - 1].lsn + 1,
          ops: [{ op: 'events', session: 'one', events: eventsFor('one', ALL.one, ALL.one + 1) }],
        });
        fs.appendFileSync(wal, tail(next));

        const store = await openStore();
        assert.deepEqual(await store.readEvents('one'), eventsFor('one', 0, ALL.one)); // opens the tree
        assert.deepEqual(store.problems, []);
        assert.ok(fs.readFileSync(wal).subarray(0, good.length).equals(good));
        assert.equal(fs.statSync(wal).size, good.length, 'the torn bytes are cut off');
        await assertTreeWhole(store, 'one');
        await assertTreeWhole(store, 'two');
        await closeAsIfKilled(store);

        const again = await openStore();
        assert.deepEqual(again.problems, []);
        assert.deepEqual(await again.readEvents('one'), eventsFor('one', 0, ALL.one + 2));
        assert.equal(await again.length('one-new'), 1);
      });
    }

    it('in the catalog journal: is dropped, and every session is still listed', async () => {
      const wal = file('catalog.wal');
      fs.appendFileSync(wal, encodeRecord({ lsn: 99, ops: [] }).subarray(0, 20));
      const store = await openStore();
      assert.deepEqual(store.problems, []);
      assert.deepEqual(store.list().sort(byId), Object.values(HEADERS).sort(byId));
      await assertTreeWhole(store, 'two');
    });
  });
});

/** Byte offset of each record in a journal (12-byte header: magic, payload length, crc32). */
function recordOffsets(bytes: Buffer): number[] {
  const out: number[] = [];
  for (let off = 0; off + 12 <= bytes.length; off += 12 + bytes.readUInt32LE(off + 4)) out.push(off);
  return out;
}
