// An apply of a folder the child made a file (or the reverse) cut by kill -9 part way (decision
// 0060, amended in s57): a separate process applies it and is killed after one entry's removal,
// or after the emptied folder's, before the file is written and before the child's `applied`
// record. The apply and its replay at the next open write in one order (removals first), so what
// the kill left is a prefix the next open completes — unless the user put something in the
// half-emptied folder since, which it never deletes: it leaves the worktree open and says so.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { makeHarness } from '../../support/harness';
import { Script } from '../subagent/helpers';
import { crashApplyHost, crashWorldPerTest, gitIn, makeRepo, read } from './fixture';

const run = (command: string) => ({ toolCalls: [{ name: 'run_command', arguments: { command } }] });

describe('worktree apply of a replaced folder after a crash (kill -9 part way)', () => {
  const world = crashWorldPerTest('arbor-apply-crash-folders-');

  /** A workspace with `dir/x.txt` and `dir/sub/y.txt` committed, a worktree child that ran `command`, then a host applying it killed at `victim`. */
  async function crashed(command: string, victim: string): Promise<{ ws: string; storeDir: string; childId: string }> {
    const ws = makeRepo(world.base);
    fs.mkdirSync(path.join(ws, 'dir', 'sub'), { recursive: true });
    fs.writeFileSync(path.join(ws, 'dir', 'x.txt'), 'x\n');
    fs.writeFileSync(path.join(ws, 'dir', 'sub', 'y.txt'), 'y\n');
    gitIn(ws, 'add', '-A');
    gitIn(ws, 'commit', '-qm', 'dir');
    const storeDir = path.join(ws, '.arbor', 'store');
    const script = new Script(world.server);
    script.on('c', run(command), { text: 'done' });
    const first = await makeHarness(world.server, { workspace: [ws], storeDir });
    const root = await first.h.createSession({ title: 'work' });
    const child = await first.h.subagents.start(root, 'spawn', { prompt: '[[c]] work', label: 'work', isolation: 'worktree' });
    await child.result;
    await child.dispose();
    await first.h.close();
    const r = await crashApplyHost(world, storeDir, ws, child.id, victim);
    assert.equal(r.signal, 'SIGKILL', `the host was killed in the apply: ${r.out}`);
    return { ws, storeDir, childId: child.id };
  }

  const folderToFile = 'rm -r dir && echo now a file > dir';

  it('killed after the first entry’s removal: the next open removes the rest, the folder, writes the file and records it', async () => {
    const { ws, storeDir, childId } = await crashed(folderToFile, 'rm:y.txt');
    assert.equal(fs.existsSync(path.join(ws, 'dir', 'sub', 'y.txt')), false, 'dir/sub/y.txt (first in git’s order) was removed before the kill');
    assert.equal(read(path.join(ws, 'dir', 'x.txt')), 'x\n', 'dir/x.txt was not');
    const t = await makeHarness(world.server, { workspace: [ws], storeDir });
    try {
      assert.deepEqual(t.h.recoveredWork.applies, [{ childId, finished: true, written: 2, planned: 3 }]);
      assert.equal(read(path.join(ws, 'dir')), 'now a file\n');
      assert.equal((await t.h.worktrees.list())[0].state, 'applied');
      assert.deepEqual(fs.readdirSync(path.join(storeDir, 'applies')), [], 'the intent is gone');
    } finally {
      await t.h.close();
    }
  });

  it('killed after the emptied folder’s removal, before the file: the next open writes the file', async () => {
    const { ws, storeDir, childId } = await crashed(folderToFile, 'rmdir:dir');
    assert.equal(fs.existsSync(path.join(ws, 'dir')), false, 'the folder was removed, the file not yet written');
    const t = await makeHarness(world.server, { workspace: [ws], storeDir });
    try {
      assert.deepEqual(t.h.recoveredWork.applies, [{ childId, finished: true, written: 1, planned: 3 }]);
      assert.equal(read(path.join(ws, 'dir')), 'now a file\n');
      assert.equal((await t.h.worktrees.list())[0].state, 'applied');
    } finally {
      await t.h.close();
    }
  });

  it('a file made a folder, killed after the file’s removal: the next open writes the folder’s entries', async () => {
    const { ws, storeDir, childId } = await crashed('rm keep.txt && mkdir -p keep.txt/b && echo in > keep.txt/b/in.txt', 'rm:keep.txt');
    assert.equal(fs.existsSync(path.join(ws, 'keep.txt')), false);
    const t = await makeHarness(world.server, { workspace: [ws], storeDir });
    try {
      assert.deepEqual(t.h.recoveredWork.applies, [{ childId, finished: true, written: 1, planned: 2 }]);
      assert.equal(read(path.join(ws, 'keep.txt', 'b', 'in.txt')), 'in\n');
    } finally {
      await t.h.close();
    }
  });

  it('a file the user put in the half-emptied folder after the crash is never deleted: the worktree stays open, applying again names it', async () => {
    const { ws, storeDir, childId } = await crashed(folderToFile, 'rm:y.txt');
    fs.writeFileSync(path.join(ws, 'dir', 'mine.txt'), 'the user’s\n');
    const t = await makeHarness(world.server, { workspace: [ws], storeDir });
    try {
      assert.deepEqual(t.h.recoveredWork.applies, [{ childId, finished: false, changed: ['dir'], planned: 3 }]);
      assert.equal(read(path.join(ws, 'dir', 'mine.txt')), 'the user’s\n');
      assert.equal(read(path.join(ws, 'dir', 'x.txt')), 'x\n', 'nothing more removed');
      assert.equal((await t.h.worktrees.list())[0].state, 'open');
      const again = await t.h.worktrees.apply(childId);
      assert.equal(again.applied, false);
      assert.match(JSON.stringify(again), /dir\/mine\.txt/);
      assert.equal(read(path.join(ws, 'dir', 'mine.txt')), 'the user’s\n');
    } finally {
      await t.h.close();
    }
  });
});
