// A rewind cut by kill -9 part way (decision 0059, amended in s48): a separate process restores
// one of two files of a folder and is killed before the second and before the rewind's record.
// The next open records what was written (so the rewind can be undone and what it overwrote is
// not lost), says so, and leaves none of the rewind's temp files in the user's folder.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { makeHarness } from '../../support/harness';
import { ModelServer } from '../../support/model-server';
import { Script } from '../subagent/helpers';
import { checkpointsOf, startOf, write } from './fixture';

describe('rewind after a crash (kill -9 between its files and its record)', () => {
  let server: ModelServer;
  let base: string;
  before(async () => (server = await ModelServer.start()));
  after(() => server.stop());
  beforeEach(() => (base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-rewind-crash-')))));
  afterEach(() => fs.rmSync(base, { recursive: true, force: true }));

  function crashHost(
    storeDir: string,
    ws: string,
    sessionId: string,
    toSeq: number,
    victim: string,
  ): Promise<{ code: number | null; signal: string | null; out: string }> {
    const host = spawn(
      process.execPath,
      [path.join(__dirname, '..', '..', 'support', 'crash-rewind-host.js'), storeDir, ws, server.baseURL, sessionId, String(toSeq), victim],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    host.stdout.on('data', (b: Buffer) => (out += b.toString()));
    return new Promise((resolve) => host.once('exit', (code, signal) => resolve({ code, signal, out })));
  }

  /** A root that wrote a.txt and b.txt (a0 → a1, b0 → b1), its harness closed: the store, the workspace, the session and the seq before. */
  async function worked(): Promise<{ ws: string; storeDir: string; rootId: string; toSeq: number }> {
    const ws = path.join(base, 'ws');
    fs.mkdirSync(ws);
    const storeDir = path.join(base, 'store');
    const file = (rel: string) => path.join(ws, rel);
    fs.writeFileSync(file('a.txt'), 'a0\n');
    fs.writeFileSync(file('b.txt'), 'b0\n');
    const script = new Script(server);
    script.on('root', { toolCalls: [write('a.txt', 'a1\n'), write('b.txt', 'b1\n')] }, { text: 'done' });
    const first = await makeHarness(server, { workspace: [ws], storeDir });
    const root = await first.h.createSession({ title: 'work' });
    await root.accept('[[root]] go');
    await first.h.settle();
    const toSeq = await startOf(first.h, root.id);
    const rootId = root.id;
    await first.h.close();
    assert.equal(fs.readFileSync(file('a.txt'), 'utf8'), 'a1\n');
    return { ws, storeDir, rootId, toSeq };
  }

  it('the next open records the files written as the rewind, which then undoes; no temp file is left', async () => {
    const { ws, storeDir, rootId, toSeq } = await worked();
    const file = (rel: string) => path.join(ws, rel);
    fs.chmodSync(file('a.txt'), 0o755); // what the rewind overwrites is executable: its recovered record says so

    const r = await crashHost(storeDir, ws, rootId, toSeq, 'a.txt');
    assert.equal(r.signal, 'SIGKILL', `the host was killed in the rewind: ${r.out}`);
    assert.match(r.out, /planned 2/);
    assert.equal(fs.readFileSync(file('a.txt'), 'utf8'), 'a0\n', 'a.txt was restored before the kill');
    assert.equal(fs.readFileSync(file('b.txt'), 'utf8'), 'b1\n', 'b.txt was not');

    const t = await makeHarness(server, { workspace: [ws], storeDir });
    try {
      assert.deepEqual(fs.readdirSync(ws).sort(), ['a.txt', 'b.txt'], 'no temp file of the cut rewind left in the user folder');
      const records = checkpointsOf((await t.h.readSession(rootId)).events).filter((e) => e.rewind);
      assert.equal(records.length, 1, 'the cut rewind is recorded');
      assert.deepEqual(
        records[0].changes.map((c) => [path.basename(c.path), c.beforeExecutable]),
        [['a.txt', true]],
      );
      assert.deepEqual(t.h.recoveredWork.rewinds, [{ sessionId: rootId, seq: records[0].seq, restored: 1, planned: 2 }]);
      assert.equal(await t.h.checkpoints.lastRewind(rootId), records[0].seq, '"Undo rewind" offers it');
      const out = await t.h.checkpoints.apply(await t.h.checkpoints.planUndo(rootId, records[0].seq));
      assert.deepEqual(
        out.restored.map((p) => path.basename(p)),
        ['a.txt'],
      );
      assert.equal(fs.readFileSync(file('a.txt'), 'utf8'), 'a1\n', 'what the rewind overwrote is back');
    } finally {
      await t.h.close();
    }
  });

  it('a folder put where a file of the cut rewind was: the next open still opens, and records what was written', async () => {
    const { ws, storeDir, rootId, toSeq } = await worked();
    const r = await crashHost(storeDir, ws, rootId, toSeq, 'a.txt');
    assert.equal(r.signal, 'SIGKILL', `the host was killed in the rewind: ${r.out}`);
    // Before the restart, the user puts a folder where b.txt (not written by the cut rewind) was.
    fs.rmSync(path.join(ws, 'b.txt'));
    fs.mkdirSync(path.join(ws, 'b.txt'));
    fs.writeFileSync(path.join(ws, 'b.txt', 'mine.txt'), 'the user’s\n');
    const t = await makeHarness(server, { workspace: [ws], storeDir });
    try {
      const records = checkpointsOf((await t.h.readSession(rootId)).events).filter((e) => e.rewind);
      assert.deepEqual(
        records.map((e) => e.changes.map((c) => path.basename(c.path))),
        [['a.txt']],
        'what the cut rewind wrote is recorded; the folder is not read through',
      );
      assert.equal(fs.readFileSync(path.join(ws, 'b.txt', 'mine.txt'), 'utf8'), 'the user’s\n');
      assert.deepEqual(fs.readdirSync(path.join(storeDir, 'checkpoints', 'rewinds')), [], 'the intent is gone');
    } finally {
      await t.h.close();
    }
  });

  it('a crash after the record, before the intent is removed: the next open records nothing twice', async () => {
    const { ws, storeDir, rootId, toSeq } = await worked();
    const r = await crashHost(storeDir, ws, rootId, toSeq, 'record');
    assert.equal(r.signal, 'SIGKILL', `the host was killed in the rewind: ${r.out}`);
    assert.equal(fs.readFileSync(path.join(ws, 'b.txt'), 'utf8'), 'b0\n', 'the whole rewind was written');
    const t = await makeHarness(server, { workspace: [ws], storeDir });
    try {
      const records = checkpointsOf((await t.h.readSession(rootId)).events).filter((e) => e.rewind);
      assert.equal(records.length, 1, 'one record, not two');
      assert.equal(records[0].changes.length, 2);
      assert.deepEqual(t.h.recoveredWork.rewinds, []);
      assert.deepEqual(fs.readdirSync(path.join(storeDir, 'checkpoints', 'rewinds')), [], 'the intent is gone');
    } finally {
      await t.h.close();
    }
  });
});
