import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Store } from '../../../src/core/store';
import { eventsFor, rootHeader, tempDir } from '../../support/store-fixtures';
import { diskMode, fillDisk, unmount } from '../tools/full-disk';

// A checkpoint (export → temp → fsync → rename) on a full disk (decision 0063, amended in s48):
// the temp file it could not finish is removed at once, not left holding the last free blocks
// until the next open (the store's own leftover taking the space its next appends need). The
// journal still holds everything, and once there is room the store goes on.
describe('store: a checkpoint on a full disk (a real 512 KB tmpfs where this process may mount one)', () => {
  it('leaves no temp file behind, and appends go on once there is room', async function () {
    if (diskMode.mode !== 'tmpfs') this.skip(); // the checkpoint writes through node:fs itself: only a real small disk fills
    const tmp = tempDir();
    const dir = path.join(tmp.dir, 'store');
    fs.mkdirSync(dir);
    // 512 KB: room for a store's files, not for much more.
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=512k', 'tmpfs', dir], { stdio: 'ignore' });
    const undo = () => unmount(dir);
    let store: Store | undefined;
    try {
      store = await Store.open(dir);
      await store.createSession(rootHeader('r'), eventsFor('r', 0, 20));
      fillDisk(dir);
      await assert.rejects(store.checkpoint(), /ENOSPC/);
      const temps = (d: string): string[] =>
        fs.readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? temps(path.join(d, e.name)) : /\.tmp-\d+$/.test(e.name) ? [e.name] : []));
      assert.deepEqual(temps(dir), [], 'no half-written checkpoint temp left on the full disk');
      fs.rmSync(path.join(dir, 'filler.bin'));
      await store.append('r', eventsFor('r', 20, 22));
      await store.close();
      store = await Store.open(dir);
      assert.deepEqual(await store.readEvents('r'), eventsFor('r', 0, 22));
    } finally {
      await store?.close().catch(() => undefined);
      undo();
      tmp.remove();
    }
  });
});
