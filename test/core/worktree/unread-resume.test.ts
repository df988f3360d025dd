// A child whose own worktree was never read (decision 0093: a placed child's local worktree is
// made without its files, and its collected changes move its branch alone) resumed as a local
// agent: its provider is no longer configured (a placement removed from the settings), so the
// cold resume builds Arbor's own agent rooted in that worktree. Its tools must find the files
// of its branch there, and what it writes must survive the first review (`filled` writes HEAD's
// files into a marked worktree without an index: `read-tree -u --reset`).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { markUnfilled } from '../../../src/core/worktree/filling';
import { gitDirNamedBy } from '../../../src/core/worktree/repo-lock';
import { makeHarness } from '../../support/harness';
import { ofType } from '../subagent/helpers';
import { gitIn, placeOf, read, worktreeWorld } from './fixture';

const call = (name: string, args: Record<string, unknown>) => ({ toolCalls: [{ name, arguments: args }] });

describe('a worktree child resumed here while its worktree was never read', () => {
  const w = worktreeWorld();

  it("reads its branch's files and keeps what it writes through the first review", async () => {
    w.script.on('c', call('write_file', { path: 'first.txt', content: '1\n' }), { text: 'first done' });
    const { childId } = await w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: '[[c]] start', isolation: 'worktree' });
    await w.t.h.settle();
    const place = await placeOf(w, childId);
    await w.t.h.close();
    // The state a placed child's worktree is in once its changes came back (decision 0093): its
    // branch at the child's commit, marked, no index, no file but `.git`.
    gitIn(place.path, 'add', '-A');
    gitIn(place.path, 'commit', '-qm', 'the child collected');
    for (const f of fs.readdirSync(place.path)) if (f !== '.git') fs.rmSync(path.join(place.path, f), { recursive: true, force: true });
    fs.rmSync(path.join(gitDirNamedBy(path.join(place.path, '.git'))!, 'index'));
    markUnfilled(place.path);

    const t2 = await makeHarness(w.server, { workspace: [w.ws], storeDir: w.t.storeDir, releaseDelayMs: 5 });
    try {
      w.script.on('c', call('read_file', { path: 'first.txt' }), call('write_file', { path: 'a.txt', content: 'CHILD\n' }), { text: 'second done' });
      assert.ok(await t2.h.send(childId, '[[c]] more'));
      await t2.h.settle();
      const res = ofType(await t2.h.store.readEvents(childId), 'tool/result').slice(1);
      assert.deepEqual(
        res.map((x) => x.isError),
        [false, false],
        res.map((x) => x.content).join(' | '),
      );
      assert.match(res[0].content, /1/, "its branch's file was there to read");
      // The first review: the child's write survives it.
      const { files } = await t2.h.worktrees.diff(childId);
      assert.equal(read(path.join(place.root, 'a.txt')), 'CHILD\n', "the review wrote nothing over the child's work");
      assert.deepEqual(
        files.map((f) => [f.path, f.after]),
        [
          ['a.txt', 'CHILD\n'],
          ['first.txt', '1\n'],
        ],
      );
    } finally {
      await t2.h.close();
    }
  });
});
