import assert from 'node:assert/strict';
import { FakePort } from '../support/fake-port';
import { until } from '../support/harness';
import type { ChatBody, Reply } from '../support/model-server';
import { panelPerTest } from '../support/panel';

// Honest outcomes (issue 8, point 8) and the lazy "+" (point 9), through the controller over
// a real harness, the real store and the model server speaking the OpenAI wire format.

const isChild = (b: ChatBody) => b.messages.some((m) => m.role === 'user' && String(m.content ?? '').startsWith('[Arbor runtime] You are a subagent'));

/** Root: delegate "run the tests" to a continuable child; child: run_command npm test, then say so. */
function testerScript(body: ChatBody): Reply {
  const last = body.messages[body.messages.length - 1];
  if (isChild(body)) {
    if (last.role === 'tool') return { text: 'I could not run the tests.' };
    return { toolCalls: [{ name: 'run_command', arguments: { command: 'npm test', outsideSandbox: true } }] };
  }
  if (last.role === 'tool') return { text: 'Started the tester.' };
  if (String(last.content ?? '').startsWith('[subagent')) return { text: 'Noted.' };
  return { toolCalls: [{ name: 'subagent', arguments: { prompt: 'Run the tests.', label: 'tester', mode: 'continuable' } }] };
}

describe('extension: honest outcomes and the lazy new conversation', () => {
  const w = panelPerTest();

  async function sendNew(text: string, reqId: string): Promise<string> {
    await w.c.receive(w.port, { type: 'chat/send', id: reqId, text });
    return w.port.sessionOf(reqId);
  }

  it('a child whose command was refused says so on its node and in the settlement notice', async () => {
    w.server.setFallback(testerScript);
    const root = await sendNew('run the tests', 'r1');
    let child = '';
    await until(() => {
      child = w.t.h.store.list().find((h) => h.parentSession === root)?.id ?? '';
      return child !== '';
    });
    await w.t.h.settle();
    await w.t.h.subagents.whenQuiet();
    await w.t.h.settle();

    const childEvents = await w.c.events(child);
    const refusal = childEvents.find((e) => e.type === 'tool/result' && e.name === 'run_command');
    assert.ok(refusal && refusal.type === 'tool/result');
    assert.deepEqual(
      refusal.refusal,
      { outcome: 'policy-never', summary: '$ npm test' },
      'the refusal is marked on the event (children run under approval never)',
    );

    const notice = (await w.c.events(root)).find((e) => e.type === 'user/message' && e.source.kind === 'subagent-settled');
    assert.ok(notice && notice.type === 'user/message');
    assert.match(notice.text, /^\[subagent tester settled: completed · 1 refused\]\n/);
    assert.match(notice.text, /Finished, but 1 action was refused: run_command `npm test` \(approval: never\)\./);
    assert.equal(notice.source.kind === 'subagent-settled' && notice.source.refused, 1);

    await until(() => w.port.node(child)?.refused === 1 && w.port.node(child)?.status === 'settled');
    assert.equal(w.port.node(child)?.lastStopReason, 'completed');
  });

  it("a one-shot child's answer to its parent lists what it was refused", async () => {
    w.server.setFallback((body) => {
      const last = body.messages[body.messages.length - 1];
      if (isChild(body))
        return last.role === 'tool'
          ? { text: 'Could not run them.' }
          : { toolCalls: [{ name: 'run_command', arguments: { command: 'npm test', outsideSandbox: true } }] };
      if (last.role === 'tool') return { text: 'ok' };
      return { toolCalls: [{ name: 'subagent', arguments: { prompt: 'Run the tests.', label: 'once', mode: 'wait' } }] };
    });
    const root = await sendNew('run the tests once', 'r1');
    await w.t.h.settle();
    await w.t.h.subagents.whenQuiet();
    const answer = (await w.c.events(root)).find((e) => e.type === 'tool/result' && e.name === 'subagent');
    assert.ok(answer && answer.type === 'tool/result');
    assert.ok(answer.content.startsWith('{'), answer.content);
    const parsed = JSON.parse(answer.content) as { stopReason: string; refused?: string[] };
    assert.equal(parsed.stopReason, 'completed');
    assert.deepEqual(parsed.refused, ['run_command `npm test` (approval: never)']);
    const child = w.t.h.store.list().find((h) => h.parentSession === root)!.id;
    await until(() => w.port.node(child)?.refused === 1);
  });

  it('a finished child kept resident until its release reads settled, not waiting', async () => {
    await w.reopen({ releaseDelayMs: 60_000 });
    w.server.setFallback(testerScript);
    const root = await sendNew('run the tests', 'r1');
    let child = '';
    await until(() => {
      child = w.t.h.store.list().find((h) => h.parentSession === root)?.id ?? '';
      return child !== '';
    });
    await until(() => w.t.h.resident(child)?.activity !== 'running' && w.port.node(child)?.lastStopReason === 'completed', 10_000);
    assert.ok(w.t.h.subagents.isActive(child), 'still resident (release delay not over)');
    assert.equal(w.port.node(child)?.status, 'settled');
    assert.equal(w.c.statusCounts().running ?? 0, 0);
  });

  it('counts tokens of a running request and of an interrupted one (no usage reported)', async () => {
    w.server.enqueue({ text: 'a slow answer that will be interrupted before its usage arrives. '.repeat(20), chunkSize: 4, chunkDelayMs: 20 });
    const root = await sendNew('hello', 'r1');
    await until(() => w.port.of('stream/delta').some((d) => d.sessionId === root));
    const running = (await w.c.nodes()).find((n) => n.id === root)!;
    assert.equal(running.status, 'running');
    assert.ok(running.tokens.prompt > 0 && running.tokensEstimated, `a running request counts its prompt (estimated): ${JSON.stringify(running.tokens)}`);
    await w.c.interrupt(root);
    await w.t.h.settle();
    const events = await w.c.events(root);
    const msg = events.find((e) => e.type === 'assistant/message');
    assert.ok(msg && msg.type === 'assistant/message' && !msg.usage && msg.text.length > 0, 'the interrupted message has partial text and no usage');
    const after = (await w.c.nodes()).find((n) => n.id === root)!;
    assert.equal(after.lastStopReason, 'interrupted');
    assert.ok(after.tokens.prompt > 0 && after.tokens.completion > 0 && after.tokensEstimated, `interrupted work is counted: ${JSON.stringify(after.tokens)}`);
    const header = events.find((e) => e.type === 'request/header');
    assert.ok(header && header.type === 'request/header');
    assert.equal(after.tokens.prompt, Math.ceil(header.bytes / 4), 'the prompt estimate comes from the request bytes in the log');
  });

  it('"+" stores nothing; the first message creates the conversation and titles it', async () => {
    w.server.setFallback(() => ({ text: 'hi' }));
    await w.c.receive(w.port, { type: 'session/new', id: 'n1' });
    assert.deepEqual(
      w.port.of('request/done').find((m) => m.id === 'n1'),
      { type: 'request/done', id: 'n1', ok: true },
    );
    assert.equal(w.port.of('draft/start').length, 1, 'the panel is told to clear its selection');
    assert.equal(w.t.h.store.list().length, 0, 'no empty conversation was stored');
    await w.c.receive(w.port, { type: 'session/new', id: 'n2' });
    assert.equal(w.t.h.store.list().length, 0);
    const id = await sendNew('Refactor the parser to stream tokens', 'r1');
    assert.deepEqual(
      w.t.h.store.list().map((h) => [h.id, h.title]),
      [[id, 'Refactor the parser to stream tokens']],
    );
  });

  it("forks the same way from a message's button and from its menu: from a tab, in a tab of its own", async () => {
    w.server.setFallback(() => ({ text: 'hi' }));
    const id = await sendNew('hello', 'r1');
    await w.t.h.settle();
    const seq = (await w.c.events(id)).length - 1;
    const tab = new FakePort('transcript', id);
    w.c.connect(tab);
    await w.c.receive(tab, { type: 'session/fork', id: 'f1', sessionId: id, seq });
    const byButton = tab.sessionOf('f1');
    const byMenu = await w.c.forkAndShow(id, seq, 'transcript');
    assert.deepEqual(w.opened, [byButton, byMenu], 'both open the fork in a tab');
    assert.equal(tab.sessionId, id, 'the tab stays on its own session');
    const selected = w.port.of('session/selected').map((m) => m.sessionId);
    assert.deepEqual(selected.slice(-2), [byButton, byMenu], 'both select the fork in the panel');
    const fromPanel = await w.c.forkAndShow(id, seq, 'panel');
    assert.equal(w.opened.length, 2, 'from the panel no tab is w.opened');
    assert.equal(w.port.of('session/selected').at(-1)?.sessionId, fromPanel);
  });

  it('a session policy set from the picker is shown on its node', async () => {
    w.server.setFallback(() => ({ text: 'hi' }));
    const id = await sendNew('hello', 'r1');
    await w.t.h.settle();
    await w.c.setPolicy(id, { approval: 'never' });
    assert.deepEqual(w.port.node(id)?.policy, { approval: 'never' });
    await w.c.setPolicy(id, { sandbox: 'read-only' });
    assert.deepEqual(w.port.node(id)?.policy, { approval: 'never', sandbox: 'read-only' });
  });
});
