import assert from 'node:assert/strict';
import { InboxError } from '../../../src/core/agent/inbox-error';
import { Harness } from '../../../src/core/harness';
import { harnessPerTest, until } from '../../support/harness';

const SLOW = { text: 'w'.repeat(400), chunkSize: 2, chunkDelayMs: 5 };
const sentTexts = (requests: { body: { messages: { content?: unknown }[] } }[]) => requests.flatMap((r) => r.body.messages.map((m) => String(m.content ?? '')));

describe('agent: withdrawing a queued message', () => {
  const w = harnessPerTest();

  it('a message withdrawn while queued behind a running turn never runs', async () => {
    w.server.enqueue(SLOW, { text: 'answer to the kept one' });
    const agent = await w.t.h.createSession();
    await agent.accept('first');
    await until(() => agent.activity === 'running');
    const dropped = await agent.accept('DROPPED please do not run');
    const kept = await agent.accept('KEPT run me');
    assert.deepEqual(
      agent.queue.map((m) => m.text),
      ['DROPPED please do not run', 'KEPT run me'],
    );
    assert.equal(agent.isWaiting, false, 'queued behind a running turn is not waiting');
    await agent.withdraw(dropped);
    assert.deepEqual(
      agent.queue.map((m) => m.messageId),
      [kept],
    );
    await w.t.h.settle();
    const texts = sentTexts(w.server.requests);
    assert.ok(texts.includes('KEPT run me'));
    assert.ok(!texts.some((t) => t.includes('DROPPED')), 'the withdrawn message never reached the model');
    const users = agent.session.events.filter((e) => e.type === 'user/message').map((e) => e.type === 'user/message' && e.text);
    assert.deepEqual(users, ['first', 'KEPT run me']);
  });

  it('is durable: after an interrupt and a restart, the withdrawn message does not run and the kept one does once sent', async () => {
    w.server.enqueue(SLOW);
    const agent = await w.t.h.createSession();
    await agent.accept('long one');
    await until(() => agent.activity === 'running');
    const a = await agent.accept('AAA withdrawn before the restart');
    await agent.accept('BBB kept across the restart');
    await agent.cancel('interrupted', { keepInbox: true });
    await agent.idle();
    assert.equal(agent.isWaiting, true, 'after an interrupt the kept messages wait for the human');
    await agent.withdraw(a);
    const id = agent.id;
    const { storeDir, workspace } = w.t;
    await w.t.h.close();
    w.server.reset();
    w.server.enqueue({ text: 'ran BBB' });
    const h2 = await Harness.open({ ...w.t.h.config, storeDir, workspace: [workspace] });
    try {
      const back = await h2.openSession(id);
      await h2.settle();
      // The Stop kept it: it waits for the human across the restart (decision 0011, amended), then "Send now".
      assert.equal(w.server.requests.length, 0, 'nothing ran by itself after the restart');
      assert.equal(back.isWaiting, true);
      back.resume();
      await h2.settle();
      const texts = sentTexts(w.server.requests);
      assert.equal(w.server.requests.length, 1);
      assert.ok(texts.includes('BBB kept across the restart'));
      assert.ok(!texts.some((t) => t.includes('AAA')), 'the withdrawn message never ran after the restart');
      assert.deepEqual(back.queue, []);
      assert.ok(back.session.events.some((e) => e.type === 'inbox/withdrawn' && e.messageId === a));
    } finally {
      await h2.close();
    }
  });

  it('refuses with a clear code: ALREADY_CLAIMED, ALREADY_WITHDRAWN, UNKNOWN_MESSAGE', async () => {
    w.server.enqueue(SLOW);
    const agent = await w.t.h.createSession();
    const running = await agent.accept('running now');
    await until(() => agent.activity === 'running' && agent.inboxSize === 0);
    await assert.rejects(
      agent.withdraw(running),
      (e: unknown) => e instanceof InboxError && e.code === 'ALREADY_CLAIMED' && /interrupt the turn instead/.test(e.message),
    );
    const q = await agent.accept('queued');
    await agent.withdraw(q);
    await assert.rejects(agent.withdraw(q), (e: unknown) => e instanceof InboxError && e.code === 'ALREADY_WITHDRAWN');
    await assert.rejects(agent.withdraw('no-such-id'), (e: unknown) => e instanceof InboxError && e.code === 'UNKNOWN_MESSAGE');
    await agent.cancel();
    await agent.idle();
  });

  it('resume() after an interrupt runs the kept queue in order (the "Send now" path)', async () => {
    w.server.enqueue(SLOW, { text: 'one' }, { text: 'two' });
    const agent = await w.t.h.createSession();
    await agent.accept('long');
    await until(() => w.server.requests.length === 1);
    await agent.accept('Q1');
    await agent.accept('Q2');
    await agent.cancel('interrupted', { keepInbox: true });
    await agent.idle();
    assert.equal(agent.isWaiting, true);
    assert.equal(w.server.requests.length, 1, 'nothing ran on its own after the interrupt');
    agent.resume();
    await w.t.h.settle();
    const users = agent.session.events.filter((e) => e.type === 'user/message').map((e) => e.type === 'user/message' && e.text);
    assert.deepEqual(users, ['long', 'Q1', 'Q2']);
    assert.equal(agent.isWaiting, false);
  });
});
