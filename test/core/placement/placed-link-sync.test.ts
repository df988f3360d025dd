// The workspace over the kept connection (issue 26, decision 0081), end to end: a placed child's
// workspace goes to the other side and its changes come back over the `arbor acp` link its
// session uses (`_arbor/sync/*`), not a push and a fetch of their own; a far side without the
// methods (an older arbor) is met with push/fetch; a link cut mid-turn still brings the changes back.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { repoKey } from '../../../src/core/placement/layout';
import { filled } from '../../../src/core/worktree/filling';
import { ofType, stopReasons, waitFor } from '../subagent/helpers';
import { read } from '../worktree/fixture';
import { ended, placedWorld, runOnce, untilLog } from './fixture';

const write = (p: string, content: string) => ({ toolCalls: [{ name: 'write_file', arguments: { path: p, content } }] });
const gitOut = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();

describe('placement: the workspace over the kept connection (_arbor/sync)', function () {
  this.timeout(120_000);
  const w = placedWorld({ far: { linkSync: true }, near: { linkSync: 'old-arbor' } });

  it('a child’s workspace goes there and its changes come back over the link: no push, no fetch; a follow-up’s changes come back on top', async () => {
    w.script.on('c', write('b.txt', 'from afar\n'), { text: 'wrote b.txt' }, write('b.txt', 'again\n'), { text: 'rewrote b.txt' });
    const started = await w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: '[[c]] write b.txt', placement: 'far' });
    const id = started.childId;
    const first = await untilLog(w, id, ended(1), 'the first turn');
    assert.deepEqual(stopReasons(first), ['completed'], ofType(first, 'turn/end')[0]?.error);
    const place = ofType(first, 'worktree')[0];
    // Moved by its branch alone (decision 0093): nothing written here until a reader asks.
    assert.deepEqual(fs.readdirSync(place.path), ['.git'], 'no checkout on this machine before a review');
    assert.equal(w.far.counts.prepare, 0, 'no git push: the workspace went over the link');
    assert.equal(w.far.counts.collect, 0, 'no git fetch: the changes came back over the link');
    // The far side's copy: one repository for the local one, the node's base and its collected changes named there.
    const remoteRepo = path.join(w.far.settings.remoteDir!, 'repos', `${repoKey(w.ws)}.git`);
    const base = gitOut(remoteRepo, 'rev-parse', `refs/arbor/base/${id}`);
    const there = gitOut(remoteRepo, 'rev-parse', `refs/arbor/placed/${id}`);
    assert.equal(gitOut(w.ws, 'rev-parse', `refs/arbor/placed/${id}`), there, 'the same commit here as there');
    assert.equal(gitOut(w.ws, 'rev-parse', `${there}^`), base, 'one commit on the base');
    assert.equal(gitOut(place.root, 'rev-parse', 'HEAD'), there, 'the local worktree is at it');
    assert.deepEqual(
      (await w.t.h.worktrees.diff(id)).files.map((f) => f.path),
      ['b.txt'],
    );
    assert.deepEqual(fs.readdirSync(place.path), ['.git'], 'the review read its branch: still nothing written');
    // Asked for its files (what `git -C <folder> reset --hard` or a cold resume does): exactly its HEAD.
    await filled(place.path);
    assert.equal(read(path.join(place.root, 'b.txt')), 'from afar\n', 'the change that came back');
    assert.equal(gitOut(place.path, 'status', '--porcelain'), '', 'exactly its HEAD');

    await waitFor(() => !w.t.h.subagents.isRunning(id), 'the first turn to be over');
    await w.t.h.subagents.followup(null, id, '[[c]] once more');
    const second = await untilLog(w, id, ended(2), 'the follow-up');
    assert.deepEqual(stopReasons(second), ['completed', 'completed']);
    // Read once, it has its files: the follow-up's changes move them (reset), no review needed.
    assert.equal(read(path.join(place.root, 'b.txt')), 'again\n');
    assert.equal(gitOut(place.path, 'status', '--porcelain'), '');
    const again = gitOut(w.ws, 'rev-parse', `refs/arbor/placed/${id}`);
    assert.notEqual(again, there);
    assert.equal(gitOut(w.ws, 'rev-parse', `${again}^`), base, "the follow-up's changes are one commit on the same base");
    assert.equal(w.far.counts.prepare + w.far.counts.collect, 0);
    assert.equal(w.far.counts.process, 0, 'every turn on the kept connection');
    assert.equal(fs.existsSync(path.join(w.far.settings.remoteDir!, 'wt', id)), true, 'a continuable child keeps its far worktree for its next turn');
  });

  it('one-shot children one after another: the second gets the first’s far worktree (decision 0114), and each brings back exactly its own change', async () => {
    w.script.on('s1', write('one.txt', 'of the first\n'), { text: 'wrote one.txt' });
    w.script.on('s2', write('two.txt', 'of the second\n'), { text: 'wrote two.txt' });
    const remoteDir = w.far.settings.remoteDir!;
    const spares = path.join(remoteDir, 'repos', '.spare', repoKey(w.ws));
    const kept = () => (fs.existsSync(spares) ? fs.readdirSync(spares) : []);
    const before = kept().length;
    const first = await runOnce(w, { prompt: '[[s1]] write one.txt', placement: 'far' });
    // The far side answers the release before it closes the node and moves its folder (the result does not wait).
    await waitFor(() => !fs.existsSync(path.join(remoteDir, 'wt', first.id)), 'its far folder to be let go of');
    assert.equal(kept().length, before + 1, 'and kept for the next child');
    const second = await runOnce(w, { prompt: '[[s2]] write two.txt', placement: 'far' });
    await waitFor(() => !fs.existsSync(path.join(remoteDir, 'wt', second.id)), 'the second’s far folder to be let go of');
    assert.equal(kept().length, before + 1, 'the second took it, and gave it back');
    assert.deepEqual(
      (await w.t.h.worktrees.diff(first.id)).files.map((f) => f.path),
      ['one.txt'],
    );
    assert.deepEqual(
      (await w.t.h.worktrees.diff(second.id)).files.map((f) => f.path),
      ['two.txt'],
      'nothing of the first child in the second’s changes',
    );
    const remoteRepo = path.join(remoteDir, 'repos', `${repoKey(w.ws)}.git`);
    const there = gitOut(remoteRepo, 'worktree', 'list', '--porcelain')
      .split('\n')
      .filter((l) => l.startsWith('worktree '));
    assert.equal(there.filter((l) => l.includes(first.id) || l.includes(second.id)).length, 0, 'no worktree of either under its name');
  });

  it('a far side without the sync methods (an older arbor) is met with push and fetch; the child’s changes still come back', async () => {
    w.script.on('o', write('old.txt', 'via git\n'), { text: 'wrote old.txt' });
    const { events: evs } = await runOnce(w, { prompt: '[[o]] write old.txt', placement: 'near' });
    await filled(ofType(evs, 'worktree')[0].path); // its files, written when asked for (decision 0093)
    assert.equal(read(path.join(ofType(evs, 'worktree')[0].root, 'old.txt')), 'via git\n');
    assert.equal(w.near.counts.prepare, 1, 'the push took over');
    assert.equal(w.near.counts.collect, 1, 'the fetch took over');
  });

  it('the link cut mid-turn: the changes made before it come back over a new link, and a follow-up completes', async () => {
    w.script.on('d', write('c.txt', 'first\n'), { text: 'never arrives', fault: { kind: 'stall', afterChunks: 1 } }, { text: 'finished after reconnect' });
    const started = await w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: '[[d]] write c.txt', placement: 'far' });
    const id = started.childId;
    await waitFor(() => w.script.bodies('d').length === 2, 'the stalled request', 60_000);
    const before = await untilLog(w, id, (evs) => ofType(evs, 'tool/result').length === 1, 'the first tool result');
    process.kill(-ofType(before, 'subagent/remote')[0].pgid!, 'SIGKILL');
    const dropped = await untilLog(w, id, ended(1), 'the dropped turn to end');
    assert.match(ofType(dropped, 'turn/end')[0].error ?? '', /^LINK_DROPPED: /);
    await filled(ofType(dropped, 'worktree')[0].path); // its files, written when asked for (decision 0093)
    assert.equal(read(path.join(ofType(dropped, 'worktree')[0].root, 'c.txt')), 'first\n', 'collected over the next link');
    await waitFor(() => !w.t.h.subagents.isRunning(id), 'the dropped turn to be over');
    await w.t.h.subagents.followup(null, id, '[[d]] go on');
    const evs = await untilLog(w, id, ended(2), 'the follow-up turn to end');
    assert.deepEqual(stopReasons(evs), ['interrupted', 'completed']);
    assert.equal(ofType(evs, 'tool/result').length, 1, 'no history twice');
    assert.equal(w.far.counts.prepare + w.far.counts.collect, 0, 'every sync over the link');
  });
});
