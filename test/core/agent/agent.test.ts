import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { SessionEvent } from '../../../src/core/session/events';
import { harnessPerTest, makeHarness, until } from '../../support/harness';
import { agentPastThreshold } from './past-threshold';

const types = (evs: readonly SessionEvent[]) => evs.map((e) => e.type);

describe('agent: turns against the test model server', () => {
  const w = harnessPerTest();

  it('runs a multi-step tool loop and records every step durably', async () => {
    fs.writeFileSync(path.join(w.t.workspace, 'notes.txt'), 'alpha\nbeta\n');
    w.server.enqueue(
      { toolCalls: [{ id: 'c1', name: 'read_file', arguments: { path: 'notes.txt' } }] },
      { toolCalls: [{ id: 'c2', name: 'write_file', arguments: { path: 'out.txt', content: 'ALPHA' } }] },
      { text: 'Done: wrote out.txt.' },
    );
    const agent = await w.t.h.createSession();
    await agent.accept('uppercase the first line into out.txt');
    await agent.idle();
    assert.equal(agent.lastTurn?.stopReason, 'completed');
    assert.equal(fs.readFileSync(path.join(w.t.workspace, 'out.txt'), 'utf8'), 'ALPHA');
    const evs = agent.session.events;
    assert.deepEqual(types(evs), [
      'inbox/accepted',
      'inbox/claimed',
      'turn/start',
      'user/message',
      'request/header',
      'assistant/message',
      'tool/result',
      'request/header',
      'assistant/message',
      // The writing step's checkpoint (decision 0059), in the same batch as its result.
      'checkpoint',
      'tool/result',
      'request/header',
      'assistant/message',
      'turn/end',
    ]);
    const cp = evs.find((e) => e.type === 'checkpoint');
    assert.ok(cp && cp.type === 'checkpoint');
    assert.deepEqual(
      cp.changes.map((c) => [path.basename(c.path), c.before, c.callId, c.tool]),
      [['out.txt', null, 'c2', 'write_file']],
    );
    const read = evs.find((e) => e.type === 'tool/result' && e.callId === 'c1');
    assert.ok(read && read.type === 'tool/result' && /alpha/.test(read.content) && !read.isError);
    // The second request carried the first tool result back to the model.
    const msgs = w.server.requests[1].body.messages;
    assert.equal(msgs[msgs.length - 1].role, 'tool');
    // Everything is on disk: a fresh read of the store equals the live log.
    assert.deepEqual(await w.t.h.store.readEvents(agent.id), [...evs]);
  });

  it('runs independent tool calls of one step in parallel and answers in call order', async () => {
    fs.writeFileSync(path.join(w.t.workspace, 'a.txt'), 'A');
    fs.writeFileSync(path.join(w.t.workspace, 'b.txt'), 'B');
    w.server.enqueue(
      {
        toolCalls: [
          { id: 'slow', name: 'run_command', arguments: { command: 'sleep 0.3; echo slow' } },
          { id: 'fast', name: 'read_file', arguments: { path: 'b.txt' } },
        ],
      },
      { text: 'ok' },
    );
    w.t.h.setDefaults({ sandbox: 'full-access' });
    const agent = await w.t.h.createSession();
    await agent.accept('go');
    await agent.idle();
    const results = agent.session.events.filter((e) => e.type === 'tool/result');
    assert.deepEqual(
      results.map((e) => e.type === 'tool/result' && e.callId),
      ['slow', 'fast'],
    );
  });

  it('turns bad model arguments into error results the model can act on', async () => {
    w.server.enqueue(
      {
        toolCalls: [
          { id: 'x1', name: 'read_file', arguments: '{"path": ' },
          { id: 'x2', name: 'read_file', arguments: { path: 7 } },
          { id: 'x3', name: 'no_such_tool', arguments: {} },
        ],
      },
      { text: 'sorry' },
    );
    const agent = await w.t.h.createSession();
    await agent.accept('go');
    await agent.idle();
    const results = agent.session.events.filter((e) => e.type === 'tool/result');
    assert.equal(results.length, 3);
    for (const r of results) assert.ok(r.type === 'tool/result' && r.isError);
    assert.match((results[0] as { content: string }).content, /JSON/i);
    assert.match((results[1] as { content: string }).content, /path/);
    assert.match((results[2] as { content: string }).content, /Unknown tool "no_such_tool"/);
    assert.equal(agent.lastTurn?.stopReason, 'completed');
  });

  it('ends the turn with an error but keeps the partial text when the stream breaks', async () => {
    w.server.enqueue({ text: 'half of an answer', chunkSize: 5, fault: { kind: 'disconnect', afterChunks: 2 } });
    const agent = await w.t.h.createSession();
    await agent.accept('go');
    await agent.idle();
    assert.equal(agent.lastTurn?.stopReason, 'error');
    const msg = agent.session.events.find((e) => e.type === 'assistant/message');
    assert.ok(msg && msg.type === 'assistant/message' && msg.text === 'half of an');
    const end = agent.session.events[agent.session.length - 1];
    assert.ok(end.type === 'turn/end' && end.stopReason === 'error' && /partial answer was kept|broke off|could not be read/.test(end.error ?? ''));
  });

  for (const status of [401, 404, 429, 500]) {
    it(`ends the turn as error with a clear message on HTTP ${status}`, async () => {
      w.server.enqueue({ fault: { kind: 'status', status } });
      const agent = await w.t.h.createSession();
      await agent.accept('go');
      await agent.idle();
      const end = agent.session.events[agent.session.length - 1];
      assert.ok(end.type === 'turn/end' && end.stopReason === 'error' && end.error?.includes(String(status)));
    });
  }

  it('stops at the step limit', async () => {
    await w.t.cleanup();
    w.t = await makeHarness(w.server, { maxSteps: 2 });
    w.server.setFallback(() => ({ toolCalls: [{ name: 'list_files', arguments: {} }] }));
    const agent = await w.t.h.createSession();
    await agent.accept('loop forever');
    await agent.idle();
    assert.equal(agent.lastTurn?.stopReason, 'error');
    assert.match(agent.lastTurn?.error ?? '', /step limit \(2/);
    w.server.setFallback(() => ({ text: 'ok' }));
  });

  it('interrupts mid-stream and keeps the inbox: queued messages wait for the next waking message, then run in order', async () => {
    w.server.enqueue({ text: 'y'.repeat(400), chunkSize: 2, chunkDelayMs: 10 }, { text: 'second answer' }, { text: 'third answer' });
    const agent = await w.t.h.createSession();
    await agent.accept('first');
    await agent.accept('second');
    await until(() => agent.session.events.some((e) => e.type === 'request/header'));
    await new Promise((r) => setTimeout(r, 50));
    await agent.cancel('interrupted', { keepInbox: true });
    await agent.idle();
    const ends = () => agent.session.events.filter((e) => e.type === 'turn/end').map((e) => e.type === 'turn/end' && e.stopReason);
    assert.deepEqual(ends(), ['interrupted']);
    assert.equal(agent.inboxSize, 1, 'the queued message is kept');
    assert.ok(agent.isSettled);
    await agent.accept('third');
    await agent.idle();
    assert.deepEqual(ends(), ['interrupted', 'completed', 'completed']);
    const users = agent.session.events.filter((e) => e.type === 'user/message').map((e) => e.type === 'user/message' && e.text);
    assert.deepEqual(users, ['first', 'second', 'third']);
  });

  it('interrupts mid-tool: the running command is killed and its call is left unanswered', async () => {
    w.t.h.setDefaults({ sandbox: 'full-access' });
    w.server.enqueue({ toolCalls: [{ id: 'long', name: 'run_command', arguments: { command: 'sleep 30' } }] }, { text: 'next' });
    const agent = await w.t.h.createSession();
    await agent.accept('first');
    await agent.accept('queued');
    await until(() => agent.session.events.some((e) => e.type === 'assistant/message'));
    await new Promise((r) => setTimeout(r, 100));
    const t0 = Date.now();
    await agent.cancel();
    await agent.idle();
    assert.ok(Date.now() - t0 < 10_000);
    agent.resume();
    await agent.idle();
    const ends = agent.session.events.filter((e) => e.type === 'turn/end').map((e) => e.type === 'turn/end' && e.stopReason);
    assert.deepEqual(ends, ['interrupted', 'completed']);
    // The next request answers the interrupted call with a stand-in result.
    const msgs = w.server.requests[1].body.messages;
    assert.ok(msgs.some((m) => m.role === 'tool' && m.tool_call_id === 'long'));
  });

  it('cancel without keepInbox drops the queued messages', async () => {
    w.server.enqueue({ text: 'z'.repeat(400), chunkSize: 2, chunkDelayMs: 10 });
    const agent = await w.t.h.createSession();
    await agent.accept('first');
    await agent.accept('dropped');
    await until(() => agent.session.events.some((e) => e.type === 'request/header'));
    await agent.cancel('interrupted', { keepInbox: false });
    await agent.idle();
    assert.equal(agent.inboxSize, 0);
    assert.equal(agent.session.events.filter((e) => e.type === 'turn/start').length, 1);
  });

  it('sends identical request bytes for the same turn in two runs', async () => {
    const run = async () => {
      const t2 = await makeHarness(w.server);
      try {
        w.server.reset();
        fs.writeFileSync(path.join(t2.workspace, 'f.txt'), 'same');
        w.server.enqueue({ toolCalls: [{ id: 'r', name: 'read_file', arguments: { path: 'f.txt' } }] }, { text: 'done' });
        const a = await t2.h.createSession();
        await a.accept('read f.txt');
        await a.idle();
        return w.server.requests.map((r) => r.raw);
      } finally {
        await t2.cleanup();
      }
    };
    const one = await run();
    const two = await run();
    assert.equal(one.length, 2);
    assert.deepEqual(two, one);
  });

  it('compacts at the token threshold and continues on summary + retained tail', async () => {
    const agent = await agentPastThreshold(w);
    // Third turn: the prompt is over the threshold, so a compaction runs first.
    w.server.enqueue({ text: 'SUMMARY: user asked two questions' }, { text: 'third answer' });
    await agent.accept('third question');
    await agent.idle();
    const evs = agent.session.events;
    assert.ok(evs.some((e) => e.type === 'compaction/end' && e.outcome === 'committed'));
    const last = w.server.requests[w.server.requests.length - 1].body.messages;
    const contents = last.map((m) => `${m.role}:${String(m.content).slice(0, 40)}`);
    assert.match(contents[1], /^user:Summary of the earlier conversation/);
    assert.ok(!contents.some((c) => c.startsWith('user:first question')), 'the compacted turn is gone from the surface');
    assert.ok(
      contents.some((c) => c === 'user:second question'),
      'the retained tail stays',
    );
    assert.equal(contents[contents.length - 1], 'user:third question');
    // The raw log still holds everything.
    assert.ok(evs.some((e) => e.type === 'user/message' && e.text.startsWith('first question')));
    assert.equal(agent.lastTurn?.stopReason, 'completed');
  });

  it('resumes a session from its log in a new harness and sees the whole history', async () => {
    w.server.enqueue({ text: 'remembered: 42' });
    const agent = await w.t.h.createSession();
    await agent.accept('remember 42');
    await agent.idle();
    const id = agent.id;
    await w.t.h.close();
    const { Harness } = await import('../../../src/core/harness');
    const h2 = await Harness.open({ ...w.t.h.config });
    try {
      const resumed = await h2.openSession(id);
      w.server.enqueue({ text: 'it was 42' });
      await resumed.accept('what was it?');
      await resumed.idle();
      const msgs = w.server.requests[w.server.requests.length - 1].body.messages.map((m) => m.content);
      assert.deepEqual(msgs.slice(1), ['remember 42', 'remembered: 42', 'what was it?']);
    } finally {
      await h2.close();
    }
  });
});

describe('agent: manual compaction', () => {
  const w = harnessPerTest();

  it('compacts on request, keeps the raw log, and the next turn sees summary + tail', async () => {
    const agent = await w.t.h.createSession();
    for (const q of ['one', 'two', 'three']) {
      w.server.enqueue({ text: `answer ${q}` });
      await agent.accept(`question ${q}`);
      await agent.idle();
    }
    w.server.enqueue({ text: 'SUMMARY of one and two' });
    const r = await agent.compact(1);
    assert.equal(r.outcome, 'committed');
    const start = agent.session.events.find((e) => e.type === 'compaction/start');
    assert.ok(start && start.type === 'compaction/start' && start.reason === 'manual');
    w.server.enqueue({ text: 'answer four' });
    await agent.accept('question four');
    await agent.idle();
    const msgs = w.server.requests[w.server.requests.length - 1].body.messages.slice(1).map((m) => String(m.content));
    assert.ok(msgs[0].includes('SUMMARY of one and two'));
    assert.deepEqual(msgs.slice(1), ['question three', 'answer three', 'question four']);
    assert.equal(agent.session.events.filter((e) => e.type === 'user/message' && e.text.startsWith('question')).length, 4, 'raw log intact');
  });

  it('a failed summary aborts the compaction and changes nothing the model sees', async () => {
    const agent = await w.t.h.createSession();
    for (const q of ['one', 'two']) {
      w.server.enqueue({ text: `answer ${q}` });
      await agent.accept(`question ${q}`);
      await agent.idle();
    }
    const before = agent.session.deriveMessages().map((m) => m.content);
    w.server.enqueue({ fault: { kind: 'status', status: 500 } });
    const r = await agent.compact(1);
    assert.equal(r.outcome, 'aborted');
    assert.deepEqual(
      agent.session.deriveMessages().map((m) => m.content),
      before,
    );
  });
});
