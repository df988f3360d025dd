import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { Catalog } from '../../../src/core/store/catalog';
import { TreeFile } from '../../../src/core/store/tree';
import { childHeader, childIds, eventsFor, rootHeader, storeFolderPerTest } from '../../support/store-fixtures';

// createSession writes the tree file, then the catalog; deleteSession the catalog, then the
// tree file. The catalog is the commit point (decision 0018): a kill -9 between the two
// writes leaves no invisible child behind, and the same id can be created again.

const OUT = path.join(__dirname, '..', '..', '..', 'src', 'core', 'store');

/**
 * Run a real process that builds root `r` with child `done`, then kills itself (SIGKILL) at
 * the instant named by `when`, between the two writes of creating or deleting child `kid`.
 */
async function killBetweenWrites(dir: string, when: 'create' | 'delete'): Promise<void> {
  const script = `
    const { Store } = require(${JSON.stringify(OUT)});
    const { Catalog } = require(${JSON.stringify(path.join(OUT, 'catalog'))});
    const { eventsFor, rootHeader, childHeader } = require(${JSON.stringify(path.join(__dirname, '..', '..', 'support', 'store-fixtures'))});
    const add = Catalog.prototype.add;
    Catalog.prototype.add = async function (ops) {
      // Creating 'kid': the tree write is durable, the catalog write never starts.
      if (${JSON.stringify(when)} === 'create' && ops.some((o) => o.op === 'session' && o.header.id === 'kid')) process.kill(process.pid, 'SIGKILL');
      await add.call(this, ops);
      // Deleting 'kid': the catalog write is durable, the tree write never starts.
      if (ops.some((o) => o.op === 'delete' && o.id === 'kid')) process.kill(process.pid, 'SIGKILL');
    };
    (async () => {
      const store = await Store.open(${JSON.stringify(dir)});
      await store.createSession(rootHeader('r'), eventsFor('r', 0, 5));
      await store.createSession(childHeader('done', 'r'), eventsFor('done', 0, 3));
      if (${JSON.stringify(when)} === 'delete') await store.createSession(childHeader('kid', 'r'), eventsFor('kid', 0, 4));
      await store.checkpoint(); // the journals alone must not be what saves us
      if (${JSON.stringify(when)} === 'create') await store.createSession(childHeader('kid', 'r'), eventsFor('kid', 0, 4));
      else await store.deleteSession('kid');
      process.exit(3); // never reached
    })().catch((e) => { console.error(e); process.exit(2); });`;
  const signal = await new Promise<NodeJS.Signals | null>((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('error', reject);
    child.on('close', (_code, sig) => resolve(sig));
  });
  assert.equal(signal, 'SIGKILL', 'the writer died by kill -9 between the two writes');
}

/** Session ids stored in the tree file `name` (opened directly, as nothing else holds it). */
async function treeSessions(dir: string, name: string): Promise<string[]> {
  const tree = await TreeFile.open(path.join(dir, 'trees'), name, {});
  try {
    return tree
      .headers()
      .map((h) => h.id)
      .sort();
  } finally {
    await tree.close({ checkpoint: false });
  }
}

describe('store: a crash between the tree write and the catalog write', () => {
  const tmp = storeFolderPerTest();

  it("kill -9 after a child's tree write: no invisible child stays, and creating the id again succeeds", async function () {
    this.timeout(30_000);
    await killBetweenWrites(tmp.dir, 'create');
    assert.deepEqual(await treeSessions(tmp.dir, 'r'), ['done', 'kid', 'r'], 'the crash left the unlisted child in the tree file');

    let store = await tmp.openStore();
    assert.equal(store.has('kid'), false, 'never acknowledged, so never listed');
    assert.deepEqual(
      store.children('r').map((h) => h.id),
      ['done'],
    );
    assert.deepEqual(await store.readEvents('r'), eventsFor('r', 0, 5)); // opens the tree file
    await store.close();
    assert.deepEqual(await treeSessions(tmp.dir, 'r'), ['done', 'r'], 'opening the tree dropped the stray');

    store = await tmp.openStore();
    await store.createSession(childHeader('kid', 'r'), eventsFor('kid', 0, 2));
    assert.deepEqual(await store.readEvents('kid'), eventsFor('kid', 0, 2));
    await store.close();
    store = await tmp.openStore();
    assert.deepEqual(childIds(store, 'r'), ['done', 'kid']);
    assert.deepEqual(await store.readEvents('kid'), eventsFor('kid', 0, 2));
    assert.deepEqual(await store.readEvents('done'), eventsFor('done', 0, 3));
  });

  it('re-creating at once after reopening (the tree not yet opened) succeeds, without DUPLICATE_SESSION', async function () {
    this.timeout(30_000);
    await killBetweenWrites(tmp.dir, 'create');
    const store = await tmp.openStore();
    await store.createSession(childHeader('kid', 'r'), eventsFor('kid', 0, 1));
    assert.deepEqual(await store.readEvents('kid'), eventsFor('kid', 0, 1), 'the new session, not the stray');
    assert.deepEqual(childIds(store, 'r'), ['done', 'kid']);
  });

  it("kill -9 after a child's catalog delete: it stays deleted, and its id can be created again", async function () {
    this.timeout(30_000);
    await killBetweenWrites(tmp.dir, 'delete');
    assert.deepEqual(await treeSessions(tmp.dir, 'r'), ['done', 'kid', 'r'], 'the crash left the deleted child in the tree file');
    const store = await tmp.openStore();
    assert.equal(store.has('kid'), false);
    await store.createSession(childHeader('kid', 'r'), eventsFor('kid', 0, 2));
    assert.deepEqual(await store.readEvents('kid'), eventsFor('kid', 0, 2));
  });

  it('a catalog write that fails in this process leaves the tree row behind; creating the id again replaces it', async () => {
    const store = await tmp.openStore();
    await store.createSession(rootHeader('r'), eventsFor('r', 0, 2));
    const add = Catalog.prototype.add;
    Catalog.prototype.add = () => Promise.reject(new Error('disk full (injected)'));
    try {
      await assert.rejects(store.createSession(childHeader('kid', 'r'), eventsFor('kid', 0, 3)), /disk full/);
    } finally {
      Catalog.prototype.add = add;
    }
    assert.equal(store.has('kid'), false);
    await store.createSession(childHeader('kid', 'r'), eventsFor('kid', 0, 1));
    assert.deepEqual(await store.readEvents('kid'), eventsFor('kid', 0, 1));
    await store.close();
    const again = await tmp.openStore();
    assert.deepEqual(await again.readEvents('kid'), eventsFor('kid', 0, 1));
  });
});
