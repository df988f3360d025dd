// An apply cut by kill -9 part way (decision 0060, amended in s49): a separate process applies a
// worktree child's two files and is killed after the first, before the second and before the
// child's `applied` record. The workspace held half the child's work while the tree showed the
// worktree open; a Discard then left that half in the user's files, unsaid. The next open finishes
// the apply and records it — unless a file was changed since, which it leaves alone and says.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { recoveryNotes } from '../../../src/core/recovered-work';
import { arbor } from '../../support/cli';
import { makeHarness } from '../../support/harness';
import { Script } from '../subagent/helpers';
import { crashApplyHost, crashWorldPerTest, makeRepo, read } from './fixture';

const write = (p: string, content: string) => ({ name: 'write_file', arguments: { path: p, content } });

describe('worktree apply after a crash (kill -9 between its files and its record)', () => {
  const world = crashWorldPerTest('arbor-apply-crash-');

  /** A worktree child that changed a.txt and made b.txt, its harness closed: the workspace, the store and the child. */
  async function worked(): Promise<{ ws: string; storeDir: string; childId: string }> {
    const ws = makeRepo(world.base);
    const storeDir = path.join(ws, '.arbor', 'store');
    const script = new Script(world.server);
    script.on('c', { toolCalls: [write('a.txt', 'one\ntwo\nCHILD\n'), write('b.txt', 'b from the child\n')] }, { text: 'edited' });
    const first = await makeHarness(world.server, { workspace: [ws], storeDir });
    const root = await first.h.createSession({ title: 'work' });
    const run = await first.h.subagents.start(root, 'spawn', { prompt: '[[c]] edit', label: 'edit', isolation: 'worktree' });
    await run.result;
    await run.dispose();
    await first.h.close();
    return { ws, storeDir, childId: run.id };
  }

  /** `worked()`, then a host applying its child killed at `step`: the workspace, the store and the child. */
  async function crashedApply(step: string): Promise<{ ws: string; storeDir: string; childId: string }> {
    const { ws, storeDir, childId } = await worked();
    const r = await crashApplyHost(world, storeDir, ws, childId, step);
    assert.equal(r.signal, 'SIGKILL', `the host was killed in the apply: ${r.out}`);
    return { ws, storeDir, childId };
  }

  const leftovers = (ws: string) => fs.readdirSync(ws).filter((n) => n.endsWith('.arbor-tmp'));

  it('the next open writes the rest and records the child applied; no temp file is left', async () => {
    const { ws, storeDir, childId } = await crashedApply('a.txt');
    assert.equal(read(path.join(ws, 'a.txt')), 'one\ntwo\nCHILD\n', 'a.txt was written before the kill');
    assert.equal(fs.existsSync(path.join(ws, 'b.txt')), false, 'b.txt was not');

    const t = await makeHarness(world.server, { workspace: [ws], storeDir });
    try {
      assert.deepEqual(t.h.recoveredWork.applies, [{ childId, finished: true, written: 1, planned: 2 }]);
      assert.equal(read(path.join(ws, 'b.txt')), 'b from the child\n', 'the rest of the apply was written');
      assert.equal(read(path.join(ws, 'a.txt')), 'one\ntwo\nCHILD\n');
      const [listing] = await t.h.worktrees.list();
      assert.equal(listing.state, 'applied', 'the tree says what the workspace holds');
      assert.equal(listing.folderExists, false, 'the worktree is removed, as after an apply in process');
      assert.deepEqual(leftovers(ws), [], 'no temp file of the cut apply left in the user folder');
      assert.deepEqual(fs.readdirSync(path.join(storeDir, 'applies')), [], 'the intent is gone');
    } finally {
      await t.h.close();
    }
  });

  it('a file the user changed after the crash is left alone: the worktree stays open, and applying again names it', async () => {
    const { ws, storeDir, childId } = await crashedApply('a.txt');
    fs.writeFileSync(path.join(ws, 'b.txt'), 'the user wrote this\n');

    const t = await makeHarness(world.server, { workspace: [ws], storeDir });
    try {
      assert.deepEqual(t.h.recoveredWork.applies, [{ childId, finished: false, changed: ['b.txt'], planned: 2 }]);
      assert.match(
        recoveryNotes({ rewinds: [], applies: t.h.recoveredWork.applies, calls: [] }).join('\n'),
        /since then b\.txt changed in the workspace: it is left as it is and the worktree stays open.*apply again/,
      );
      assert.equal(read(path.join(ws, 'b.txt')), 'the user wrote this\n', "the user's file stands");
      assert.equal((await t.h.worktrees.list())[0].state, 'open');
      const again = await t.h.worktrees.apply(childId);
      assert.equal(again.applied, false);
      assert.match(JSON.stringify(again), /b\.txt/);
    } finally {
      await t.h.close();
    }
  });

  it('the CLI that opens the store next says so once: `arbor worktree list` finishes it, says it on stderr, and lists it applied', async () => {
    const { ws, storeDir, childId } = await crashedApply('a.txt');
    const cli = () => arbor(['worktree', 'list', '--json', '--workspace', ws, '--store', storeDir]);
    const first = await cli();
    assert.equal(first.code, 0, first.stderr);
    assert.match(
      first.stderr,
      new RegExp(
        `Applying the worktree of ${childId.replace(/\./g, '\\.')} was cut by a crash; it is finished now \\(1 of its 2 file\\(s\\) written at this start\\)`,
      ),
    );
    assert.match(first.stdout, /"state":\s*"applied"/);
    assert.equal(read(path.join(ws, 'b.txt')), 'b from the child\n');
    const second = await cli();
    assert.doesNotMatch(second.stderr, /cut by a crash/, 'said once, not at every start');
  });

  it('a crash after the record, before the intent is removed: the next open records nothing twice', async () => {
    const { ws, storeDir, childId } = await crashedApply('record');
    const t = await makeHarness(world.server, { workspace: [ws], storeDir });
    try {
      assert.deepEqual(t.h.recoveredWork.applies, []);
      const events = (await t.h.readSession(childId)).events.filter((e) => e.type === 'worktree' && e.state === 'applied');
      assert.equal(events.length, 1, 'one applied record, not two');
      assert.equal(read(path.join(ws, 'b.txt')), 'b from the child\n');
      assert.deepEqual(fs.readdirSync(path.join(storeDir, 'applies')), [], 'the intent is gone');
    } finally {
      await t.h.close();
    }
  });
});
