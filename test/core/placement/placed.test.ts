// A node of the tree placed elsewhere (issue 26, decision 0074), with real parts: the child's
// turns run in this repository's own `arbor acp` started by a real transport in a worktree copy
// (test/support/local-acp-transport.ts), against the scripted model server; its events are
// mirrored into the local store as they arrive, its changes come back as git into its local
// worktree, a dropped link leaves it `interrupted` with LINK_DROPPED, and a follow-up reconnects
// with `session/load` without appending the replayed history again.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { groupAlive } from '../../../src/core/process/group';
import { filled } from '../../../src/core/worktree/filling';
import { ofType, stopReasons, toolNames, waitFor } from '../subagent/helpers';
import { read } from '../worktree/fixture';
import { ended, placedWorld, runOnce, untilLog } from './fixture';

const write = (p: string, content: string) => ({ toolCalls: [{ name: 'write_file', arguments: { path: p, content } }] });

describe('placement: a placed node', function () {
  this.timeout(120_000);
  const w = placedWorld();

  it('runs in arbor acp over the transport: events arrive in the local store as they happen, its changes come back and apply into the parent', async () => {
    w.script.on('c', write('b.txt', 'from afar\n'), { text: 'wrote b.txt', delayMs: 1500 });
    const run = await w.t.h.subagents.start(w.root, 'spawn', { prompt: '[[c]] write b.txt', label: 'afar', placement: 'far' });
    // Mirrored as it arrives: the call and its result are in the local log while the turn still runs.
    const mid = await untilLog(w, run.id, (evs) => ofType(evs, 'tool/result').length === 1, 'the placed tool result');
    assert.equal(ofType(mid, 'turn/end').length, 0, 'the turn is still running when its tool result is already here');
    const r = await run.result;
    await run.dispose();
    assert.equal(r.stopReason, 'completed', r.error);
    assert.equal(r.text, 'wrote b.txt');
    const evs = await untilLog(w, run.id, ended(1), 'the turn end');
    const d = ofType(evs, 'subagent/descriptor')[0];
    assert.equal(d.provider, 'placed:far');
    assert.equal(d.isolation, 'worktree', 'a placed child always gets its own worktree');
    assert.equal(d.placement?.name, 'far');
    assert.equal(d.placement?.kind, 'ssh');
    assert.match(d.placement?.where ?? '', /^local:.*far$/);
    assert.ok((d.placement?.rttMs ?? -1) >= 0, 'the round trip of the check is recorded');
    assert.equal(w.t.h.store.summaryRef(run.id)?.placement?.name, 'far', 'the summary (the tree) knows where it runs');
    assert.equal(ofType(evs, 'subagent/remote')[0]?.program, 'placed:far');
    // Its changes came back: the local worktree's branch is at the collected commit, review and apply as any worktree child.
    const place = ofType(evs, 'worktree')[0];
    const collected = execFileSync('git', ['rev-parse', `refs/arbor/placed/${run.id}`], { cwd: w.ws, encoding: 'utf8' }).trim();
    assert.equal(execFileSync('git', ['rev-parse', 'HEAD'], { cwd: place.path, encoding: 'utf8' }).trim(), collected);
    // Decision 0093: no file of it was written here while it worked, when its changes came back, nor for their review and apply.
    assert.deepEqual(fs.readdirSync(place.path), ['.git'], 'nothing checked out on this machine');
    assert.equal(w.far.counts.prepare, 1);
    assert.equal(w.far.counts.collect, 1);
    const diff = await w.t.h.worktrees.diff(run.id);
    assert.deepEqual(
      diff.files.map((f) => f.path),
      ['b.txt'],
    );
    assert.equal(diff.files[0].after, 'from afar\n', 'the review reads the branch');
    assert.equal(diff.listing.unwritten, true);
    assert.equal(diff.listing.filesChanged, 1);
    assert.deepEqual(fs.readdirSync(place.path), ['.git'], 'a review writes no file of it');
    const applied = await w.t.h.worktrees.apply(run.id);
    assert.equal(applied.applied, true);
    assert.equal(read(path.join(w.ws, 'b.txt')), 'from afar\n', 'applied into the parent from its branch');
    // The other side worked in its own copy, never in the parent's checkout.
    assert.ok(fs.existsSync(path.join(w.far.settings.remoteDir!, 'wt', run.id, 'b.txt')));
  });

  it('keep: the branch it came back on is kept as it is, and its folder goes without a file of it ever written here', async () => {
    w.script.on('k', write('kept.txt', 'kept from afar\n'), { text: 'wrote kept.txt' });
    const run = await runOnce(w, { prompt: '[[k]] write kept.txt', placement: 'far' });
    const place = ofType(run.events, 'worktree')[0];
    const collected = execFileSync('git', ['rev-parse', `refs/arbor/placed/${run.id}`], { cwd: w.ws, encoding: 'utf8' }).trim();
    const kept = await w.t.h.worktrees.keep(run.id);
    assert.equal(kept.head, collected, 'no commit of an unwritten folder on top: the branch as it came back');
    assert.equal(execFileSync('git', ['show', `${kept.branch}:kept.txt`], { cwd: w.ws, encoding: 'utf8' }), 'kept from afar\n');
    assert.equal(fs.existsSync(place.path), false, 'its folder is gone');
  });

  it('never runs wider there: a read-only child is read-only on the other side (session/set_mode), its write refused, nothing comes back', async () => {
    w.script.on('ro', write('x.txt', 'nope\n'), { text: 'could not write' });
    const { id, events: evs } = await runOnce(w, { prompt: '[[ro]] write x.txt', placement: 'far', sandbox: 'read-only' });
    const results = ofType(evs, 'tool/result');
    assert.equal(results.length, 1);
    assert.equal(results[0].isError, true, 'the other side refused the write');
    await filled(ofType(evs, 'worktree')[0].path); // its files, written when asked for (decision 0093)
    assert.ok(fs.existsSync(path.join(ofType(evs, 'worktree')[0].root, 'a.txt')), 'the worktree has its files');
    assert.equal(fs.existsSync(path.join(ofType(evs, 'worktree')[0].root, 'x.txt')), false);
    assert.equal(fs.existsSync(path.join(w.far.settings.remoteDir!, 'wt', id, 'x.txt')), false);
  });

  it('refuses an unknown placement with UNKNOWN_PLACEMENT, naming the configured ones; the subagent tool advertises them', async () => {
    await assert.rejects(
      w.t.h.subagents.start(w.root, 'spawn', { prompt: '[[x]] go', placement: 'mars' }),
      (err: Error & { code?: string }) => err.code === 'UNKNOWN_PLACEMENT' && /far, near/.test(err.message),
    );
    assert.equal(w.t.h.store.children(w.root.id).length, 0, 'nothing was created');
    await w.root.accept('[[root]] hello');
    await w.root.idle();
    const body = w.script.bodies('root')[0];
    const tool = (body.tools as { function: { name: string; parameters: { properties: Record<string, { enum?: string[] }> } } }[]).find(
      (t) => t.function.name === 'subagent',
    );
    assert.deepEqual(tool?.function.parameters.properties.placement?.enum, ['far', 'near']);
    assert.ok(toolNames(body).includes('subagent'));
  });

  it('a dropped link (the transport process killed mid-turn) leaves it interrupted with LINK_DROPPED; a follow-up reconnects without duplicating history and completes', async () => {
    w.script.on('d', write('c.txt', 'first\n'), { text: 'never arrives', fault: { kind: 'stall', afterChunks: 1 } }, { text: 'finished after reconnect' });
    const started = await w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: '[[d]] write c.txt', placement: 'near' });
    const id = started.childId;
    // The second model request of the first turn stalls: the turn is mid-way when the link goes.
    await waitFor(() => w.script.bodies('d').length === 2, 'the stalled request', 60_000);
    const before = await untilLog(w, id, (evs) => ofType(evs, 'tool/result').length === 1, 'the first tool result');
    const remote = ofType(before, 'subagent/remote')[0];
    assert.ok(remote?.pgid, 'the transport process is identified');
    process.kill(-remote.pgid!, 'SIGKILL');
    const dropped = await untilLog(w, id, ended(1), 'the dropped turn to end');
    const end1 = ofType(dropped, 'turn/end')[0];
    assert.equal(end1.stopReason, 'interrupted');
    assert.match(end1.error ?? '', /^LINK_DROPPED: the link to local:.*near dropped: .*; send it a message or resume to reconnect\.$/s);
    // The change made before the drop came back all the same (the local transport's copy is still there).
    const place = ofType(dropped, 'worktree')[0];
    await filled(place.path); // its files, written when asked for (decision 0093)
    assert.equal(read(path.join(place.root, 'c.txt')), 'first\n');

    // (Once its loop is done with the dropped turn: a message staged while an interrupted turn's
    // end is still being written is kept for "Send now", as after any interrupt.)
    await waitFor(() => !w.t.h.subagents.isRunning(id), 'the dropped turn to be over');
    await w.t.h.subagents.followup(null, id, '[[d]] go on');
    const evs = await untilLog(w, id, ended(2), 'the follow-up turn to end');
    assert.deepEqual(stopReasons(evs), ['interrupted', 'completed']);
    // No history twice: session/load's replay was not appended again.
    assert.equal(ofType(evs, 'tool/result').length, 1, 'one tool result, not a replayed second');
    assert.equal(ofType(evs, 'subagent/remote').length, 1, 'the same remote session, loaded, not a new one');
    const texts = ofType(evs, 'assistant/message')
      .map((e) => e.text)
      .filter(Boolean);
    assert.equal(texts.filter((t) => t === 'finished after reconnect').length, 1);
    assert.equal(w.near.counts.prepare, 1, 'the copy on the other side is reused');
    assert.equal(w.near.counts.process, 0, "no process per turn: the placement's kept connection, made again after the drop (decision 0077)");
    // The remote side saw the whole history (its own log), then the follow-up.
    const third = w.script.bodies('d')[2];
    assert.ok(
      third.messages.some((m) => String(m.content ?? '').includes('write c.txt')),
      'the reconnected session still has the first task',
    );
  });

  it('stopping the subtree cancels a placed node: its turn ends interrupted, the other side stops its work, and the kept connection goes when the harness closes', async () => {
    w.script.on('s', { text: 'never arrives', fault: { kind: 'stall', afterChunks: 1 } });
    const started = await w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: '[[s]] wait', placement: 'far' });
    await waitFor(() => w.script.bodies('s').length === 1, 'the stalled request', 60_000);
    const evs = await untilLog(w, started.childId, (e) => ofType(e, 'subagent/remote').length === 1, 'the remote session');
    const pgid = ofType(evs, 'subagent/remote')[0].pgid!;
    assert.equal(w.server.inFlight, 1, 'the other side is waiting on its model');
    const stopped = await w.t.h.interruptSubtree(w.root.id);
    assert.ok(stopped.includes(started.childId));
    const after = await untilLog(w, started.childId, ended(1), 'the stopped turn');
    const end = ofType(after, 'turn/end')[0];
    assert.equal(end.stopReason, 'interrupted');
    assert.doesNotMatch(end.error ?? '', /LINK_DROPPED/, 'a stop is not a dropped link');
    // session/cancel reached the other side: its model request was dropped, though its process (the placement's kept connection) lives on.
    await waitFor(() => w.server.inFlight === 0, 'the remote model request to be dropped', 20_000);
    assert.ok(groupAlive(pgid), "the kept connection stays for the placement's other children");
    await w.t.h.close();
    await waitFor(() => !groupAlive(pgid), 'the transport process group to be gone once the harness closes', 20_000);
  });

  it("a subtree's budget counts what the placed node's own children spent on the other side (session 48)", async () => {
    // The placed node delegates one child there; that child's request spends too.
    w.script.on('pb', { toolCalls: [{ name: 'subagent', arguments: { prompt: '[[pbc]] help out', label: 'helper' } }] }, { text: 'both done' });
    w.script.on('pbc', { text: 'helped' });
    const started = await w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: '[[pb]] spend', placement: 'far', budget: { maxTokens: 1_000_000 } });
    const evs = await untilLog(w, started.childId, ended(1), 'the turn');
    assert.deepEqual(stopReasons(evs), ['completed']);
    const served = (tag: string) => w.script.indexes(tag).map((i) => w.server.requests[i]);
    const grandchild = served('pbc');
    assert.equal(grandchild.length, 1, "the placed node's child asked the model on the other side");
    const all = [...served('pb'), ...grandchild];
    const prompt = all.reduce((n, r) => n + r.promptTokens, 0);
    const spent = () => w.t.h.subagents.budgetState(started.childId)?.spent.tokens;
    await waitFor(() => (spent()?.completion ?? 0) > 0, 'the budget to count it');
    assert.ok(
      (spent()?.prompt ?? 0) >= prompt,
      `the budget counts every prompt served under the placed node: ${spent()?.prompt} of ${prompt} (its child's ${grandchild[0].promptTokens})`,
    );
  });

  it("a subtree's budget counts the placed node's spending (the usage arbor acp reports)", async () => {
    w.script.on('b', { text: 'spent some' });
    const started = await w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: '[[b]] spend', placement: 'far', budget: { maxTokens: 1_000_000 } });
    const evs = await untilLog(w, started.childId, ended(1), 'the turn');
    assert.deepEqual(stopReasons(evs), ['completed']);
    const remoteRequests = w.server.requests.filter((r) => String(r.body.messages.at(-1)?.content ?? '').includes('[[b]]'));
    assert.equal(remoteRequests.length, 1);
    const usage = ofType(evs, 'assistant/message').at(-1)?.usage;
    assert.ok(usage && usage.promptTokens > 0 && usage.completionTokens > 0, 'the remote usage is on the last assistant message');
    const spent = () => w.t.h.subagents.budgetState(started.childId)?.spent.tokens;
    await waitFor(() => (spent()?.completion ?? 0) > 0, 'the budget to count it');
    assert.equal(spent()?.prompt, usage.promptTokens);
    assert.equal(spent()?.completion, usage.completionTokens);
  });
});
