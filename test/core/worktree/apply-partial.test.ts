// An apply whose writes fail part way (decision 0060, amended in s48): one folder of the
// workspace on a full disk. The files written before the failure are named in the error, which
// says to apply again; no temp file of the apply is left in the user's folder; the worktree stays
// open, and a second apply once there is room finishes the rest.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { WorktreeError } from '../../../src/core/worktree/git';
import { diskMode, fillDisk, makeSmallDisk } from '../tools/full-disk';
import { read, worktreeWorld } from './fixture';

const write = (p: string, content: string) => ({ toolCalls: [{ name: 'write_file', arguments: { path: p, content } }] });

describe(`worktree apply: a failure part way is said, leaves no temp file, and can be finished (${diskMode.why})`, () => {
  const w = worktreeWorld();

  it('a full folder: the files written are named, the folder holds nothing of the apply, apply again finishes', async function () {
    if (diskMode.mode !== 'tmpfs') this.skip(); // the apply writes through node:fs itself: only a real small disk fills
    w.script.on('c', write('a.txt', 'one\ntwo\nCHILD\n'), write('full/b.txt', 'b from the child\n'), { text: 'edited' });
    const run = await w.t.h.subagents.start(w.root, 'spawn', { prompt: '[[c]] edit', label: 'edit', isolation: 'worktree' });
    await run.result;
    await run.dispose();

    const full = path.join(w.ws, 'full');
    fs.mkdirSync(full);
    const undoDisk = makeSmallDisk(full);
    try {
      fillDisk(full);
      await assert.rejects(
        () => w.t.h.worktrees.apply(run.id),
        (e: unknown) => e instanceof WorktreeError && e.code === 'PARTIAL' && /1 of 2 file\(s\) were written \(a\.txt\).*ENOSPC.*apply again/s.test(e.message),
      );
      assert.equal(read(path.join(w.ws, 'a.txt')), 'one\ntwo\nCHILD\n', 'the file before the full folder was written');
      assert.deepEqual(fs.readdirSync(full), ['filler.bin'], 'no temp file of the apply left in the user folder');
      assert.equal((await w.t.h.worktrees.list())[0].state, 'open', 'not shown applied');

      fs.rmSync(path.join(full, 'filler.bin'));
      const r = await w.t.h.worktrees.apply(run.id);
      assert.deepEqual(r, { applied: true, files: ['full/b.txt'] });
      assert.equal(read(path.join(full, 'b.txt')), 'b from the child\n');
      assert.equal(read(path.join(w.ws, 'a.txt')), 'one\ntwo\nCHILD\n');
    } finally {
      undoDisk();
    }
  });
});
