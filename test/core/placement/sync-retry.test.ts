import * as assert from 'node:assert/strict';
import { despiteWorktreeMade, worktreeBeingMade } from '../../../src/core/placement/ssh';

// A push or fetch that met another node's half-made worktree is tried again; nothing else is.
describe('placement: a sync step beside a worktree being made', () => {
  const seen = [
    // git's words, as seen in placement fan-outs (a fetch, then a push).
    'error: bad object worktrees/s-mx6-1.b2d325/HEAD\nfatal: remote did not send all necessary objects',
    'fatal: failed to read worktrees/s-mx6mygcu-340b7f90.422f17/commondir: Success\nsend-pack: unexpected disconnect while reading sideband packet',
  ];
  const other = [
    'fatal: Could not read from remote repository.',
    'error: bad object refs/heads/main',
    "fatal: couldn't find remote ref refs/arbor/placed/x",
    'ssh: connect to host box port 22: Connection refused',
  ];

  it('knows the half-made worktree by git’s words, and nothing else', () => {
    for (const s of seen) assert.equal(worktreeBeingMade(s), true, s);
    for (const s of other) assert.equal(worktreeBeingMade(s), false, s);
  });

  it('runs such a step again until it succeeds; another failure is returned at once', async () => {
    let n = 0;
    const ok = await despiteWorktreeMade(async () => (++n < 3 ? { code: 128, stderr: seen[1] } : { code: 0, stderr: '' }));
    assert.deepEqual([ok.code, n], [0, 3]);
    let m = 0;
    const bad = await despiteWorktreeMade(async () => (m++, { code: 128, stderr: other[0] }));
    assert.deepEqual([bad.code, m], [128, 1]);
  });

  it('stops trying when the caller aborts', async () => {
    const ac = new AbortController();
    let n = 0;
    const r = await despiteWorktreeMade(async () => {
      if (++n === 2) ac.abort();
      return { code: 128, stderr: seen[0] };
    }, ac.signal);
    assert.deepEqual([r.code, n], [128, 2]);
  });
});
