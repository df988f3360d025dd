// `arbor worktree …` in a real process (decision 0060): list shows the worktree child, apply
// exits 1 on a conflict and changes nothing, then applies once the conflict is gone; errors
// say what to do.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { read, worktreeWorld } from '../core/worktree/fixture';
import { arbor } from '../support/cli';

describe('arbor worktree list | apply | discard | keep', () => {
  const w = worktreeWorld();

  /** A worktree child that changed a.txt, then the harness closed (the CLI opens the store alone). */
  async function closedStoreWithChild(): Promise<string> {
    w.script.on('c', { toolCalls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'one\nCHILD\n' } }] }, { text: 'edited' });
    const run = await w.t.h.subagents.start(w.root, 'spawn', { prompt: '[[c]] edit', label: 'cli', isolation: 'worktree' });
    await run.result;
    await run.dispose();
    await w.t.h.close();
    return run.id;
  }

  const cli = (...args: string[]) => arbor(['worktree', ...args, '--workspace', w.ws, '--store', w.t.storeDir]);

  it('lists, refuses a conflicting apply (exit 1, nothing changed), then applies', async () => {
    const id = await closedStoreWithChild();
    const listed = await cli('list', '--json');
    assert.equal(listed.code, 0, listed.stderr);
    const { worktrees, orphans } = JSON.parse(listed.stdout);
    assert.deepEqual(
      worktrees.map((l: { id: string; state: string; filesChanged: number }) => [l.id, l.state, l.filesChanged]),
      [[id, 'open', 1]],
    );
    assert.deepEqual(orphans, []);
    const human = await cli('list');
    assert.match(human.stdout, new RegExp(`${id.replace(/\./g, '\\.')}  open  arbor/cli-`));

    fs.writeFileSync(path.join(w.ws, 'a.txt'), 'one\nPARENT\n');
    const refused = await cli('apply', id);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /Not applied: 1 conflict; nothing in the workspace was changed/);
    assert.match(refused.stderr, /a\.txt: CONFLICT \(content\)/);
    assert.equal(read(path.join(w.ws, 'a.txt')), 'one\nPARENT\n');

    fs.writeFileSync(path.join(w.ws, 'a.txt'), 'one\ntwo\n');
    const applied = await cli('apply', id);
    assert.equal(applied.code, 0, applied.stderr);
    assert.match(applied.stderr, /Applied 1 file to the workspace \(not committed\): a\.txt/);
    assert.equal(read(path.join(w.ws, 'a.txt')), 'one\nCHILD\n');

    const again = await cli('discard', id);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /NOT_OPEN: .*already applied/);
  });

  it('keep says the branch; an unknown id says where to look', async () => {
    const id = await closedStoreWithChild();
    const kept = await cli('keep', id);
    assert.equal(kept.code, 0, kept.stderr);
    assert.match(kept.stderr, /Kept on branch arbor\/cli-\w+ \(\w+\); its worktree folder is removed\. Merge it with: git merge arbor\/cli-/);
    const unknown = await cli('apply', 's-nope');
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /UNKNOWN_WORKTREE: No session s-nope; `arbor worktree list` shows/);
    const usage = await cli('apply');
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /needs the child's session ID/);
  });
});
