import assert from 'node:assert/strict';
import { FakePort } from '../support/fake-port';
import { until } from '../support/harness';
import { PANEL_SETTINGS, panelPerTest } from '../support/panel';

describe('extension: panel controller over a real harness', () => {
  const w = panelPerTest({ panel: false });

  it('answers ready with a snapshot, then streams a conversation as deltas', async () => {
    const port = await w.view('panel');
    const snap = port.of('state/snapshot')[0];
    assert.deepEqual(snap.nodes, []);
    assert.deepEqual(snap.settings, PANEL_SETTINGS);

    w.server.enqueue({ text: 'Hello there, streamed in small pieces.', chunkSize: 3, chunkDelayMs: 2 });
    await w.c.receive(port, { type: 'chat/send', id: 'r1', text: 'hi' });
    const id = port.sessionOf('r1');
    await w.t.h.settle();
    await until(() => port.of('transcript/append').some((m) => m.entries.some((e) => e.kind === 'turn' && e.phase === 'end')));
    const entries = port.of('transcript/append').flatMap((m) => m.entries);
    assert.deepEqual(
      entries.map((e) => e.kind),
      ['turn', 'user', 'assistant', 'turn'],
    );
    const deltas = port
      .of('stream/delta')
      .map((d) => d.delta)
      .join('');
    assert.ok('Hello there, streamed in small pieces.'.startsWith(deltas) && deltas.length > 0, 'streamed text arrived before the message');
    assert.ok(port.of('stream/delta').length < 13, 'deltas are coalesced, not one message per chunk');
    const last = port.node(id)!;
    assert.equal(last.status, 'idle');
    assert.ok(last.tokens.prompt > 0);
  });

  it('offers Retry for a failed turn: the same message is sent again and answered', async () => {
    const port = await w.view('panel');
    w.server.enqueue({ fault: { kind: 'status', status: 401, message: 'bad key' } }, { text: 'Now it works.' });
    await w.c.receive(port, { type: 'chat/send', id: 'r1', text: 'please answer' });
    const id = port.sessionOf('r1');
    await w.t.h.settle();
    const end = [...w.t.h.resident(id)!.session.events].reverse().find((e) => e.type === 'turn/end')!;
    assert.ok(end.type === 'turn/end' && end.stopReason === 'error');
    await w.c.receive(port, { type: 'chat/retry', id: 'r2', sessionId: id, seq: end.seq });
    assert.equal(port.sessionOf('r2'), id);
    await w.t.h.settle();
    const last = w.server.requests[w.server.requests.length - 1].body.messages;
    assert.equal(last[last.length - 1].content, 'please answer');
    const texts = w.t.h.resident(id)!.session.events.flatMap((e) => (e.type === 'assistant/message' ? [e.text] : []));
    assert.deepEqual(texts, ['Now it works.']);
    // Retry of something that is not a failed turn says why, in words.
    await w.c.receive(port, { type: 'chat/retry', id: 'r3', sessionId: id, seq: 0 });
    const bad = port.of('request/done').find((m) => m.id === 'r3');
    assert.ok(bad && !bad.ok && /nothing to retry/.test(bad.error), JSON.stringify(bad));
  });

  it("runs a notice's command through the host (Set API Key from the banner)", async () => {
    const port = new FakePort('panel');
    w.c.connect(port);
    await w.c.receive(port, { type: 'command/run', command: 'setApiKey' });
    await w.c.receive(port, { type: 'command/run', command: 'openModelSettings' });
    await w.c.receive(port, { type: 'command/run', command: 'workbench.action.quit' });
    assert.deepEqual(w.commandsRun, ['setApiKey', 'openModelSettings']);
    assert.equal(port.of('message/rejected').length, 1, 'a command outside the list is refused');
  });

  it('rejects malformed messages with an error reply and keeps working', async () => {
    const port = new FakePort('panel');
    w.c.connect(port);
    for (const bad of [null, 'x', { type: 'nope' }, { type: 'chat/send', id: 'r', text: '' }, { type: 'session/fork', id: 'r', sessionId: '../x', seq: 1 }]) {
      await w.c.receive(port, bad);
    }
    assert.equal(port.of('message/rejected').length, 5);
    assert.ok(w.logs.filter((l) => l.startsWith('warn rejected')).length === 5);
    await w.c.receive(port, { type: 'session/select', sessionId: 'unknown-id' });
    assert.ok(w.logs.some((l) => l.startsWith('error session/select failed')));
  });

  it('routes approvals to every view, tagged with the asking session; the first answer wins', async () => {
    w.t.h.setDefaults({ sandbox: 'workspace-write' });
    const a = new FakePort('panel');
    const b = new FakePort('transcript');
    w.c.connect(a);
    w.c.connect(b);
    w.server.enqueue({ toolCalls: [{ name: 'run_command', arguments: { command: 'echo approved-run', outsideSandbox: true } }] }, { text: 'ran it' });
    await w.c.receive(a, { type: 'chat/send', id: 'r1', text: 'run echo' });
    await until(() => a.of('approval/requested').length === 1);
    const prompt = a.of('approval/requested')[0].prompt;
    assert.equal(b.of('approval/requested')[0].prompt.requestId, prompt.requestId);
    assert.deepEqual(prompt.lineage, [prompt.sessionId]);
    assert.match(prompt.summary, /echo approved-run/);
    assert.equal(a.node(prompt.sessionId)!.activity, 'waiting for approval');
    await w.c.receive(b, { type: 'approval/answer', requestId: prompt.requestId, decision: 'allow' });
    await w.c.receive(a, { type: 'approval/answer', requestId: prompt.requestId, decision: 'deny' }); // too late: ignored
    await w.t.h.settle();
    assert.deepEqual(
      a.of('approval/resolved').map((m) => m.decision),
      ['allow'],
    );
    const result = w.t.h.resident(prompt.sessionId)!.session.events.find((e) => e.type === 'tool/result');
    assert.ok(result && result.type === 'tool/result' && !result.isError && /approved-run/.test(result.content));
  });

  it('forks from a message: a new session seeded to the end of that turn, selected in the view', async () => {
    const port = new FakePort('panel');
    w.c.connect(port);
    w.server.enqueue({ text: 'first answer' }, { text: 'second answer' });
    await w.c.receive(port, { type: 'chat/send', id: 'r1', text: 'one' });
    const id = port.sessionOf('r1');
    await w.t.h.settle();
    await w.c.receive(port, { type: 'chat/send', id: 'r2', sessionId: id, text: 'two' });
    await w.t.h.settle();
    const firstAssistant = w.t.h.resident(id)!.session.events.find((e) => e.type === 'assistant/message')!;
    await w.c.receive(port, { type: 'session/fork', id: 'r3', sessionId: id, seq: firstAssistant.seq });
    const forkId = port.sessionOf('r3');
    const header = w.t.h.store.header(forkId)!;
    assert.equal(header.origin, 'fork');
    assert.equal(header.parentSession, id);
    const forkSession = w.t.h.resident(forkId)!.session;
    assert.deepEqual(
      forkSession.deriveMessages().map((m) => m.content),
      ['one', 'first answer'],
      'seeded up to the end of that turn only',
    );
    assert.ok(port.of('session/selected').some((m) => m.sessionId === forkId));
    // The fork is in the tree before it is selected (it has no event of its own yet).
    const nodeAt = port.got.findIndex((m) => m.type === 'tree/node' && m.node.id === forkId);
    const selectedAt = port.got.findIndex((m) => m.type === 'session/selected' && m.sessionId === forkId);
    assert.ok(nodeAt >= 0 && nodeAt < selectedAt, 'a tree/node for the fork precedes its selection');
    const node = port.of('tree/node').find((m) => m.node.id === forkId)!.node;
    assert.equal(node.origin, 'fork');
    assert.equal(node.parentId, id);
    assert.deepEqual(node.tokens, { prompt: 0, completion: 0, cacheHit: 0 }, "the parent's seed is not the fork's usage");
    const reset = port
      .of('transcript/reset')
      .filter((m) => m.sessionId === forkId)
      .pop()!;
    assert.ok(reset.entries.some((e) => e.kind === 'marker'));
    // Chatting with the fork reuses the parent's prefix at the provider.
    w.server.enqueue({ text: 'fork answer' });
    await w.c.receive(port, { type: 'chat/send', id: 'r4', sessionId: forkId, text: 'three' });
    await w.t.h.settle();
    assert.ok(w.server.requests[w.server.requests.length - 1].cacheHitTokens > 0);
  });

  it('interrupts a running session from the view and shows it in the tree', async () => {
    const port = new FakePort('panel');
    w.c.connect(port);
    w.server.enqueue({ text: 'x'.repeat(500), chunkSize: 2, chunkDelayMs: 5 });
    await w.c.receive(port, { type: 'chat/send', id: 'r1', text: 'long' });
    const id = port.sessionOf('r1');
    await until(() => port.of('tree/node').some((m) => m.node.id === id && m.node.status === 'running'));
    await w.c.receive(port, { type: 'agent/interrupt', id: 'r2', sessionId: id });
    await w.t.h.settle();
    await until(() => port.node(id)!.status === 'interrupted');
  });

  it('pages a long transcript backwards', async () => {
    const port = new FakePort('panel');
    w.c.connect(port);
    const agent = await w.t.h.createSession();
    for (let i = 0; i < 120; i++) {
      w.server.enqueue({ text: `a${i}` });
      await agent.accept(`q${i}`);
      await agent.idle();
    }
    await w.c.receive(port, { type: 'session/select', sessionId: agent.id });
    const reset = port.of('transcript/reset')[0];
    assert.equal(reset.entries.length, 200);
    assert.equal(reset.hasMore, true);
    await w.c.receive(port, { type: 'transcript/more', id: 'p1', sessionId: agent.id, beforeSeq: reset.entries[0].seq });
    const pg = port.done('p1');
    assert.ok(pg?.ok && 'entries' in pg, JSON.stringify(pg));
    assert.ok(pg.entries.length > 0 && pg.entries[pg.entries.length - 1].seq < reset.entries[0].seq);
    assert.equal(pg.sessionId, agent.id);
  });

  it("a panel's selection crossing the host's: both end on one session, and the panel is sent what it shows", async () => {
    // After a reload the panel restored the session it showed before (session/select) while the
    // host, for a message sent from the draft, created and selected a new conversation
    // (session/selected): the two crossed. The panel shows what the host told it last; its port
    // must be on that session, or its reply and the queue's update go to no view.
    const port = await w.view('panel');
    await w.c.receive(port, { type: 'chat/send', id: 'r0', text: 'the first conversation' });
    const first = port.sessionOf('r0');
    await w.t.h.settle();
    await w.c.receive(port, { type: 'session/new', id: 'r1' });
    w.server.enqueue({ text: 'Hello from the new conversation.' });
    const sending = w.c.receive(port, { type: 'chat/send', id: 'r2', text: 'a new conversation' });
    await until(() => port.of('session/selected').some((m) => m.sessionId !== first));
    // The panel chose `first` before it heard of the new one: its message arrives now.
    await w.c.receive(port, { type: 'session/select', sessionId: first });
    await sending;
    await w.t.h.settle();
    const shown = port.of('session/selected').at(-1)?.sessionId;
    assert.equal(shown, port.sessionId, 'the panel shows the session its port follows');
    assert.equal(shown, first, "the panel's choice, made last, wins");
    // What it shows is whole: the last reset of that session came after the last selection.
    const selectedAt = port.got.lastIndexOf(port.of('session/selected').at(-1)!);
    assert.ok(port.got.slice(selectedAt).some((m) => m.type === 'transcript/reset' && m.sessionId === first));
    // The new conversation ran: a message is never left queued behind a turn that ended.
    const other = port.sessionOf('r2');
    assert.equal(w.t.h.resident(other)!.queue.length, 0);
    assert.equal(port.node(other)?.status, 'idle');
  });
});

