// A Stop of a conversation's subtree while its "Try N ways" are still being made (their
// worktrees, logs, publish): the ways made after it must make no request, and each keeps the
// user's message queued, paused, until "Send now" (decision 0100, amended in session 47).
import assert from 'node:assert/strict';
import { ofType } from '../subagent/helpers';
import { worktreeWorld } from '../worktree/fixture';

describe('Best of N: a Stop of the source while its ways are being made', () => {
  const w = worktreeWorld();

  it('every way made after the Stop is kept paused with the message queued, and makes no request', async () => {
    w.server.setFallback((body) => ({ text: `answer from ${body.model}` }));
    await w.root.accept('rewrite a.txt', { kind: 'user' });
    await w.t.h.settle();
    const seq = ofType(w.root.session.events, 'user/message')[0].seq;
    const before = w.server.requests.length;
    const started = w.t.h.bestOf.start(w.root.session.header.id, seq, { ways: [{ model: 'model-a' }, { model: 'model-b' }, { model: 'model-c' }] });
    // The Stop lands while the ways' worktrees are being made (before any is published).
    const stopped = w.t.h.interruptSubtree(w.root.session.header.id);
    const { ways } = await started;
    await stopped;
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(
      w.server.requests.slice(before).map((r) => r.body.model),
      [],
      'a way made after the Stop asked the model',
    );
    for (const id of ways) {
      const way = w.t.h.resident(id);
      assert.ok(way, `${id} is resident`);
      assert.equal(way.isPaused, true, `${id} is paused`);
      assert.deepEqual(
        way.queue.map((q) => q.text),
        ['rewrite a.txt'],
        `${id} keeps the message`,
      );
    }
    // "Send now" on one way runs it.
    await w.t.h.runQueue(ways[0]);
    await w.t.h.settle();
    assert.deepEqual(
      w.server.requests.slice(before).map((r) => r.body.model),
      ['model-a'],
    );
  });
});
