import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { StoreError } from '../../../src/core/store/errors';
import { replaceSync } from '../../support/file-syncs';
import { childHeader, eventsFor, rootHeader, storeFolderPerTest } from '../../support/store-fixtures';

// A window reload closes the store while writes are still coming (decision 0098). Nothing may
// be written after close() released the lock: a write that had not started when the close
// began is refused whole (CLOSED); one already under way finishes before the files close.

/** Store files this process still has open. */
function openFiles(dir: string): string[] {
  const out: string[] = [];
  for (const fd of fs.readdirSync('/proc/self/fd')) {
    try {
      const target = fs.readlinkSync(path.join('/proc/self/fd', fd));
      if (target.startsWith(dir)) out.push(path.relative(dir, target));
    } catch {
      // closed meanwhile
    }
  }
  return out;
}

const isClosed = (e: unknown) => e instanceof StoreError && e.code === 'CLOSED' && /nothing of it was written/.test(e.message);

describe('store: writes racing close()', () => {
  const folder = storeFolderPerTest();

  /** A store reopened after a clean close: summaries current (the first write clears them), no tree file open. */
  async function reopened() {
    const s = await folder.openStore();
    await s.createSession(rootHeader('r'), eventsFor('r', 0, 5));
    await s.close();
    return folder.openStore();
  }

  it('an append issued just before close() is refused (CLOSED), writes nothing and leaves no file open', async () => {
    const s = await reopened();
    const append = s.append('r', eventsFor('r', 5, 10));
    const close = s.close();
    await assert.rejects(append, isClosed);
    await close;
    assert.deepEqual(openFiles(folder.dir), [], 'no tree file reopened on the closed store');
    assert.equal(fs.existsSync(path.join(folder.dir, 'arbor.lock')), false);
    const again = await folder.openStore();
    assert.deepEqual(await again.readEvents('r'), eventsFor('r', 0, 5), 'the refused append left nothing');
    assert.equal(again.summaryOf('r')?.length, 5);
  });

  it('createSession and deleteSession issued just before close() are refused whole', async () => {
    const s = await reopened();
    const create = s.createSession(childHeader('c', 'r'), eventsFor('c', 0, 3));
    const remove = s.deleteSession('r');
    const close = s.close();
    await assert.rejects(create, isClosed);
    await assert.rejects(remove, isClosed);
    await close;
    assert.deepEqual(openFiles(folder.dir), []);
    const again = await folder.openStore();
    assert.deepEqual(
      again.list().map((h) => h.id),
      ['r'],
    );
    assert.deepEqual(await again.readEvents('r'), eventsFor('r', 0, 5));
  });

  it('a write already under way when close() is called finishes, durably, before the lock is released', async () => {
    const s = await folder.openStore();
    await s.createSession(rootHeader('r'), eventsFor('r', 0, 5));
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let lockAtSync: boolean | undefined;
    const restore = await replaceSync(
      'datasync',
      (orig) =>
        async function (this: fs.promises.FileHandle) {
          lockAtSync ??= fs.existsSync(path.join(folder.dir, 'arbor.lock'));
          await held;
          return orig.call(this);
        },
    );
    let closed = false;
    try {
      const append = s.append('r', eventsFor('r', 5, 8));
      await new Promise((r) => setTimeout(r, 30)); // its journal write is waiting on the sync
      const close = s.close().then(() => (closed = true));
      await new Promise((r) => setTimeout(r, 30));
      assert.equal(closed, false, 'close waits for the write under way');
      release();
      await append;
      await close;
    } finally {
      release();
      restore();
    }
    assert.equal(lockAtSync, true);
    const again = await folder.openStore();
    assert.deepEqual(await again.readEvents('r'), eventsFor('r', 0, 8));
  });

  it('after close, reads and lengths are refused without opening a tree file', async () => {
    const s = await reopened();
    await s.close();
    await assert.rejects(s.length('r'), isClosed);
    await assert.rejects(s.readEvents('r'), isClosed);
    await assert.rejects(s.checkpoint(), isClosed);
    assert.deepEqual(openFiles(folder.dir), []);
  });
});
