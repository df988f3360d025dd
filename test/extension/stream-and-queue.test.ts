import assert from 'node:assert/strict';
import { PartialReplies } from '../../src/extension/presenter/partial-replies';
import { FakePort } from '../support/fake-port';
import { until } from '../support/harness';
import type { ModelServer } from '../support/model-server';
import { PANEL_SETTINGS, panelPerTest } from '../support/panel';

const FULL = 'Partial replies are part of the snapshot: every word streamed so far, then the rest as deltas. '.repeat(4);
const sentTexts = (server: ModelServer) => server.requests.flatMap((r) => r.body.messages.map((m) => String(m.content ?? '')));

describe('extension: a view that opens a session mid-stream, and queued messages', () => {
  const w = panelPerTest({ panel: false, settings: { ...PANEL_SETTINGS, approval: 'never' }, harness: { approval: 'never' } });

  it('a transcript tab and a panel opened mid-stream get the partial reply in the reset, then deltas without duplication', async () => {
    const sender = await w.view('panel');
    w.server.enqueue({ text: FULL, reasoning: 'Thinking it over first.', chunkSize: 4, chunkDelayMs: 4 });
    await w.c.receive(sender, { type: 'chat/send', id: 'r1', text: 'talk slowly' });
    const id = sender.sessionOf('r1');
    await until(
      () =>
        sender
          .of('stream/delta')
          .filter((d) => d.kind === 'text')
          .map((d) => d.delta)
          .join('').length > 40,
    );

    // A transcript tab opens now: its reset holds what was said so far.
    const tab = await w.view('transcript', id);
    // A second panel selects the session a little later.
    await new Promise((r) => setTimeout(r, 30));
    const panel = await w.view('panel');
    await w.c.receive(panel, { type: 'session/select', sessionId: id });
    await w.t.h.settle();
    await until(
      () =>
        tab.of('transcript/append').some((m) => m.entries.some((e) => e.kind === 'assistant')) &&
        panel.of('transcript/append').some((m) => m.entries.some((e) => e.kind === 'assistant')),
    );

    for (const [name, port] of [
      ['tab', tab],
      ['panel', panel],
    ] as const) {
      const reset = port
        .of('transcript/reset')
        .filter((m) => m.sessionId === id)
        .pop()!;
      assert.ok(reset.partial && reset.partial.text.length > 40, `${name}: the reset carries the text streamed so far`);
      assert.equal(reset.partial.reasoning, 'Thinking it over first.', `${name}: and the reasoning`);
      assert.ok(FULL.startsWith(reset.partial.text) && reset.partial.text.length < FULL.length, `${name}: a true prefix of the reply`);
      assert.ok(reset.entries.some((e) => e.kind === 'user' && e.text === 'talk slowly'));
      // Everything after the reset continues the partial exactly: no word lost, none twice.
      const after = port.got.slice(port.got.indexOf(port.got.find((m) => m === reset)!) + 1);
      const more = after
        .filter((m) => m.type === 'stream/delta' && m.kind === 'text')
        .map((m) => (m.type === 'stream/delta' ? m.delta : ''))
        .join('');
      assert.equal(reset.partial.text + more, FULL, `${name}: partial + later deltas = the whole reply`);
    }

    // Once the message is logged, the partial is gone: a fresh view sees the entry and no partial.
    const late = await w.view('transcript', id);
    const reset = late.of('transcript/reset')[0];
    assert.equal(reset.partial, undefined);
    assert.ok(reset.entries.some((e) => e.kind === 'assistant' && e.text === FULL));
  });

  it('the partial of an interrupted reply is dropped with its turn', async () => {
    const port = new FakePort('panel');
    w.c.connect(port);
    w.server.enqueue({ text: FULL, chunkSize: 2, chunkDelayMs: 10 });
    await w.c.receive(port, { type: 'chat/send', id: 'r1', text: 'go' });
    const id = port.sessionOf('r1');
    await until(() => port.of('stream/delta').length > 2);
    await w.c.receive(port, { type: 'agent/interrupt', id: 'r2', sessionId: id });
    await w.t.h.settle();
    await w.c.receive(port, { type: 'session/select', sessionId: id });
    const reset = port.of('transcript/reset').pop()!;
    assert.equal(reset.partial, undefined, 'what streamed is in the logged (interrupted) message, not a partial');
    assert.ok(reset.entries.some((e) => e.kind === 'assistant' && e.text.length > 0 && FULL.startsWith(e.text)));
  });

  it('keeps a partial bounded: the newest text, its clipped head marked', () => {
    const p = new PartialReplies(10);
    p.push('s', 'text', 'abcdefgh');
    p.push('s', 'text', 'ijkl');
    assert.deepEqual(p.get('s'), { text: '…cdefghijkl', reasoning: '' });
    p.apply('s', { seq: 3, type: 'assistant/message', at: new Date().toISOString(), text: 'abcdefghijkl', model: 'm' });
    assert.equal(p.get('s'), undefined);
    assert.equal(p.size, 0);
  });

  it('shows a message sent to a busy agent as queued; cancelling it removes it and it never runs', async () => {
    const port = new FakePort('panel');
    w.c.connect(port);
    w.server.enqueue({ text: 'b'.repeat(300), chunkSize: 2, chunkDelayMs: 5 }, { text: 'answer to the kept one' });
    await w.c.receive(port, { type: 'chat/send', id: 'r1', text: 'busy work' });
    const id = port.sessionOf('r1');
    await until(() => w.t.h.resident(id)?.activity === 'running' && w.t.h.resident(id)!.inboxSize === 0);
    await w.c.receive(port, { type: 'chat/send', id: 'r2', sessionId: id, text: 'CANCEL-ME' });
    await w.c.receive(port, { type: 'chat/send', id: 'r3', sessionId: id, text: 'KEEP-ME' });
    await until(() => port.of('queue/changed').some((q) => q.messages.length === 2));
    const queued = port
      .of('queue/changed')
      .filter((q) => q.messages.length === 2)
      .pop()!;
    assert.equal(queued.state, 'queued');
    assert.deepEqual(
      queued.messages.map((m) => [m.text, m.source]),
      [
        ['CANCEL-ME', 'user'],
        ['KEEP-ME', 'user'],
      ],
    );

    await w.c.receive(port, { type: 'queue/withdraw', id: 'r4', sessionId: id, messageId: queued.messages[0].messageId });
    assert.equal(port.done('r4')?.ok, true);
    const afterCancel = port.of('queue/changed').pop()!;
    assert.deepEqual(
      afterCancel.messages.map((m) => m.text),
      ['KEEP-ME'],
    );
    await w.t.h.settle();
    await until(() => port.of('queue/changed').pop()!.messages.length === 0);
    const texts = sentTexts(w.server);
    assert.ok(texts.includes('KEEP-ME'));
    assert.ok(!texts.includes('CANCEL-ME'), 'the cancelled message never reached the model');
    // Cancelling one that already ran is refused in words.
    await w.c.receive(port, { type: 'queue/withdraw', id: 'r5', sessionId: id, messageId: queued.messages[1].messageId });
    const refused = port.done('r5');
    assert.ok(refused && !refused.ok && /already started running/.test(refused.error));
  });

  it('a message to an idle conversation is the turn that opens: never listed as queued behind one', async () => {
    const port = new FakePort('panel');
    w.c.connect(port);
    w.server.enqueue({ text: 'first answer' }, { text: 'second answer' });
    await w.c.receive(port, { type: 'chat/send', id: 'r1', text: 'ONE' });
    const id = port.sessionOf('r1');
    await w.t.h.settle();
    await w.c.receive(port, { type: 'chat/send', id: 'r2', sessionId: id, text: 'TWO' });
    await w.t.h.settle();
    assert.deepEqual(w.t.h.resident(id)!.session.events.filter((e) => e.type === 'assistant/message').length, 2, 'both ran');
    const listed = port.of('queue/changed').flatMap((q) => q.messages.map((m) => m.text));
    assert.deepEqual(listed, [], 'no "Queued (1) — Runs after the current turn" for a message that is that turn');
  });

  it('after an interrupt the kept messages wait; a new message queues behind them; Send now runs them in order', async () => {
    const port = new FakePort('panel');
    w.c.connect(port);
    w.server.enqueue({ text: 'c'.repeat(400), chunkSize: 2, chunkDelayMs: 5 });
    await w.c.receive(port, { type: 'chat/send', id: 'r1', text: 'long work' });
    const id = port.sessionOf('r1');
    await until(() => w.server.requests.length === 1);
    await w.c.receive(port, { type: 'chat/send', id: 'r2', sessionId: id, text: 'WAITING-ONE' });
    await w.c.receive(port, { type: 'agent/interrupt', id: 'r3', sessionId: id });
    await w.t.h.settle();
    await until(() => port.of('queue/changed').pop()!.state === 'waiting');
    const waiting = port.of('queue/changed').pop()!;
    assert.deepEqual(
      waiting.messages.map((m) => m.text),
      ['WAITING-ONE'],
    );
    assert.equal(w.server.requests.length, 1, 'nothing ran on its own');

    // A view selecting the session now sees the waiting message at once.
    const other = await w.view('transcript', id);
    assert.deepEqual(other.of('queue/changed').pop(), waiting);

    w.server.enqueue({ text: 'ran the waiting one' });
    await w.c.receive(port, { type: 'queue/run', id: 'r4', sessionId: id });
    assert.equal(port.done('r4')?.ok, true);
    await w.t.h.settle();
    const users = w.t.h
      .resident(id)!
      .session.events.filter((e) => e.type === 'user/message')
      .map((e) => (e.type === 'user/message' ? e.text : ''));
    assert.deepEqual(users, ['long work', 'WAITING-ONE']);
    await until(() => port.of('queue/changed').pop()!.messages.length === 0);

    // Interrupt again with a kept message, then send a new one: the waiting one goes first.
    w.server.enqueue({ text: 'd'.repeat(400), chunkSize: 2, chunkDelayMs: 5 });
    await w.c.receive(port, { type: 'chat/send', id: 'r5', sessionId: id, text: 'long again' });
    await until(() => w.server.requests.length === 3);
    await w.c.receive(port, { type: 'chat/send', id: 'r6', sessionId: id, text: 'KEPT-FIRST' });
    await w.c.receive(port, { type: 'agent/interrupt', id: 'r7', sessionId: id });
    await w.t.h.settle();
    w.server.enqueue({ text: 'first' }, { text: 'second' });
    await w.c.receive(port, { type: 'chat/send', id: 'r8', sessionId: id, text: 'NEW-AFTER' });
    await w.t.h.settle();
    const order = w.t.h
      .resident(id)!
      .session.events.filter((e) => e.type === 'user/message')
      .map((e) => (e.type === 'user/message' ? e.text : ''))
      .slice(-3);
    assert.deepEqual(order, ['long again', 'KEPT-FIRST', 'NEW-AFTER']);
  });

  it('Send now wakes an interrupted child even after it was released (cold resume runs its kept queue)', async () => {
    const port = new FakePort('panel');
    w.c.connect(port);
    const root = await w.t.h.createSession();
    w.server.enqueue({ text: 'e'.repeat(400), chunkSize: 2, chunkDelayMs: 5 });
    const { childId } = await w.t.h.subagents.startContinuable(root, 'spawn', { prompt: 'work slowly' });
    await until(() => w.server.requests.length === 1);
    await w.c.receive(port, { type: 'session/select', sessionId: childId });
    await w.c.receive(port, { type: 'chat/send', id: 'r1', sessionId: childId, text: 'CHILD-KEPT' });
    await w.c.interrupt(childId);
    await until(() => w.t.h.resident(childId) === undefined, 10_000); // released after its (short) delay
    await until(() => port.of('queue/changed').some((q) => q.state === 'waiting' && q.messages.some((m) => m.text === 'CHILD-KEPT')));
    w.server.enqueue({ text: 'child ran it' }, { text: 'noted' }, { text: 'noted' }, { text: 'noted' });
    await w.c.receive(port, { type: 'queue/run', id: 'r2', sessionId: childId });
    assert.equal(port.done('r2')?.ok, true, JSON.stringify(port.done('r2')));
    await w.t.h.settle();
    assert.ok(
      sentTexts(w.server).some((x) => x.includes('CHILD-KEPT')),
      'the kept message ran in the resumed child',
    );
  });

  it('rejects malformed queue messages', async () => {
    const port = new FakePort('panel');
    w.c.connect(port);
    await w.c.receive(port, { type: 'queue/withdraw', id: 'x', sessionId: 's' });
    await w.c.receive(port, { type: 'queue/run', id: 'x' });
    await w.c.receive(port, { type: 'queue/withdraw', id: 'x', sessionId: 's', messageId: '../etc' });
    assert.equal(port.of('message/rejected').length, 3);
  });
});
