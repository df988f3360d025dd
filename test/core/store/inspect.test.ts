import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { SessionValidationError } from '../../../src/core/session/errors';
import type { SessionEvent } from '../../../src/core/session/events';
import { Session } from '../../../src/core/session/session';
import { loadSqlJs, StoreError } from '../../../src/core/store';
import { seal } from '../../../src/core/store/db-file';
import { eventAt, eventsFor, rootHeader, storeFolderPerTest } from '../../support/store-fixtures';

// Store.inspect is the stored log read whole, then Session.restore (trusted): the same session
// and the same refusals, and a read failure anywhere in the log wins over an ordering refusal
// in an earlier batch. A faster inspect (restoring each batch as it is parsed, tried in
// decision 0104) must keep all three.

/** A turn/end at `seq` that closes no open turn: the store takes it (its shape is fine), restore refuses it. */
function strayEnd(seq: number): SessionEvent {
  return { seq, at: eventAt('r', seq).at, type: 'turn/end', turnId: 'nobody', stopReason: 'completed' };
}

/** Replace one chunk row's body in a closed store's tree file, checksum kept valid (damage the file's own checks cannot see). */
async function rewriteRow(storeDir: string, tree: string, firstSeq: number, body: string): Promise<void> {
  const file = path.join(storeDir, 'trees', `${tree}.db`);
  const SQL = await loadSqlJs();
  const db = new SQL.Database(fs.readFileSync(file));
  db.run('UPDATE chunks SET body = ? WHERE first_seq = ?', [body, firstSeq]);
  assert.equal(db.getRowsModified(), 1);
  const bytes = db.export();
  db.close();
  seal(bytes);
  fs.writeFileSync(file, bytes);
}

describe('store: inspect', () => {
  const tmp = storeFolderPerTest();

  it('restores the stored batches into the session restore makes of the whole log', async () => {
    const store = await tmp.openStore();
    await store.createSession(rootHeader('r'), eventsFor('r', 0, 3));
    for (let s = 3; s < 40; s += 4) await store.append('r', eventsFor('r', s, Math.min(s + 4, 40)));
    await store.append('r', eventsFor('r', 40, 43)); // ends inside a turn
    const back = await store.inspect('r');
    const whole = Session.restore(rootHeader('r'), await store.readEvents('r'));
    assert.deepEqual(back.events, whole.events);
    assert.deepEqual(back.events, eventsFor('r', 0, 43));
    assert.equal(back.openTurnId, whole.openTurnId);
    assert.deepEqual([...back.pendingCalls], [...whole.pendingCalls]);
    assert.deepEqual((await store.inspect('r')).events, back.events, 'inspected again');
  });

  it('refuses as restore does, at the same event, when a stored batch breaks an ordering rule', async () => {
    const store = await tmp.openStore();
    await store.createSession(rootHeader('r'), eventsFor('r', 0, 5));
    await store.append('r', [strayEnd(5)]);
    await store.append('r', eventsFor('r', 6, 10));
    let expected: unknown;
    assert.throws(
      () => Session.restore(rootHeader('r'), [...eventsFor('r', 0, 5), strayEnd(5)], { trusted: true }),
      (err: unknown) => ((expected = err), true),
    );
    await assert.rejects(store.inspect('r'), (err: unknown) => {
      assert.ok(err instanceof SessionValidationError, `expected restore's refusal, got ${String(err)}`);
      assert.ok(expected instanceof SessionValidationError);
      assert.equal(err.code, expected.code);
      assert.equal(err.seq, 5);
      return true;
    });
  });

  it('lets a read failure in a later row win over a refusal in an earlier batch (CORRUPT)', async () => {
    const first = await tmp.openStore();
    await first.createSession(rootHeader('r'), eventsFor('r', 0, 5));
    await first.append('r', [strayEnd(5)]);
    await first.append('r', eventsFor('r', 6, 10));
    await first.close(); // folded into the database file
    await rewriteRow(tmp.dir, 'r', 6, '[{"seq": 6, "type": "turn/st'); // not JSON
    const store = await tmp.openStore();
    await assert.rejects(store.inspect('r'), (err: unknown) => err instanceof StoreError && err.code === 'CORRUPT' && /r\.db/.test(err.message));
  });
});
