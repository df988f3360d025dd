import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { RewindError } from '../../../src/core/checkpoint/plan';
import { withPathLock } from '../../../src/core/tools/path-lock';
import { subagentWorld } from '../subagent/helpers';
import { startOf, write } from './fixture';

// A rewind while an agent writes one of its files (decision 0059, amended in s48): the rewind
// checked every file against its preview, then wrote them; an agent's write_file landing in
// between was overwritten without a word, and the undo would not bring it back. The rewind now
// holds the file tools' locks of its files from its checks to its last write.
describe('rewind: an agent writing one of its files meanwhile is never overwritten unseen', () => {
  const w = subagentWorld();
  const file = (rel: string) => path.join(fs.realpathSync(w.t.workspace), rel);

  it('a write under way when the rewind starts runs first; the rewind then refuses as stale, changing nothing', async () => {
    fs.writeFileSync(file('a.txt'), 'a0\n');
    w.script.on('root', { toolCalls: [write('a.txt', 'a1\n')] }, { text: 'done' });
    await w.root.accept('[[root]] go');
    await w.t.h.settle();
    const plan = await w.t.h.checkpoints.plan({ sessionId: w.root.id, toSeq: await startOf(w.t.h, w.root.id) });
    assert.deepEqual(
      plan.files.map((f) => f.relative),
      ['a.txt'],
    );
    let entered!: () => void;
    const inside = new Promise<void>((r) => (entered = r));
    const agentWrite = withPathLock(fs.realpathSync(file('a.txt')), async () => {
      entered();
      await new Promise((r) => setTimeout(r, 1000));
      fs.writeFileSync(file('a.txt'), 'from the agent\n');
    });
    await inside;
    await assert.rejects(
      () => w.t.h.checkpoints.apply(plan),
      (e: unknown) => e instanceof RewindError && e.code === 'STALE_PLAN' && /a\.txt changed since the preview/.test(e.message),
    );
    await agentWrite;
    assert.equal(fs.readFileSync(file('a.txt'), 'utf8'), 'from the agent\n', "the agent's write stands");
  });
});
