import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { SessionEvent } from '../../../src/core/session/events';
import { loadSqlJs } from '../../../src/core/store';
import { CHUNK_CHARS, chunkRows } from '../../../src/core/store/tree';
import { childHeader, closeAsIfKilled, eventAt, eventsFor, rootHeader, storeFolderPerTest } from '../../support/store-fixtures';

// Decision 0088 (amended): a batch whose JSON passes CHUNK_CHARS is stored as several rows of
// whole events, so reading a long history written at once (a fork's copy, a session created
// with its past) never makes one string V8 keeps in its large-object space. What goes in comes
// out the same, from any seq, after a clean close and after a kill.

/** An event of `chars` characters of text (non-ASCII included: two-byte strings are the costly kind). */
function bigEvent(seq: number, chars: number): SessionEvent {
  return { seq, at: eventAt('x', seq).at, type: 'user/message', text: 'é—'.repeat(chars / 2), source: { kind: 'user' } };
}

/** Every row of the tree file holding `session` (a closed store's files): its seq range and body length. */
async function rowsOf(dir: string, session: string): Promise<{ first: number; last: number; chars: number; body: string }[]> {
  const SQL = await loadSqlJs();
  for (const name of fs.readdirSync(path.join(dir, 'trees')).filter((f) => f.endsWith('.db'))) {
    const db = new SQL.Database(fs.readFileSync(path.join(dir, 'trees', name)));
    try {
      const res = db.exec('SELECT first_seq, last_seq, body FROM chunks WHERE session = ? ORDER BY first_seq', [session]);
      const rows = (res[0]?.values ?? []).map(([first, last, body]) => ({
        first: Number(first),
        last: Number(last),
        chars: String(body).length,
        body: String(body),
      }));
      if (rows.length > 0) return rows;
    } finally {
      db.close();
    }
  }
  return [];
}

describe('store: a long batch is stored as rows of at most CHUNK_CHARS', () => {
  const folder = storeFolderPerTest();

  it('a short batch is one row, byte for byte the JSON of the batch', () => {
    const events = eventsFor('r', 0, 10);
    assert.deepEqual(chunkRows(events), [{ first: 0, last: 9, json: JSON.stringify(events) }]);
  });

  it('a long batch: contiguous rows of whole events, none past the bound, that parse back to the batch', () => {
    const events = eventsFor('r', 0, 2000);
    const rows = chunkRows(events);
    assert.ok(rows.length > 10, `2,000 events of ~0.3 KB each make many rows (${rows.length})`);
    let next = 0;
    const back: SessionEvent[] = [];
    for (const row of rows) {
      assert.ok(row.json.length <= CHUNK_CHARS, `a row of ${row.json.length} characters`);
      assert.equal(row.first, next, 'rows follow one another with no gap or overlap');
      const parsed = JSON.parse(row.json) as SessionEvent[];
      assert.equal(parsed[0].seq, row.first);
      assert.equal(parsed[parsed.length - 1].seq, row.last);
      back.push(...parsed);
      next = row.last + 1;
    }
    assert.equal(next, 2000);
    assert.deepEqual(back, events);
  });

  it('an event longer than the bound is a row of its own; its neighbours share rows as usual', () => {
    const events = [...eventsFor('r', 0, 3), bigEvent(3, CHUNK_CHARS * 3), ...eventsFor('r', 4, 7)];
    const rows = chunkRows(events);
    assert.deepEqual(
      rows.map((r) => [r.first, r.last]),
      [
        [0, 2],
        [3, 3],
        [4, 6],
      ],
    );
    assert.deepEqual(
      rows.flatMap((r) => JSON.parse(r.json) as SessionEvent[]),
      events,
    );
  });

  it('through the store: a 6,000-event history created at once reads back whole and from any seq, after a clean close and after a kill', async () => {
    const past = [...eventsFor('big', 0, 3000), bigEvent(3000, CHUNK_CHARS * 2), ...eventsFor('big', 3001, 6000)];
    let store = await folder.openStore();
    await store.createSession(rootHeader('root'));
    await store.createSession(childHeader('big', 'root'), past);
    await store.append('big', eventsFor('big', 6000, 6005));
    const all = [...past, ...eventsFor('big', 6000, 6005)];
    assert.deepEqual(await store.readEvents('big'), all);
    // A kill: the journal holds the creation, and replaying it must store the same rows.
    await closeAsIfKilled(store);
    store = await folder.openStore();
    assert.deepEqual(await store.readEvents('big'), all);
    for (const from of [1, 57, 2999, 3000, 3001, 4321, 5999, 6000, 6004])
      assert.deepEqual(await store.readEvents('big', from), all.slice(from), `from seq ${from}`);
    await store.close();

    const rows = await rowsOf(folder.dir, 'big');
    assert.ok(rows.length > 20, `the history is many rows (${rows.length})`);
    for (const r of rows) {
      const many = r.last > r.first;
      assert.ok(!many || r.chars <= CHUNK_CHARS, `a row of ${r.last - r.first + 1} events is ${r.chars} characters`);
    }
    assert.deepEqual(
      rows.filter((r) => r.chars > CHUNK_CHARS).map((r) => [r.first, r.last]),
      [[3000, 3000]],
      'only the one long event stands alone past the bound',
    );
    assert.deepEqual(
      rows.flatMap((r) => JSON.parse(r.body) as SessionEvent[]),
      all,
    );
  });
});
