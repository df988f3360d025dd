import assert from 'node:assert/strict';
import { PanelController, type ViewPort } from '../../src/extension/controller';
import type { HostToWebview, PanelSettings, TreeNode } from '../../src/protocol';
import { makeHarness, type TestHarness, until } from '../support/harness';
import { ModelServer, type ChatBody, type Reply } from '../support/model-server';

// Honest outcomes (issue 8, point 8) and the lazy "+" (point 9), through the controller over
// a real harness, the real store and the model server speaking the OpenAI wire format.

const SETTINGS: PanelSettings = { sandbox: 'workspace-write', approval: 'ask', restricted: false, hasApiKey: true, modelSource: 'endpoint', model: 'test-model' };

class FakePort implements ViewPort {
  readonly got: HostToWebview[] = [];
  sessionId?: string;
  constructor(readonly view: 'panel' | 'transcript') {}
  post(msg: HostToWebview): void {
    this.got.push(JSON.parse(JSON.stringify(msg)) as HostToWebview);
  }
  of<T extends HostToWebview['type']>(type: T): Extract<HostToWebview, { type: T }>[] {
    return this.got.filter((m): m is Extract<HostToWebview, { type: T }> => m.type === type);
  }
  node(id: string): TreeNode | undefined {
    return this.of('tree/node').filter((m) => m.node.id === id).pop()?.node;
  }
}

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
  let server: ModelServer;
  let t: TestHarness;
  let c: PanelController;
  let port: FakePort;
  let opened: string[];
  before(async () => (server = await ModelServer.start()));
  after(() => server.stop());
  async function setup(releaseDelayMs: number): Promise<void> {
    opened = [];
    c = new PanelController(async () => t.h, { settings: () => SETTINGS, openTranscript: (id) => opened.push(id), log: () => undefined, progress: (_t, w) => w() });
    t = await makeHarness(server, { approvalPort: c, approval: 'ask', releaseDelayMs });
    port = new FakePort('panel');
    c.connect(port);
    await c.receive(port, { type: 'webview/ready', view: 'panel' });
  }
  beforeEach(() => server.reset());
  afterEach(async () => {
    await c.dispose();
    await t.cleanup();
  });

  async function sendNew(text: string, reqId: string): Promise<string> {
    await c.receive(port, { type: 'chat/send', id: reqId, text });
    const done = port.of('request/done').find((m) => m.id === reqId);
    assert.ok(done?.ok && done.sessionId, `request ${reqId} succeeded`);
    return done.sessionId;
  }

  it('a child whose command was refused says so on its node and in the settlement notice', async () => {
    await setup(5);
    server.setFallback(testerScript);
    const root = await sendNew('run the tests', 'r1');
    let child = '';
    await until(() => {
      child = t.h.store.list().find((h) => h.parentSession === root)?.id ?? '';
      return child !== '';
    });
    await t.h.settle();
    await t.h.subagents.whenQuiet();
    await t.h.settle();

    const childEvents = await c.events(child);
    const refusal = childEvents.find((e) => e.type === 'tool/result' && e.name === 'run_command');
    assert.ok(refusal && refusal.type === 'tool/result');
    assert.deepEqual(refusal.refusal, { outcome: 'policy-never', summary: '$ npm test' }, 'the refusal is marked on the event (children run under approval never)');

    const notice = (await c.events(root)).find((e) => e.type === 'user/message' && e.source.kind === 'subagent-settled');
    assert.ok(notice && notice.type === 'user/message');
    assert.match(notice.text, /^\[subagent tester settled: completed · 1 refused\]\n/);
    assert.match(notice.text, /Finished, but 1 action was refused: run_command `npm test` \(approval: never\)\./);
    assert.equal(notice.source.refused, 1);

    await until(() => port.node(child)?.refused === 1 && port.node(child)?.status === 'settled');
    assert.equal(port.node(child)?.lastStopReason, 'completed');
  });

  it("a one-shot child's answer to its parent lists what it was refused", async () => {
    await setup(5);
    server.setFallback((body) => {
      const last = body.messages[body.messages.length - 1];
      if (isChild(body)) return last.role === 'tool' ? { text: 'Could not run them.' } : { toolCalls: [{ name: 'run_command', arguments: { command: 'npm test', outsideSandbox: true } }] };
      if (last.role === 'tool') return { text: 'ok' };
      return { toolCalls: [{ name: 'subagent', arguments: { prompt: 'Run the tests.', label: 'once', mode: 'wait' } }] };
    });
    const root = await sendNew('run the tests once', 'r1');
    await t.h.settle();
    await t.h.subagents.whenQuiet();
    const answer = (await c.events(root)).find((e) => e.type === 'tool/result' && e.name === 'subagent');
    assert.ok(answer && answer.type === 'tool/result');
    assert.ok(answer.content.startsWith('{'), answer.content);
    const parsed = JSON.parse(answer.content) as { stopReason: string; refused?: string[] };
    assert.equal(parsed.stopReason, 'completed');
    assert.deepEqual(parsed.refused, ['run_command `npm test` (approval: never)']);
    const child = t.h.store.list().find((h) => h.parentSession === root)!.id;
    await until(() => port.node(child)?.refused === 1);
  });

  it('a finished child kept resident until its release reads settled, not waiting', async () => {
    await setup(60_000);
    server.setFallback(testerScript);
    const root = await sendNew('run the tests', 'r1');
    let child = '';
    await until(() => {
      child = t.h.store.list().find((h) => h.parentSession === root)?.id ?? '';
      return child !== '';
    });
    await until(() => t.h.resident(child)?.activity !== 'running' && port.node(child)?.lastStopReason === 'completed', 10_000);
    assert.ok(t.h.subagents.isActive(child), 'still resident (release delay not over)');
    assert.equal(port.node(child)?.status, 'settled');
    assert.equal(c.statusCounts().running ?? 0, 0);
  });

  it('counts tokens of a running request and of an interrupted one (no usage reported)', async () => {
    await setup(5);
    server.enqueue({ text: 'a slow answer that will be interrupted before its usage arrives. '.repeat(20), chunkSize: 4, chunkDelayMs: 20 });
    const root = await sendNew('hello', 'r1');
    await until(() => port.of('stream/delta').some((d) => d.sessionId === root));
    const running = c['tree'].node(root)!;
    assert.equal(running.status, 'running');
    assert.ok(running.tokens.prompt > 0 && running.tokensEstimated, `a running request counts its prompt (estimated): ${JSON.stringify(running.tokens)}`);
    await c.interrupt(root);
    await t.h.settle();
    const events = await c.events(root);
    const msg = events.find((e) => e.type === 'assistant/message');
    assert.ok(msg && msg.type === 'assistant/message' && !msg.usage && msg.text.length > 0, 'the interrupted message has partial text and no usage');
    const after = c['tree'].node(root)!;
    assert.equal(after.lastStopReason, 'interrupted');
    assert.ok(after.tokens.prompt > 0 && after.tokens.completion > 0 && after.tokensEstimated, `interrupted work is counted: ${JSON.stringify(after.tokens)}`);
    const header = events.find((e) => e.type === 'request/header');
    assert.ok(header && header.type === 'request/header');
    assert.equal(after.tokens.prompt, Math.ceil(header.bytes / 4), 'the prompt estimate comes from the request bytes in the log');
  });

  it('"+" stores nothing; the first message creates the conversation and titles it', async () => {
    await setup(5);
    server.setFallback(() => ({ text: 'hi' }));
    await c.receive(port, { type: 'session/new', id: 'n1' });
    assert.deepEqual(port.of('request/done').find((m) => m.id === 'n1'), { type: 'request/done', id: 'n1', ok: true });
    assert.equal(port.of('draft/start').length, 1, 'the panel is told to clear its selection');
    assert.equal(t.h.store.list().length, 0, 'no empty conversation was stored');
    await c.receive(port, { type: 'session/new', id: 'n2' });
    assert.equal(t.h.store.list().length, 0);
    const id = await sendNew('Refactor the parser to stream tokens', 'r1');
    assert.deepEqual(
      t.h.store.list().map((h) => [h.id, h.title]),
      [[id, 'Refactor the parser to stream tokens']],
    );
  });

  it("forks the same way from a message's button and from its menu: from a tab, in a tab of its own", async () => {
    await setup(5);
    server.setFallback(() => ({ text: 'hi' }));
    const id = await sendNew('hello', 'r1');
    await t.h.settle();
    const seq = (await c.events(id)).length - 1;
    const tab = new FakePort('transcript');
    tab.sessionId = id;
    c.connect(tab);
    await c.receive(tab, { type: 'session/fork', id: 'f1', sessionId: id, seq });
    const byButton = tab.of('request/done').find((m) => m.id === 'f1');
    assert.ok(byButton?.ok && byButton.sessionId);
    const byMenu = await c.forkAndShow(id, seq, 'transcript');
    assert.deepEqual(opened, [byButton.sessionId, byMenu], 'both open the fork in a tab');
    assert.equal(tab.sessionId, id, 'the tab stays on its own session');
    const selected = port.of('session/selected').map((m) => m.sessionId);
    assert.deepEqual(selected.slice(-2), [byButton.sessionId, byMenu], 'both select the fork in the panel');
    const fromPanel = await c.forkAndShow(id, seq, 'panel');
    assert.equal(opened.length, 2, 'from the panel no tab is opened');
    assert.equal(port.of('session/selected').at(-1)?.sessionId, fromPanel);
  });

  it('a session policy set from the picker is shown on its node', async () => {
    await setup(5);
    server.setFallback(() => ({ text: 'hi' }));
    const id = await sendNew('hello', 'r1');
    await t.h.settle();
    await c.setPolicy(id, { approval: 'never' });
    assert.deepEqual(port.node(id)?.policy, { approval: 'never' });
    await c.setPolicy(id, { sandbox: 'read-only' });
    assert.deepEqual(port.node(id)?.policy, { approval: 'never', sandbox: 'read-only' });
  });
});
