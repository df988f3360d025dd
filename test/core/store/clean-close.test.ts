import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Harness } from '../../../src/core/harness';
import { CLEAN_MARKER, Store } from '../../../src/core/store/store';
import { ModelServer } from '../../support/model-server';

// The clean-close marker: a harness that closed with every turn ended lets the next open skip
// reading every log for open turns; a crash (no marker) makes it read them.
describe('store: the clean-close marker', () => {
  let server: ModelServer;
  let dir: string;
  before(async () => (server = await ModelServer.start()));
  after(() => server.stop());
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-clean-'));
    fs.mkdirSync(path.join(dir, 'ws'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));
  const open = () =>
    Harness.open({
      storeDir: path.join(dir, 'store'),
      workspace: [path.join(dir, 'ws')],
      model: { baseURL: server.baseURL, name: 'm', apiKey: 'k', maxRetries: 0 },
      sandbox: 'workspace-write',
      approval: 'never',
    });
  const marker = () => fs.existsSync(path.join(dir, 'store', CLEAN_MARKER));

  it('is gone while a harness runs and back after a clean close; a store-only open leaves it as it was', async () => {
    const h = await open();
    assert.equal(marker(), false, 'a new store has none, and a running harness removes it');
    const a = await h.createSession();
    await a.accept('hello');
    await a.idle();
    await h.close();
    assert.equal(marker(), true);
    const s = await Store.open(path.join(dir, 'store'));
    assert.equal(s.closedCleanly, true);
    await s.close();
    assert.equal(marker(), true, 'reading the store does not change it');
    const h2 = await open();
    assert.deepEqual(h2.recovered, []);
    assert.equal(marker(), false);
    await h2.close();
  });

  it('after a crash (no marker) the open reads the logs and closes the open turn', async () => {
    const h = await open();
    const a = await h.createSession();
    await a.accept('hello');
    await a.idle();
    await h.close();
    // A turn left open by a process that died: written behind the harness's back, marker removed.
    const s = await Store.open(path.join(dir, 'store'));
    await s.append(a.id, [{ seq: a.session.length, type: 'turn/start', at: new Date().toISOString(), turnId: 'lost' }]);
    await s.markRunning();
    await s.close();
    const h2 = await open();
    assert.deepEqual(h2.recovered, [a.id]);
    const events = (await h2.store.inspect(a.id)).events;
    assert.equal(events[events.length - 1].type, 'turn/end');
    await h2.close();
  });
});
