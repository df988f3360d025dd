import * as assert from 'node:assert/strict';
import { StoreError } from '../../../src/core/store/errors';
import { replaceSync } from '../../support/file-syncs';
import { eventsFor, rootHeader, storeFolderPerTest } from '../../support/store-fixtures';

// An append is applied to the in-memory database while its fdatasync runs (decision 0001's
// journal, overlapped). If that fdatasync fails, the append is refused, and nothing that was
// never durable may be read back: the file's reads and writes stop until a reopen, which
// shows exactly what the disk holds.
describe('store: an fdatasync that fails after the record was applied in memory', () => {
  const tmp = storeFolderPerTest();

  it('refuses the append, hides the undurable events, and a reopen shows the durable log', async () => {
    const store = await tmp.openStore();
    await store.createSession(rootHeader('r'), eventsFor('r', 0, 5));
    const restore = await replaceSync(
      'datasync',
      () => () => Promise.reject(Object.assign(new Error('EIO: i/o error, fdatasync (injected)'), { code: 'EIO' })),
    );
    let err: unknown;
    try {
      await store.append('r', eventsFor('r', 5, 8)).catch((e: unknown) => (err = e));
    } finally {
      restore();
    }
    assert.ok(err instanceof StoreError && err.code === 'IO', String(err));
    assert.match(err.message, /EIO/);
    assert.match(err.message, /Nothing acknowledged was lost/);
    assert.match(err.message, /reopen the store/);
    await assert.rejects(store.readEvents('r'), (e: unknown) => e instanceof StoreError && e.code === 'IO' && /reopen the store/.test(e.message));
    // Counts too: the length would include the events that never became durable (decision 0098).
    await assert.rejects(store.length('r'), (e: unknown) => e instanceof StoreError && e.code === 'IO' && /reopen the store/.test(e.message));
    await assert.rejects(store.append('r', eventsFor('r', 5, 6)), (e: unknown) => e instanceof StoreError);
    await store.close();

    const again = await tmp.openStore();
    assert.deepEqual(await again.readEvents('r'), eventsFor('r', 0, 5), 'the durable log, without the failed append');
    await again.append('r', eventsFor('r', 5, 7));
    assert.deepEqual(await again.readEvents('r'), eventsFor('r', 0, 7));
  });
});
