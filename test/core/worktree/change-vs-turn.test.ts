// A worktree being applied (or discarded, or kept) and a turn of a session working in it
// (decision 0126, amended in s60): with the real git, real files, the real harness. The apply is
// held in its window — after it committed the worktree, before it removes it — by a git on PATH
// that waits at `merge-tree` until the test lets it go (a real delay, not a mock). A message sent
// meanwhile to a fork working there, or a parent's follow-up to the owner, started a turn whose
// write landed in the worktree after its commit and went with the folder: lost without a word.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { SessionEvent } from '../../../src/core/session/events';
import { eventsOf, ofType, waitFor } from '../subagent/helpers';
import { childThatRan, placeOf, read, results, type WorktreeWorld, worktreeWorld } from './fixture';

const write = (p: string, content: string) => ({ toolCalls: [{ name: 'write_file', arguments: { path: p, content } }] });
const lastTurnEnd = (events: readonly SessionEvent[]): number => ofType(events, 'turn/end').at(-1)!.seq;

/**
 * A `git` first on PATH that, while `<dir>/hold` exists, stops at the subcommand `at` (default
 * `merge-tree`: the apply's merge, run once the worktree is committed), or just after it ran
 * (`after`): it says so (`entered`) and waits for the hold to go.
 */
function slowMergeGit(dir: string, at = 'merge-tree', after = false): { entered: () => boolean; release: () => void; restore: () => void } {
  const real = process.env
    .PATH!.split(path.delimiter)
    .map((d) => path.join(d, 'git'))
    .find((p) => fs.existsSync(p))!;
  const bin = path.join(dir, 'bin');
  fs.mkdirSync(bin, { recursive: true });
  const hold = path.join(dir, 'hold');
  const entered = path.join(dir, 'entered');
  fs.writeFileSync(
    path.join(bin, 'git'),
    `#!/bin/sh\nwait_hold() { for a in "$@"; do if [ "$a" = ${at} ] && [ -e '${hold}' ]; then : > '${entered}'; n=0; while [ -e '${hold}' ] && [ $n -lt 600 ]; do sleep 0.05; n=$((n+1)); done; fi; done; }\n` +
      (after ? `'${real}' "$@"; rc=$?; wait_hold "$@"; exit $rc\n` : `wait_hold "$@"\nexec '${real}' "$@"\n`),
    { mode: 0o755 },
  );
  fs.writeFileSync(hold, '');
  const before = process.env.PATH;
  process.env.PATH = `${bin}${path.delimiter}${before}`;
  return {
    entered: () => fs.existsSync(entered),
    release: () => fs.rmSync(hold, { force: true }),
    restore: () => {
      fs.rmSync(hold, { force: true });
      process.env.PATH = before;
    },
  };
}

/** How many `write_file` calls of the session after event `after` succeeded. */
async function writesOf(w: WorktreeWorld, id: string, after: number): Promise<number> {
  return (await results(w, id)).filter((r) => r.seq > after && r.name === 'write_file' && !r.isError).length;
}

