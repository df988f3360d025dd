import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { RewindError } from '../../../src/core/checkpoint/plan';
import { subagentWorld } from '../subagent/helpers';
import { diskMode, fillDisk, makeSmallDisk } from '../tools/full-disk';
import { checkpointsOf, startOf, write } from './fixture';

// A rewind whose writes fail part way (decision 0059, amended in s43): each folder's files are
// one batch, so a folder is written whole or not at all, but two folders fail apart. What was
// written is recorded, so it can be undone, and the error says so; nothing is left half-written.
describe(`rewind: a failure part way is recorded, said, and undoable (${diskMode.why})`, () => {
  const w = subagentWorld();
  const ws = () => fs.realpathSync(w.t.workspace);
  const file = (rel: string) => path.join(ws(), rel);
  const read = (rel: string) => fs.readFileSync(file(rel), 'utf8');

  it('one folder on a full disk: the other folder is restored and recorded, this one left whole, and the record undoes', async function () {
    if (diskMode.mode !== 'tmpfs') this.skip(); // the batch writes through node:fs itself: only a real small disk fills
    fs.mkdirSync(file('full'));
    // Unmounted by the test itself: the world's own cleanup (an earlier afterEach) removes the workspace.
    const undoDisk = makeSmallDisk(file('full'));
    try {
      await partWay();
    } finally {
      undoDisk();
    }
  });

  async function partWay(): Promise<void> {
    fs.writeFileSync(file('a.txt'), 'a0\n');
    fs.writeFileSync(file('full/b.txt'), 'b0\n');
    w.script.on('root', { toolCalls: [write('a.txt', 'a1\n'), write('full/b.txt', 'b1\n')] }, { text: 'done' });
    await w.root.accept('[[root]] go');
    await w.t.h.settle();
    assert.equal(read('a.txt'), 'a1\n');
    assert.equal(read('full/b.txt'), 'b1\n');

    const plan = await w.t.h.checkpoints.plan({ sessionId: w.root.id, toSeq: await startOf(w.t.h, w.root.id) });
    assert.deepEqual(plan.files.map((f) => f.relative).sort(), ['a.txt', 'full/b.txt']);
    // The small disk fills up now: b.txt's temp file cannot get a page.
    fillDisk(file('full'));

    const before = checkpointsOf(w.root.session.events).length;
    await assert.rejects(
      () => w.t.h.checkpoints.apply(plan),
      (e: unknown) =>
        e instanceof RewindError &&
        e.code === 'PARTIAL' &&
        /1 of 2 file\(s\) were restored and recorded \(event \d+: undo it from there\), the rest left as they were, because .*ENOSPC/.test(e.message),
    );
    assert.equal(read('a.txt'), 'a0\n', 'the folder that could be written was');
    assert.equal(read('full/b.txt'), 'b1\n', 'the full folder was left whole');
    assert.deepEqual(fs.readdirSync(file('full')).sort(), ['b.txt', 'filler.bin'], 'no temp file left');
    const records = checkpointsOf(w.root.session.events);
    assert.equal(records.length, before + 1, 'the part written is recorded');
    const rec = records.at(-1)!;
    assert.deepEqual(
      rec.changes.map((c) => path.basename(c.path)),
      ['a.txt'],
    );

    fs.rmSync(file('full/filler.bin'));
    // Previewed again, as the error says, the rewind finishes what is left, with no question.
    const rest = await w.t.h.checkpoints.plan({ sessionId: w.root.id, toSeq: plan.toSeq as number });
    assert.deepEqual(
      rest.files.map((f) => [f.relative, f.conflict?.reason]),
      [['full/b.txt', undefined]],
    );
    await w.t.h.checkpoints.apply(rest);
    assert.equal(read('full/b.txt'), 'b0\n', 'the rest restored');
    const out = await w.t.h.checkpoints.apply(await w.t.h.checkpoints.planUndo(w.root.id, rec.seq));
    assert.deepEqual(
      out.restored.map((p) => path.basename(p)),
      ['a.txt'],
    );
    assert.equal(read('a.txt'), 'a1\n', 'the partial rewind undone');
  }

  it('a failure before anything is written throws as it is, and records nothing', async () => {
    fs.writeFileSync(file('a.txt'), 'a0\n');
    w.script.on('root', { toolCalls: [write('a.txt', 'a1\n')] }, { text: 'done' });
    await w.root.accept('[[root]] go');
    await w.t.h.settle();
    const plan = await w.t.h.checkpoints.plan({ sessionId: w.root.id, toSeq: await startOf(w.t.h, w.root.id) });
    const before = checkpointsOf(w.root.session.events).length;
    fs.writeFileSync(file('a.txt'), 'edited by hand\n');
    await assert.rejects(
      () => w.t.h.checkpoints.apply(plan),
      (e: unknown) => e instanceof RewindError && e.code === 'STALE_PLAN',
    );
    assert.equal(read('a.txt'), 'edited by hand\n');
    assert.equal(checkpointsOf(w.root.session.events).length, before);
  });
});
