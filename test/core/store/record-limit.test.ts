import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { SessionEvent } from '../../../src/core/session/events';
import { StoreError } from '../../../src/core/store/errors';
import { encodeRecord, MAX_RECORD_BYTES, maxRecordBytes, RecordTooLarge, scanJournal } from '../../../src/core/store/journal';
import { childHeader, closeAsIfKilled, eventAt, eventsFor, rootHeader, storeFolderPerTest } from '../../support/store-fixtures';

// An open reads back journal records up to MAX_RECORD_BYTES; a longer one is damage. So a write
// that would make a longer record must be refused before a byte of it is written, never
// acknowledged and then discarded by the next open after a crash (decision 0098). The limit is
// lowered here (`maxRecordBytes`) so the test needs kilobytes, not 256 MiB.

const LIMIT = 64 * 1024;

function message(session: string, seq: number, chars: number): SessionEvent {
  return { seq, at: eventAt(session, seq).at, type: 'user/message', text: 'x'.repeat(chars), source: { kind: 'user' } };
}

describe('store: a write past the journal record limit', () => {
  const folder = storeFolderPerTest();

  it('the encoder refuses a record past the limit, which never exceeds what an open reads', () => {
    assert.equal(maxRecordBytes(), MAX_RECORD_BYTES);
    assert.equal(maxRecordBytes(MAX_RECORD_BYTES * 4), MAX_RECORD_BYTES, 'a limit is only ever lowered');
    assert.ok(scanJournal(encodeRecord({ lsn: 1, text: 'y'.repeat(900) }, 1000)).records.length === 1);
    assert.throws(
      () => encodeRecord({ lsn: 1, text: 'y'.repeat(1000) }, 1000),
      (e: unknown) => e instanceof RecordTooLarge && e.bytes > 1000,
    );
  });

  it('is refused with TOO_LARGE before anything reaches the journal; the store goes on, and a crash loses nothing acknowledged', async () => {
    const s = await folder.openStore({ maxRecordBytes: LIMIT });
    await s.createSession(rootHeader('r'), eventsFor('r', 0, 5));
    // In one group commit with a small append of a session of the same tree: only the large one is refused.
    await s.createSession(childHeader('c', 'r'));
    const wal = path.join(folder.dir, 'trees', 'r.wal');
    const before = fs.statSync(wal).size;
    const big = s.append('r', [message('r', 5, LIMIT + 10)]);
    const small = s.append('c', eventsFor('c', 0, 3));
    await assert.rejects(
      big,
      (e: unknown) =>
        e instanceof StoreError &&
        e.code === 'TOO_LARGE' &&
        /nothing of it was written/.test(e.message) &&
        /smaller batches/.test(e.message) &&
        e.file === path.join(folder.dir, 'trees', 'r.db'),
    );
    await small;
    const bytes = fs.readFileSync(wal);
    assert.ok(bytes.length - before < LIMIT, `the journal grew by ${bytes.length - before} bytes: only the small append`);
    const ops = scanJournal(bytes).records.flatMap((r) => r.ops as { op: string; session: string }[]);
    assert.ok(!ops.some((o) => o.op === 'events' && o.session === 'r' && JSON.stringify(o).length > LIMIT), 'not a byte of the refused write in the journal');

    await s.append('r', eventsFor('r', 5, 8)); // the same seqs, in a size that fits
    assert.equal(await s.length('r'), 8);
    await closeAsIfKilled(s);

    const again = await folder.openStore();
    assert.deepEqual(again.problems, []);
    assert.deepEqual(await again.readEvents('r'), eventsFor('r', 0, 8));
    assert.deepEqual(await again.readEvents('c'), eventsFor('c', 0, 3));
  });

  it('a session created with a seed past the limit is not created', async () => {
    const s = await folder.openStore({ maxRecordBytes: LIMIT });
    await assert.rejects(s.createSession(rootHeader('big'), [message('big', 0, LIMIT)]), (e: unknown) => e instanceof StoreError && e.code === 'TOO_LARGE');
    assert.equal(s.has('big'), false);
    await s.createSession(rootHeader('big'), eventsFor('big', 0, 2));
    assert.equal(await s.length('big'), 2);
  });
});