describe('a worktree being changed holds the turns of the sessions working in it (decision 0126, amended in s60)', () => {
  const w = worktreeWorld();
  let git: ReturnType<typeof slowMergeGit> | undefined;
  afterEach(() => git?.restore());

  it("a message to a fork while its owner's apply runs: refused once the apply closed the worktree, nothing written and lost", async () => {
    const child = await childThatRan(w, 'echo from-child > c.txt');
    const place = await placeOf(w, child);
    const fork = await w.t.h.forkSession(child, lastTurnEnd(await eventsOf(w.t.h, child)));
    const seen = (await eventsOf(w.t.h, fork.id)).length;
    w.script.on('f', write('late.txt', 'from the fork\n'), { text: 'fork done' });
    git = slowMergeGit(w.base);
    const applied = w.t.h.worktrees.apply(child);
    await waitFor(git.entered, 'the apply to reach its merge (the worktree committed)');
    const sent = w.t.h.send(fork.id, '[[f]] write late.txt').then(
      () => undefined,
      (e: Error & { code?: string }) => e,
    );
    // The fork's turn had time to run (and, before the fix, to write) while the apply was held.
    await new Promise((r) => setTimeout(r, 1500));
    git.release();
    const out = await applied;
    const refused = await sent;
    await w.t.h.settle();
    assert.deepEqual(out.applied && [...out.files].sort(), ['c.txt']);
    const wrote = await writesOf(w, fork.id, seen);
    // The loss itself: a write the fork was told succeeded is neither in the checkout nor anywhere else.
    assert.equal(
      wrote > 0 && !fs.existsSync(path.join(w.ws, 'late.txt')),
      false,
      `the fork's write (${wrote} ok) was lost with the worktree (folder there: ${fs.existsSync(place.path)})`,
    );
    assert.equal(wrote, 0, 'no turn of the fork ran in the worktree being applied');
    assert.equal(refused?.code, 'WORKTREE_CLOSED', `the message is refused, not run (${refused?.message ?? 'it was sent'})`);
    assert.match(refused.message, /was applied: its changes are in your checkout now.*start a new conversation in your checkout.*not sent/);
    assert.equal(
      ofType(await eventsOf(w.t.h, fork.id), 'inbox/accepted').length,
      ofType((await eventsOf(w.t.h, fork.id)).slice(0, seen), 'inbox/accepted').length,
    );
  });

  it("a turn that opens by another way than send (the agent's own inbox) waits for the apply, then is kept queued, never run", async () => {
    const child = await childThatRan(w, 'echo from-child > c.txt');
    const fork = await w.t.h.forkSession(child, lastTurnEnd(await eventsOf(w.t.h, child)));
    const seen = (await eventsOf(w.t.h, fork.id)).length;
    w.script.on('q', write('late.txt', 'from the queue\n'), { text: 'queue done' });
    git = slowMergeGit(w.base);
    const applied = w.t.h.worktrees.apply(child);
    await waitFor(git.entered, 'the apply to reach its merge (the worktree committed)');
    const messageId = await fork.accept('[[q]] write late.txt');
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(
      ofType(await eventsOf(w.t.h, fork.id), 'turn/start').length,
      ofType((await eventsOf(w.t.h, fork.id)).slice(0, seen), 'turn/start').length,
      'no turn opened while the apply ran',
    );
    git.release();
    assert.equal((await applied).applied, true);
    await w.t.h.settle();
    assert.equal(await writesOf(w, fork.id, seen), 0, 'nothing ran in the closed worktree');
    assert.deepEqual(fork.session.unclaimedInbox, [messageId], 'the message is kept, queued');
    assert.equal(fork.activity, 'idle');
  });

  it('a Stop ends the wait of a held turn at once, the apply still running; the message is kept', async () => {
    const child = await childThatRan(w, 'echo from-child > c.txt');
    const fork = await w.t.h.forkSession(child, lastTurnEnd(await eventsOf(w.t.h, child)));
    git = slowMergeGit(w.base);
    const applied = w.t.h.worktrees.apply(child);
    await waitFor(git.entered, 'the apply to reach its merge (the worktree committed)');
    const messageId = await fork.accept('[[q]] write late.txt');
    await waitFor(() => fork.activity === 'running', 'the held turn');
    const t0 = Date.now();
    await w.t.h.interruptSubtree(fork.id);
    await fork.idle();
    assert.ok(Date.now() - t0 < 1000, `the Stop ended the wait at once (${Date.now() - t0} ms)`);
    assert.equal(fs.existsSync(path.join(w.base, 'hold')), true, 'the apply is still held');
    assert.deepEqual(fork.session.unclaimedInbox, [messageId]);
    git.release();
    assert.equal((await applied).applied, true);
  });

  it('a message to a fork while its owner is kept (held just after the commit): refused saying which branch holds the work', async () => {
    const child = await childThatRan(w, 'echo from-child > c.txt');
    const fork = await w.t.h.forkSession(child, lastTurnEnd(await eventsOf(w.t.h, child)));
    const seen = (await eventsOf(w.t.h, fork.id)).length;
    w.script.on('f', write('late.txt', 'from the fork\n'), { text: 'fork done' });
    git = slowMergeGit(w.base, 'commit', true);
    const kept = w.t.h.worktrees.keep(child);
    await waitFor(git.entered, 'the keep to commit the worktree');
    const sent = w.t.h.send(fork.id, '[[f]] write late.txt').then(
      () => undefined,
      (e: Error & { code?: string }) => e,
    );
    await new Promise((r) => setTimeout(r, 1500));
    git.release();
    const { branch } = await kept;
    const refused = await sent;
    await w.t.h.settle();
    assert.equal(await writesOf(w, fork.id, seen), 0, 'no turn of the fork ran in the worktree being kept (its write would not be on the branch)');
    assert.equal(refused?.code, 'WORKTREE_CLOSED', `the message is refused (${refused?.message ?? 'it was sent'})`);
    assert.match(refused.message, new RegExp(`was kept as branch ${branch}`));
  });

  it("a parent's follow-up to the owner while its apply runs: the parent's model is told the worktree was applied, no turn runs", async () => {
    w.script.on('c', write('c.txt', 'from the child\n'), { text: 'child done' });
    const { childId } = await w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: '[[c]] start', label: 'own', isolation: 'worktree' });
    await w.t.h.settle();
    const seen = (await eventsOf(w.t.h, childId)).length;
    w.script.on('g', write('late.txt', 'from the follow-up\n'), { text: 'follow-up done' });
    w.script.on('p', { toolCalls: [{ name: 'send_message', arguments: { agentId: childId, message: '[[g]] write late.txt' } }] }, { text: 'parent done' });
    git = slowMergeGit(w.base);
    const applied = w.t.h.worktrees.apply(childId);
    await waitFor(git.entered, 'the apply to reach its merge (the worktree committed)');
    await w.t.h.send(w.root.id, '[[p]] ask the child for more');
    await new Promise((r) => setTimeout(r, 1500));
    git.release();
    const out = await applied;
    await w.t.h.settle();
    assert.deepEqual(out.applied && [...out.files].sort(), ['c.txt']);
    const wrote = await writesOf(w, childId, seen);
    assert.equal(wrote > 0 && !fs.existsSync(path.join(w.ws, 'late.txt')), false, `the follow-up's write (${wrote} ok) was lost with the worktree`);
    assert.equal(wrote, 0, 'no turn of the owner ran in the worktree being applied');
    const sent = (await results(w, w.root.id)).find((r) => r.name === 'send_message');
    assert.equal(sent?.isError, true, `the parent's send_message failed (${sent?.content})`);
    assert.match(String(sent?.content), /WORKTREE_CLOSED/);
    assert.match(String(sent?.content), /was applied: its changes are in the parent's checkout now/);
    assert.equal(read(path.join(w.ws, 'c.txt')), 'from the child\n');
  });
});
