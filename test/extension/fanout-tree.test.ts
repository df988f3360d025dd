import { statusBarView } from '../../src/extension/presenter/status-bar';
import assert from 'node:assert/strict';
import { PanelController } from '../../src/extension/controller';
import type { PanelSettings, TreeNode } from '../../src/protocol';
import { Gates, hold, Script, waitFor } from '../core/subagent/helpers';
import { FakePort } from '../support/fake-port';
import { makeHarness, type TestHarness } from '../support/harness';
import { ModelServer } from '../support/model-server';

const SETTINGS: PanelSettings = { sandbox: 'workspace-write', approval: 'ask', restricted: false, hasApiKey: true, modelSource: 'endpoint', model: 'test-model' };

// Issue 10.9: a child waiting for a free slot is shown as queued in the tree, and stops
// being queued the moment it gets one (no event of its own says so).
describe('extension: the tree shows subagents queued for a slot', () => {
  let server: ModelServer;
  let t: TestHarness;
  let c: PanelController;
  let gates: Gates;
  let script: Script;
  before(async () => (server = await ModelServer.start()));
  after(() => server.stop());
  beforeEach(async () => {
    server.reset();
    script = new Script(server);
    c = new PanelController(async () => t.h, { settings: () => SETTINGS, openTranscript: () => undefined, log: () => undefined, progress: (_title, work) => work() });
    t = await makeHarness(server, { approvalPort: c, approval: 'ask', releaseDelayMs: 5, maxConcurrentChildren: 1 });
    gates = new Gates().install(t.h);
  });
  afterEach(async () => {
    gates.releaseAll();
    await c.dispose();
    await t.cleanup();
  });

  it('queued while it waits (status queued, activity says why), running once admitted, then settled', async () => {
    const port = new FakePort('panel');
    c.connect(port);
    await c.receive(port, { type: 'webview/ready', view: 'panel' });
    const spawn = (tag: string) => ({ name: 'subagent', arguments: { prompt: `[[${tag}]] go`, label: tag, mode: 'continuable' } });
    script.on('root', { toolCalls: [spawn('first'), spawn('second')] }, { text: 'both started' });
    script.on('first', { toolCalls: [hold('first')] }, { text: 'first done' });
    script.on('second', { toolCalls: [hold('second')] }, { text: 'second done' });
    await c.receive(port, { type: 'chat/send', id: 'r1', text: '[[root]] start two' });
    await gates.whenHeld('first');
    await waitFor(() => t.h.subagents.fanout.queued().length === 1, 'second to queue');
    const second = t.h.subagents.fanout.queued()[0];
    const first = t.h.store.list().find((h) => h.title === 'first')!.id;
    const last = (id: string): TreeNode => port.of('tree/node').filter((m) => m.node.id === id).pop()!.node;

    await waitFor(() => last(second)?.status === 'queued', 'a queued node');
    assert.match(last(second).activity ?? '', /waiting for a free slot/);
    assert.equal(last(first).status, 'running');
    // The status bar counts what the tree shows (the root may still be finishing its turn).
    const counts = c.statusCounts();
    assert.equal(counts.queued, 1);
    assert.match(statusBarView(counts).text, /· 1 queued/);
    const snap = await c.nodes();
    assert.equal(snap.find((n) => n.id === second)?.status, 'queued', 'a late snapshot shows it queued too');

    gates.release('first');
    await gates.whenHeld('second');
    await waitFor(() => last(second).status === 'running', 'the node to leave the queue');
    gates.release('second');
    await t.h.settle();
    await waitFor(() => last(second).status === 'settled', 'second to settle');
  });
});
