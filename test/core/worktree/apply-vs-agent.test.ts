// An apply while an agent of the parent writes one of its files (decision 0060, amended in s48):
// the apply checked every target, then wrote them; a write_file landing in between was overwritten
// without a word (or overwrote the apply's file, which the apply reported written). The apply now
// holds the file tools' locks of its targets from the check to its last write: the agent's write
// runs wholly before it (the check sees it: a conflict, nothing overwritten) or after it.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { withPathLock } from '../../../src/core/tools/path-lock';
import { read, worktreeWorld } from './fixture';

const write = (p: string, content: string) => ({ toolCalls: [{ name: 'write_file', arguments: { path: p, content } }] });

describe('worktree apply: an agent writing a target meanwhile is never overwritten unseen', () => {
  const w = worktreeWorld();

  it('a write under way when the apply starts runs first, and the apply then reports the file as a conflict', async () => {
    w.script.on('c', write('a.txt', 'from the child\n'), { text: 'edited' });
    const run = await w.t.h.subagents.start(w.root, 'spawn', { prompt: '[[c]] edit', label: 'edit', isolation: 'worktree' });
    await run.result;
    await run.dispose();

    const target = fs.realpathSync(path.join(w.ws, 'a.txt'));
    // What write_file does: the file's lock, then its write — here a slow one, already under way.
    let entered!: () => void;
    const inside = new Promise<void>((r) => (entered = r));
    const agentWrite = withPathLock(target, async () => {
      entered();
      await new Promise((r) => setTimeout(r, 1500));
      fs.writeFileSync(target, 'from the parent agent\n');
    });
    await inside;
    const r = await w.t.h.worktrees.apply(run.id);
    await agentWrite;
    assert.equal(r.applied, false, `the apply wrote over a file the agent was writing: ${JSON.stringify(r)}`);
    assert.match(JSON.stringify(r), /a\.txt changed in the workspace since the snapshot/);
    assert.equal(read(target), 'from the parent agent\n', "the agent's write stands");
    assert.equal((await w.t.h.worktrees.list())[0].state, 'open');
  });
});
