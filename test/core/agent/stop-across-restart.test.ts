import assert from 'node:assert/strict';
import { CRASHED_DURING_TURN } from '../../../src/core/agent/agent';
import { SessionWriter } from '../../../src/core/agent/session-writer';
import { Harness } from '../../../src/core/harness';
import { harnessPerTest, until } from '../../support/harness';

// "Stop means stop" across a restart (decision 0011, amended in session 48): messages a human's
// Stop kept wait for that human after the window reloads or the CLI opens the conversation
// again; they ran by themselves at the first open before. Messages promised otherwise — queued
// behind a turn a crash ended, or sent to the waiting conversation — still run.

const SLOW = { text: 'w'.repeat(400), chunkSize: 2, chunkDelayMs: 5 };

describe('agent: what a Stop kept waits across a restart', () => {
  const w = harnessPerTest();

  async function reopen(): Promise<Harness> {
    await w.t.h.close();
    return Harness.open({ ...w.t.h.config });
  }

  async function stoppedWithQueue(): Promise<{ id: string; kept: string }> {
    w.server.enqueue(SLOW);
    const agent = await w.t.h.createSession();
    await agent.accept('long one');
    await until(() => agent.activity === 'running');
    await agent.accept('KEPT after the Stop');
    await agent.cancel('interrupted', { keepInbox: true });
    await agent.idle();
    assert.equal(agent.isWaiting, true);
    return { id: agent.id, kept: 'KEPT after the Stop' };
  }

  it('a reopened conversation runs nothing by itself; its kept message waits, then runs on "Send now"', async () => {
    const { id } = await stoppedWithQueue();
    const h2 = await reopen();
    try {
      w.server.reset();
      const back = await h2.openSession(id);
      await h2.settle();
      await new Promise((r) => setTimeout(r, 100));
      assert.equal(w.server.requests.length, 0, 'a kept message reached the model by itself after the restart');
      assert.equal(back.isWaiting, true, 'the conversation says it waits for the human');
      assert.equal((await h2.viewOf(id)).status, 'interrupted', 'the tree shows it stopped, not running');
      w.server.enqueue({ text: 'ran it' });
      back.resume();
      await h2.settle();
      assert.equal(w.server.requests.length, 1);
      assert.equal(back.queue.length, 0);
    } finally {
      await h2.close();
    }
  });

  // s59: "Send now" (runQueue) on a conversation not in memory opened it, which kept the queue
  // waiting (it was the Stop's), and ran nothing: the human's click was lost.
  it('"Send now" on a conversation not yet opened after the restart runs its kept message', async () => {
    const { id, kept } = await stoppedWithQueue();
    const h2 = await reopen();
    try {
      w.server.reset();
      w.server.enqueue({ text: 'ran it' });
      assert.equal(h2.resident(id), undefined, 'not in memory yet');
      await h2.runQueue(id);
      await h2.settle();
      assert.equal(w.server.requests.length, 1, '"Send now" ran the kept message');
      assert.match(JSON.stringify(w.server.requests[0].body.messages), new RegExp(kept));
      assert.equal(h2.resident(id)?.queue.length, 0);
    } finally {
      await h2.close();
    }
  });

  it('a new message to the reopened conversation runs the kept one first, then itself (FIFO)', async () => {
    const { id } = await stoppedWithQueue();
    const h2 = await reopen();
    try {
      w.server.reset();
      w.server.enqueue({ text: 'one' }, { text: 'two' });
      const back = await h2.openSession(id);
      await back.accept('NEW after the restart');
      await h2.settle();
      const lastUser = (i: number) => {
        const m = w.server.requests[i].body.messages.filter((x) => x.role === 'user');
        return String(m[m.length - 1].content);
      };
      assert.equal(w.server.requests.length, 2);
      assert.equal(lastUser(0), 'KEPT after the Stop');
      assert.equal(lastUser(1), 'NEW after the restart');
    } finally {
      await h2.close();
    }
  });

  it('messages queued behind a turn a crash ended still run at the next open (they were promised, no one stopped them)', async () => {
    const agent = await w.t.h.createSession();
    const id = agent.id;
    // What a kill -9 mid-turn leaves: an open turn, a message queued behind it.
    const writer = new SessionWriter(await w.t.h.store.inspect(id), w.t.h.store);
    await writer.append({ type: 'inbox/accepted', messageId: 'm1', text: 'first', source: { kind: 'user' } });
    await writer.append({ type: 'inbox/claimed', messageId: 'm1' });
    await writer.append({ type: 'turn/start', turnId: 't1' });
    await writer.append({ type: 'user/message', text: 'first', source: { kind: 'user' } });
    await writer.append({ type: 'inbox/accepted', messageId: 'm2', text: 'QUEUED before the crash', source: { kind: 'user' } });
    await agent.dispose();
    const h2 = await reopen();
    try {
      w.server.reset();
      w.server.enqueue({ text: 'ran it' });
      const back = await h2.openSession(id);
      await h2.settle();
      const end = back.session.events.find((e) => e.type === 'turn/end');
      assert.ok(end?.type === 'turn/end' && end.error === CRASHED_DURING_TURN, 'recovery closed the crashed turn');
      assert.equal(w.server.requests.length, 1, 'the queued message ran');
      assert.equal(back.queue.length, 0);
    } finally {
      await h2.close();
    }
  });
});
