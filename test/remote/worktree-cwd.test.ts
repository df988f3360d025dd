// Attack (permissions never widen: workspace roots): a child confined to its own git worktree
// (isolation: "worktree", decision 0060) delegates to Codex. The remote turn ran the program in the
// session header's cwd — the root conversation's checkout, copied into every child's header — so
// the Codex child (workspace-write, rooted at that cwd) wrote the parent's checkout, which its
// caller cannot write. It must run in its caller's worktree.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { makeRepo } from '../core/worktree/fixture';
import { byWire, ofType, remoteWorld } from './world';

describe('remote: a remote child of a worktree child works in that worktree, never the checkout', function () {
  this.timeout(120_000);
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-remote-wt-')));
  const ws = makeRepo(base);
  const w = remoteWorld({ workspace: [ws], storeDir: path.join(ws, '.arbor', 'store') });
  after(() => fs.rmSync(base, { recursive: true, force: true }));

  it("delegate_codex from an isolated child writes in the child's worktree, not in the parent's checkout", async () => {
    byWire(w.server, {
      chat: [{ toolCalls: [{ name: 'delegate_codex', arguments: { prompt: 'write escaped.txt' } }] }, { text: 'confined done' }],
      responses: [{ toolCalls: [{ name: 'exec_command', arguments: { cmd: 'echo wider > escaped.txt; pwd' } }] }, { text: 'wrote it' }],
    });
    const root = await w.t.h.createSession();
    const run = await w.t.h.subagents.start(root, 'spawn', { prompt: 'delegate it', isolation: 'worktree' });
    const r = await run.result;
    await run.dispose();
    assert.equal(r.stopReason, 'completed', r.error);
    const mine = await w.t.h.store.inspect(run.id);
    const place = ofType(mine.events, 'worktree')[0];
    assert.ok(place, 'the caller works in its own worktree');
    assert.equal(w.server.requests.filter((q) => q.wire === 'responses').length >= 1, true, 'codex ran');
    assert.equal(fs.existsSync(path.join(ws, 'escaped.txt')), false, "the codex child wrote the parent's checkout, outside its caller's roots");
    assert.equal(fs.existsSync(path.join(place.root, 'escaped.txt')), true, "it wrote in its caller's worktree");
  });
});
