// The panel's side of worktrees (decision 0060): a worktree child's node carries its worktree
// (state, branch), apply and discard through the panel's requests, a review without an editor
// says what to do, and worktrees a crash left are offered in a notice by branch (no session id)
// and cleaned on request.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RequestSucceeded } from '../../src/protocol';
import { gitIn, initRepo } from '../core/worktree/fixture';
import { until } from '../support/harness';
import { panelPerTest } from '../support/panel';

describe('extension: worktree children in the panel', () => {
  const w = panelPerTest({ panel: false, harness: { approval: 'never' } });

  const repo = (): string => initRepo(w.t.workspace);

  it('the node shows its worktree; apply from the panel brings the change in; review without an editor says what to do', async () => {
    const ws = repo();
    const root = await w.t.h.createSession();
    w.server.enqueue({ toolCalls: [{ name: 'write_file', arguments: { path: 'b.txt', content: 'from the child\n' } }] }, { text: 'done' });
    const run = await w.t.h.subagents.start(root, 'spawn', { prompt: 'write b', label: 'wt', isolation: 'worktree' });
    await run.result;
    await run.dispose();
    const port = await w.view('panel');
    await until(() => port.node(run.id)?.worktree?.state === 'open');
    assert.match(port.node(run.id)!.worktree!.branch, /^arbor\/wt-/);

    await w.c.receive(port, { type: 'worktree/review', id: 'r1', sessionId: run.id });
    const review = port.done('r1');
    assert.ok(review && !review.ok);
    assert.match(review.error, /no editor here.*arbor worktree diff/);

    await w.c.receive(port, { type: 'worktree/apply', id: 'a1', sessionId: run.id });
    const applied = port.done('a1') as RequestSucceeded<'worktree/apply'> | undefined;
    assert.ok(applied?.ok);
    assert.deepEqual([applied.applied, applied.files], [true, ['b.txt']]);
    assert.equal(fs.readFileSync(path.join(ws, 'b.txt'), 'utf8'), 'from the child\n');
    await until(() => port.node(run.id)?.worktree?.state === 'applied');

    await w.c.receive(port, { type: 'worktree/discard', id: 'd1', sessionId: run.id });
    const again = port.done('d1');
    assert.ok(again && !again.ok);
    assert.equal(again.code, 'NOT_OPEN');
  });

  it('offers worktrees nothing owns by branch, and cleans them on request', async () => {
    const ws = repo();
    await w.t.h.worktrees.create('s-gone.abc123', 'ghost', ws);
    const port = await w.view('panel');
    const [notice] = port.of('worktree/orphans');
    assert.deepEqual(
      notice.orphans.map((o) => o.name),
      ['arbor/ghost-abc123'],
    );
    assert.match(notice.orphans[0].why, /no longer exists/);
    await w.c.receive(port, { type: 'worktree/clean', id: 'c1' });
    const done = port.done('c1') as RequestSucceeded<'worktree/clean'> | undefined;
    assert.ok(done?.ok);
    assert.equal(done.cleaned, 1);
    assert.deepEqual(port.of('worktree/orphans').at(-1)?.orphans, []);
    assert.deepEqual(fs.readdirSync(w.t.h.worktrees.dir), []);
    assert.equal(gitIn(ws, 'branch', '--list', 'arbor/*'), '');
  });

  it('refuses malformed worktree messages before they reach the harness', async () => {
    const port = await w.view('panel');
    await w.c.receive(port, { type: 'worktree/apply', id: 'x1', sessionId: '../../etc' } as never);
    assert.equal(port.of('message/rejected').length, 1);
  });
});
