import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { SessionEvent } from '../../../src/core/session/events';
import { harnessPerTest, makeHarness } from '../../support/harness';

// Issue 10.7: the store may be kept inside the workspace under any name (--store ./history):
// it holds every conversation's log and policy, so the agent may not write it unasked.
describe('agent: a session store kept inside the workspace (issue 10.7)', () => {
  const w = harnessPerTest();

  it('is protected under any name: writes into it are refused, nothing lands there, other writes go through', async () => {
    // The default harness's folder holds this test's workspace, with the store inside it.
    const workspace = path.join(w.t.dir, 'project');
    const inside = path.join(workspace, 'history');
    fs.mkdirSync(workspace);
    const own = await makeHarness(w.server, { storeDir: inside, workspace: [workspace] });
    let events: readonly SessionEvent[];
    try {
      fs.writeFileSync(path.join(workspace, 'notes.txt'), 'hello\n');
      w.server.enqueue(
        {
          toolCalls: [
            { id: 'w', name: 'write_file', arguments: { path: 'history/catalog.db', content: 'gone' } },
            { id: 'n', name: 'write_file', arguments: { path: 'history/trees/new.db', content: 'x' } },
            { id: 'ok', name: 'write_file', arguments: { path: 'notes.txt', content: 'fine\n' } },
          ],
        },
        { text: 'done' },
      );
      const agent = await own.h.createSession();
      await agent.accept('rewrite the history');
      await agent.idle();
      events = agent.session.events;
    } finally {
      await own.cleanup();
    }
    const results = events.filter((e) => e.type === 'tool/result');
    const byId = new Map(results.map((e) => [e.type === 'tool/result' ? e.callId : '', e]));
    for (const id of ['w', 'n']) {
      const r = byId.get(id);
      assert.ok(r?.type === 'tool/result' && r.isError && /Arbor's session store/.test(r.content), JSON.stringify(r));
    }
    assert.equal(fs.existsSync(path.join(inside, 'trees', 'new.db')), false);
    const catalog = path.join(inside, 'catalog.db');
    assert.ok(!fs.existsSync(catalog) || fs.readFileSync(catalog, 'utf8') !== 'gone', 'the catalog was not overwritten');
    assert.equal(fs.readFileSync(path.join(workspace, 'notes.txt'), 'utf8'), 'fine\n');
  });
});
