import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { eventsFor, rootHeader, sizeOf, storeFolderPerTest } from '../../support/store-fixtures';

// Decision 0085: a store opened with `closeFoldsFrom` (the CLI's, one process per command)
// leaves a small journal unfolded at close. The journal is the durable copy either way: the
// next open replays it, and a journal past the threshold is folded as before.

describe('store: folding journals at close', () => {
  const tmp = storeFolderPerTest();
  const { openStore } = tmp;
  const file = (...p: string[]) => path.join(tmp.dir, ...p);

  it('keeps small journals as they are, with fewer syncs at close, and the next open has every event', async () => {
    const closeSyncs = async (opts: { closeFoldsFrom?: number }, root: string): Promise<number> => {
      const store = await openStore(opts);
      await store.createSession(rootHeader(root));
      await store.append(root, eventsFor(root, 0, 4));
      const before = store.stats().syncs;
      await store.close();
      return store.stats().syncs - before;
    };
    const folded = await closeSyncs({}, 'f');
    assert.ok(fs.existsSync(file('trees', 'f.db')), 'a plain close folds the tree journal');
    assert.equal(sizeOf(file('trees', 'f.wal')), 0);
    const kept = await closeSyncs({ closeFoldsFrom: 64 * 1024 }, 'r');
    assert.ok(!fs.existsSync(file('trees', 'r.db')), 'the tree journal was left unfolded');
    assert.ok(sizeOf(file('trees', 'r.wal')) > 0);
    assert.ok(sizeOf(file('catalog.wal')) > 0);
    assert.ok(kept < folded, `close cost ${kept} syncs with small journals kept, ${folded} folding them`);

    const again = await openStore({ closeFoldsFrom: 64 * 1024 });
    assert.deepEqual(
      again
        .list()
        .map((h) => h.id)
        .sort(),
      ['f', 'r'],
    );
    assert.deepEqual((await again.inspect('r')).events, eventsFor('r', 0, 4));
    assert.deepEqual(again.problems, []);
    await again.append('r', eventsFor('r', 4, 6));
    await again.close();
    const third = await openStore();
    assert.deepEqual((await third.inspect('r')).events, eventsFor('r', 0, 6));
    await third.close();
    assert.ok(fs.existsSync(file('trees', 'r.db')), 'a store without the option folds what an earlier one left');
    assert.equal(sizeOf(file('trees', 'r.wal')), 0);
  });

  it('folds a journal that reached the threshold', async () => {
    const store = await openStore({ closeFoldsFrom: 2048 });
    await store.createSession(rootHeader('r'));
    for (let i = 0; i < 20; i++) await store.append('r', eventsFor('r', i * 4, i * 4 + 4));
    assert.ok(sizeOf(file('trees', 'r.wal')) >= 2048);
    await store.close();
    assert.ok(fs.existsSync(file('trees', 'r.db')));
    assert.equal(sizeOf(file('trees', 'r.wal')), 0);
    const again = await openStore();
    assert.deepEqual((await again.inspect('r')).events, eventsFor('r', 0, 80));
    await again.close();
  });
});
