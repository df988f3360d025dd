import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { SessionWriter } from '../../../src/core/agent/session-writer';
import { recoverInterrupted } from '../../../src/core/recovery';
import { openPrivateTmp, privateTmpDir, privateTmpRoot } from '../../../src/core/remote/private-tmp';
import { harnessPerTest } from '../../support/harness';

// A confined remote child's own temp folder (decision 0122, amended s60): made empty and 0700 in the
// store when its program starts, the same folder for the same child, removed at its end — and, when a
// crash cut its turn, by recovery. The real programs' use of it: test/remote/codex-own-config, acp-settings-widen.
describe('remote: a confined child’s private temp folder', () => {
  const w = harnessPerTest();

  it('is made empty and 0700 (a leftover and a planted link go), named the same for the same child, removed at the end', async () => {
    const store = w.t.h.store.dir;
    const dir = privateTmpDir(store, 'root.abc123');
    assert.equal(dir, privateTmpDir(store, 'root.abc123'));
    assert.notEqual(dir, privateTmpDir(store, 'root.abc124'));
    assert.ok(Buffer.byteLength(dir) - Buffer.byteLength(store) < 40, 'short whatever the depth of the id');
    // A crash's leftover: a file in it, and a link in its place pointing elsewhere.
    const elsewhere = fs.mkdtempSync(path.join(w.t.workspace, 'elsewhere-'));
    fs.writeFileSync(path.join(elsewhere, 'keep'), 'k');
    fs.mkdirSync(privateTmpRoot(store), { recursive: true });
    fs.symlinkSync(elsewhere, dir);
    const tmp = await openPrivateTmp(store, 'root.abc123');
    assert.equal(tmp.dir, dir);
    assert.deepEqual(tmp.env, { TMPDIR: dir, TMP: dir, TEMP: dir });
    const st = fs.lstatSync(dir);
    assert.ok(st.isDirectory() && !st.isSymbolicLink());
    assert.equal(st.mode & 0o777, 0o700);
    assert.deepEqual(fs.readdirSync(dir), []);
    assert.equal(fs.readFileSync(path.join(elsewhere, 'keep'), 'utf8'), 'k', 'the link was removed, not what it pointed at');
    fs.writeFileSync(path.join(dir, 'left'), 'x');
    await tmp.remove();
    assert.equal(fs.existsSync(dir), false);
  });

  it('REMOTE_TMP when it cannot be made: what happened and what to do', async () => {
    const file = path.join(w.t.workspace, 'not-a-folder');
    fs.writeFileSync(file, '');
    await assert.rejects(openPrivateTmp(file, 'c'), /^Error: REMOTE_TMP: .*could not make .*not started\. Make the session store's folder writable/);
  });

  it('recovery removes the folder of a child whose turn a crash cut', async () => {
    const agent = await w.t.h.createSession();
    const writer = new SessionWriter(await w.t.h.store.inspect(agent.id), w.t.h.store);
    await writer.append({ type: 'turn/start', turnId: 't1' });
    await agent.dispose();
    const tmp = await openPrivateTmp(w.t.h.store.dir, agent.id);
    fs.writeFileSync(path.join(tmp.dir, 'planted'), 'x');
    const closed = await recoverInterrupted(w.t.h.store);
    assert.ok(closed.includes(agent.id));
    assert.equal(fs.existsSync(tmp.dir), false);
  });
});