describe('extension: deleting a session from the panel', () => {
  const w = panelPerTest({ panel: false, harness: { approval: 'never', releaseDelayMs: 60_000 } });

  it('removes the subtree, releases a resident child without a notice, and refuses a running session', async () => {
    const port = await w.view('panel');
    const root = await w.t.h.createSession();
    w.server.enqueue({ text: 'child answer' });
    const { childId } = await w.t.h.subagents.startContinuable(root, 'spawn', { prompt: 'stay resident' });
    await until(() => w.t.h.resident(childId)?.isSettled === true && w.t.h.resident(childId)!.session.events.some((e) => e.type === 'turn/end'));
    assert.equal(w.t.h.subagents.stats().activations, 1, 'the child waits for its (long) release delay');

    w.server.enqueue({ text: 'z'.repeat(400), chunkSize: 2, chunkDelayMs: 10 });
    const other = await w.t.h.createSession();
    await other.accept('long');
    await until(() => other.activity === 'running');
    await assert.rejects(w.c.deleteSession(other.id), /running; interrupt it before deleting/);
    await other.cancel();

    const gone = await w.c.deleteSession(root.id);
    assert.deepEqual(gone.sort(), [root.id, childId].sort());
    assert.deepEqual(w.t.h.subagents.stats(), { activations: 0, oneShots: 0, timers: 0, background: 0 });
    assert.equal(w.t.h.resident(childId), undefined);
    assert.deepEqual(
      port
        .of('tree/removed')
        .map((m) => m.id)
        .sort(),
      [root.id, childId].sort(),
    );
    assert.ok(!w.t.h.store.list().some((h) => h.id === root.id || h.id === childId));
  });
});
