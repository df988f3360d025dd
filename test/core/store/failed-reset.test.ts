import * as assert from 'node:assert/strict';
import { replaceSync } from '../../support/file-syncs';
import { closeAsIfKilled, eventsFor, rootHeader, storeFolderPerTest } from '../../support/store-fixtures';

// A checkpoint folds a journal into its database file, then resets the journal: truncate to 0,
// fdatasync. If that fdatasync fails (EIO) the file is already cut to 0 bytes, and the events
// appended after must still go to the journal's start: written at the old end instead, they sit
// behind a run of zero bytes that a reopen reads as a torn tail and cuts off — acknowledged
// events lost after a crash (decision 0063, amended in s48).
describe('store: a journal reset whose fdatasync fails', () => {
  const tmp = storeFolderPerTest();

  it('loses none of the events acknowledged after it when the process dies', async () => {
    const store = await tmp.openStore();
    await store.createSession(rootHeader('r'), eventsFor('r', 0, 5));
    let failed = 0;
    const restore = await replaceSync('datasync', () => () => {
      failed++;
      return Promise.reject(Object.assign(new Error('EIO: i/o error, fdatasync (injected)'), { code: 'EIO' }));
    });
    try {
      await store.checkpoint().catch(() => undefined);
    } finally {
      restore();
    }
    assert.ok(failed > 0, 'a reset was cut at its fdatasync');
    await store.append('r', eventsFor('r', 5, 8));
    await closeAsIfKilled(store);

    const again = await tmp.openStore();
    assert.deepEqual(await again.readEvents('r'), eventsFor('r', 0, 8), 'every acknowledged event is there');
  });
});
