// Probes: a worktree child's changes of every kind applied into a workspace the user kept
// working in (decision 0060): modes and links come across, and nothing of the user's is lost.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { childThatRan, gitIn, read, worktreeWorld } from './fixture';

describe('worktree apply: kinds of change, and the user’s files beside them', () => {
  const w = worktreeWorld();

  const child = (command: string) => childThatRan(w, command);

  it('an executable bit and a link the child made come across', async () => {
    const id = await child('printf "#!/bin/sh\\n" > run.sh && chmod +x run.sh && ln -s a.txt link && chmod +x keep.txt');
    const r = await w.t.h.worktrees.apply(id);
    assert.equal(r.applied, true, JSON.stringify(r));
    assert.equal(fs.statSync(path.join(w.ws, 'run.sh')).mode & 0o100, 0o100);
    assert.equal(fs.statSync(path.join(w.ws, 'keep.txt')).mode & 0o100, 0o100);
    assert.equal(fs.readlinkSync(path.join(w.ws, 'link')), 'a.txt');
  });

  it('a file the user keeps out of git (ignored) is never overwritten by a child that un-ignored it', async () => {
    fs.writeFileSync(path.join(w.ws, '.gitignore'), 'local.cfg\n');
    gitIn(w.ws, 'add', '.gitignore');
    gitIn(w.ws, 'commit', '-qm', 'ignore');
    fs.writeFileSync(path.join(w.ws, 'local.cfg'), 'the user’s secret settings\n');
    const id = await child(': > .gitignore && echo child > local.cfg');
    const r = await w.t.h.worktrees.apply(id);
    assert.equal(r.applied, false, 'refused');
    assert.ok(!r.applied && r.conflicts.some((c) => c.path === 'local.cfg'), JSON.stringify(r));
    assert.equal(read(path.join(w.ws, 'local.cfg')), 'the user’s secret settings\n');
    assert.equal(read(path.join(w.ws, '.gitignore')), 'local.cfg\n', 'nothing written');
  });

  it('a file the child turned into a folder applies', async () => {
    const id = await child('rm a.txt && mkdir a.txt && echo in > a.txt/in.txt');
    const r = await w.t.h.worktrees.apply(id);
    assert.equal(r.applied, true, JSON.stringify(r));
    assert.equal(read(path.join(w.ws, 'a.txt', 'in.txt')), 'in\n');
  });

  it('a file one side removed and the other changed is a conflict either way, nothing written', async () => {
    const id = await child('echo child >> keep.txt && rm a.txt && echo added > added.txt');
    fs.rmSync(path.join(w.ws, 'keep.txt'));
    fs.writeFileSync(path.join(w.ws, 'a.txt'), 'one\ntwo\nthe user’s line\n');
    const r = await w.t.h.worktrees.apply(id);
    assert.ok(!r.applied, JSON.stringify(r));
    assert.deepEqual(r.conflicts.map((c) => c.path).sort(), ['a.txt', 'keep.txt']);
    assert.equal(read(path.join(w.ws, 'a.txt')), 'one\ntwo\nthe user’s line\n');
    assert.equal(fs.existsSync(path.join(w.ws, 'keep.txt')), false);
    assert.equal(fs.existsSync(path.join(w.ws, 'added.txt')), false, 'nothing of the clean part either');
  });
});
