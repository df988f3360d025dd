// A user's fork of a session that works in a worktree works in that same worktree (decision
// 0126), with the real git, real files and the real bubblewrap: a fork of a worktree child, of a
// fork of it, of a "Try N ways" way; after a reopen of the store; its rewind acting on the
// worktree; the owner's apply refused while the fork runs there, and a clear refusal once the
// worktree is gone. Before the fix the fork's writes landed in the user's checkout.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { SessionEvent } from '../../../src/core/session/events';
import { makeHarness } from '../../support/harness';
import type { ChatBody } from '../../support/model-server';
import { eventsOf, ofType, tagOf, waitFor } from '../subagent/helpers';
import { childThatRan, placeOf, read, results, worktreeWorld } from './fixture';

const write = (p: string, content: string) => ({ toolCalls: [{ name: 'write_file', arguments: { path: p, content } }] });
const command = (c: string) => ({ toolCalls: [{ name: 'run_command', arguments: { command: c } }] });
const lastTurnEnd = (events: readonly SessionEvent[]): number => ofType(events, 'turn/end').at(-1)!.seq;
const exists = (p: string) => fs.existsSync(p);

describe('a fork of a session in a worktree works in that worktree (decision 0126)', () => {
  const w = worktreeWorld();

  /** The user forks `id` after its last finished turn and sends the fork `text`; settled. */
  async function forkAndSend(id: string, text: string): Promise<string> {
    const fork = await w.t.h.forkSession(id, lastTurnEnd(await eventsOf(w.t.h, id)));
    await w.t.h.send(fork.id, text);
    await w.t.h.settle();
    return fork.id;
  }

  it('a fork of a worktree child writes its worktree, never the checkout; its rewind acts on the worktree', async () => {
    const child = await childThatRan(w, 'echo from-child > c.txt');
    const place = await placeOf(w, child);
    w.script.on(
      'f',
      write(path.join(w.ws, 'a.txt'), 'HACK\n'),
      write('f.txt', 'from the fork\n'),
      command('echo by-command > g.txt'),
      command(`echo HACK > ${path.join(w.ws, 'planted.txt')}`),
      { text: 'fork done' },
    );
    const fork = await forkAndSend(child, '[[f]] go on');
    assert.deepEqual(
      (await results(w, fork)).filter((r) => r.seq > (w.t.h.store.header(fork)?.seedLength ?? 0)).map((r) => `${r.name}:${r.isError ? 'refused' : 'ok'}`),
      ['write_file:refused', 'write_file:ok', 'run_command:ok', 'run_command:refused'],
    );
    assert.equal(read(path.join(place.root, 'f.txt')), 'from the fork\n', 'the fork wrote the worktree');
    assert.equal(read(path.join(place.root, 'g.txt')), 'by-command\n');
    assert.equal(exists(path.join(w.ws, 'f.txt')), false, 'nothing landed in the checkout');
    assert.equal(exists(path.join(w.ws, 'g.txt')), false);
    assert.equal(exists(path.join(w.ws, 'planted.txt')), false);
    assert.equal(read(path.join(w.ws, 'a.txt')), 'one\ntwo\n');
    const own = ofType(await eventsOf(w.t.h, fork), 'worktree').at(-1)!;
    assert.deepEqual([own.state, own.owner, own.root], ['inherited', child, place.root]);
    assert.deepEqual(
      (await w.t.h.worktrees.list()).map((l) => l.id),
      [child],
      'the fork is no worktree of its own: the child owns it',
    );

    // Rewinding the fork to before its message restores the worktree's files, and only its own.
    const msg = ofType(await eventsOf(w.t.h, fork), 'user/message').find((m) => m.text.includes('[[f]]'))!;
    const plan = await w.t.h.checkpoints.plan({ sessionId: fork, toSeq: msg.seq });
    assert.deepEqual(plan.files.map((f) => f.relative).sort(), ['f.txt', 'g.txt']);
    await w.t.h.checkpoints.apply(plan);
    assert.equal(exists(path.join(place.root, 'f.txt')), false);
    assert.equal(exists(path.join(place.root, 'g.txt')), false);
    assert.equal(read(path.join(place.root, 'c.txt')), 'from-child\n', "the child's own work stays");
    assert.equal(read(path.join(w.ws, 'a.txt')), 'one\ntwo\n');

    // The worktree is the child's: deleting the fork leaves it, open, to the child's review.
    await w.t.h.deleteSession(fork);
    assert.equal(read(path.join(place.root, 'c.txt')), 'from-child\n');
    assert.deepEqual(
      (await w.t.h.worktrees.list()).map((l) => [l.id, l.state]),
      [[child, 'open']],
    );
  });

  it('a fork of that fork works there too, and so does the fork after a reopen of the store (same roots)', async () => {
    const child = await childThatRan(w, 'echo from-child > c.txt');
    const place = await placeOf(w, child);
    w.script.on('f', write('f.txt', 'one\n'), { text: 'f done' });
    const fork = await forkAndSend(child, '[[f]] first');
    w.script.on('ff', write('ff.txt', 'two\n'), { text: 'ff done' });
    const forkOfFork = await forkAndSend(fork, '[[ff]] second');
    const own = ofType(await eventsOf(w.t.h, forkOfFork), 'worktree').at(-1)!;
    assert.deepEqual([own.state, own.owner, own.root], ['inherited', child, place.root], 'the owner is still the child');
    assert.equal(read(path.join(place.root, 'ff.txt')), 'two\n');
    assert.equal(exists(path.join(w.ws, 'ff.txt')), false);

    // Reload: a new harness over the same store; the fork is resumed cold from its log.
    await w.t.h.close();
    const again = await makeHarness(w.server, { workspace: [w.ws], storeDir: path.join(w.ws, '.arbor', 'store') });
    try {
      w.script.on('r', write('r.txt', 'after reload\n'), command('echo cmd > rc.txt'), { text: 'r done' });
      await again.h.send(fork, '[[r]] once more');
      await again.h.settle();
      assert.equal(read(path.join(place.root, 'r.txt')), 'after reload\n');
      assert.equal(read(path.join(place.root, 'rc.txt')), 'cmd\n');
      assert.equal(exists(path.join(w.ws, 'r.txt')), false, 'the cold-resumed fork is rooted in the worktree again');
      assert.equal(exists(path.join(w.ws, 'rc.txt')), false);
    } finally {
      await again.h.close();
    }
  });

  it('a fork of a "Try N ways" way works in that way’s worktree, on that way’s model', async () => {
    w.server.setFallback((body: ChatBody) => {
      const last = body.messages[body.messages.length - 1];
      if (last.role === 'tool') return { text: 'done' };
      if (tagOf(body) === 'f') return write('f.txt', 'fork of a way\n');
      if (body.model === 'test-model') return { text: 'the conversation only answers' };
      return write('a.txt', `${body.model}\n`);
    });
    await w.root.accept('rewrite a.txt', { kind: 'user' });
    await w.t.h.settle();
    const seq = ofType(w.root.session.events, 'user/message')[0].seq;
    const { ways } = await w.t.h.bestOf.start(w.root.id, seq, { ways: [{ model: 'model-a' }, { model: 'model-b' }] });
    await w.t.h.settle();
    const place = await placeOf(w, ways[0]);
    const fork = await forkAndSend(ways[0], '[[f]] more');
    const own = ofType(await eventsOf(w.t.h, fork), 'worktree').at(-1)!;
    assert.deepEqual([own.state, own.owner, own.root], ['inherited', ways[0], place.root]);
    assert.equal(read(path.join(place.root, 'f.txt')), 'fork of a way\n');
    // The same agent as the way (its model, not the conversation's): the same head, the prompt cache holds.
    const forkModels = new Set(w.server.requests.filter((r) => tagOf(r.body) === 'f').map((r) => r.body.model));
    assert.deepEqual([...forkModels], ['model-a'], 'the fork runs on the way’s model');
    assert.equal(read(path.join(place.root, 'a.txt')), 'model-a\n');
    assert.equal(exists(path.join(w.ws, 'f.txt')), false);
    assert.equal(read(path.join(w.ws, 'a.txt')), 'one\ntwo\n');
  });

  it("the owner's apply waits for a running fork; once applied, the fork and a new fork are refused saying what happened", async () => {
    const child = await childThatRan(w, 'echo from-child > c.txt');
    w.script.on('f', command('sleep 2 && echo late > late.txt'), { text: 'f done' });
    const fork = await w.t.h.forkSession(child, lastTurnEnd(await eventsOf(w.t.h, child)));
    const sent = w.t.h.send(fork.id, '[[f]] slow');
    await waitFor(() => fork.activity === 'running', 'the fork to run');
    await assert.rejects(w.t.h.worktrees.apply(child), (e: Error & { code?: string }) => {
      assert.equal(e.code, 'NOT_OPEN');
      assert.match(e.message, /still working in this worktree; wait until it settles, or stop it first/);
      return true;
    });
    await assert.rejects(w.t.h.worktrees.discard(child), /still working in this worktree/);
    await sent;
    await w.t.h.settle();
    // Nothing lost: what the fork wrote while the apply waited is applied with the child's work.
    const out = await w.t.h.worktrees.apply(child);
    assert.deepEqual(out.applied && [...out.files].sort(), ['c.txt', 'late.txt']);
    assert.equal(read(path.join(w.ws, 'late.txt')), 'late\n');

    const before = (await eventsOf(w.t.h, fork.id)).length;
    await assert.rejects(w.t.h.send(fork.id, '[[f]] again'), (e: Error & { code?: string }) => {
      assert.equal(e.code, 'WORKTREE_CLOSED');
      assert.match(e.message, /was applied: its changes are in your checkout now.*start a new conversation in your checkout.*not sent/);
      return true;
    });
    assert.equal((await eventsOf(w.t.h, fork.id)).length, before, 'the refused message left nothing half-done');
    await assert.rejects(w.t.h.forkSession(fork.id, lastTurnEnd(await eventsOf(w.t.h, fork.id))), (e: Error & { code?: string }) => {
      assert.equal(e.code, 'WORKTREE_CLOSED');
      assert.match(e.message, /A fork would have no folder to work in, so none was made/);
      return true;
    });
    await assert.rejects(w.t.h.forkSession(child, lastTurnEnd(await eventsOf(w.t.h, child))), /was applied/);
  });
});

describe('a fork of a worktree child under full-access (decision 0126)', () => {
  const w = worktreeWorld({ sandbox: 'full-access' });

  it('is clamped to workspace-write: the checkout stays read-only to it', async () => {
    const child = await childThatRan(w, 'echo from-child > c.txt');
    w.script.on('f', command(`echo HACK > ${path.join(w.ws, 'planted.txt')}`), { text: 'f done' });
    const fork = await w.t.h.forkSession(child, lastTurnEnd(await eventsOf(w.t.h, child)));
    await w.t.h.send(fork.id, '[[f]] try');
    await w.t.h.settle();
    assert.equal(exists(path.join(w.ws, 'planted.txt')), false);
    const own = (await results(w, fork.id)).at(-1)!;
    assert.equal(own.isError, true);
    assert.match(own.content, /Read-only file system/);
  });
});
