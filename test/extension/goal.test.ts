import assert from 'node:assert/strict';
import { PanelController } from '../../src/extension/controller';
import type { PanelSettings, TreeNode } from '../../src/protocol';
import { FakePort } from '../support/fake-port';
import { makeHarness, type TestHarness } from '../support/harness';
import { ModelServer } from '../support/model-server';

const SETTINGS: PanelSettings = { sandbox: 'workspace-write', approval: 'ask', restricted: false, hasApiKey: true, modelSource: 'endpoint', model: 'test-model' };

describe('extension: goals in the panel (goal/* messages, the node\'s goal)', () => {
  let server: ModelServer;
  let t: TestHarness;
  let c: PanelController;
  before(async () => (server = await ModelServer.start()));
  after(() => server.stop());
  beforeEach(async () => {
    server.reset();
    c = new PanelController(async () => t.h, { settings: () => SETTINGS, openTranscript: () => undefined, log: () => undefined, progress: (_t, work) => work() });
    t = await makeHarness(server, { approvalPort: c, releaseDelayMs: 5 });
  });
  afterEach(async () => {
    await c.dispose();
    await t.cleanup();
  });

  const lastNode = (port: FakePort, id: string): TreeNode => port.of('tree/node').filter((m) => m.node.id === id).pop()!.node;

  it('set from the panel arms the goal: the node shows active · n/2 while armed, then blocked round-limit; raise and resume run one more round', async () => {
    const port = new FakePort('panel');
    c.connect(port);
    await c.receive(port, { type: 'webview/ready', view: 'panel' });
    const id = (await t.h.createSession({ title: 'goal here' })).id;
    await c.receive(port, { type: 'goal/set', id: 'g1', sessionId: id, objective: 'keep going', maxRounds: 2 });
    assert.equal(port.done('g1')?.ok, true);
    await t.h.settle();
    const seen = port.of('tree/node').filter((m) => m.node.id === id && m.node.goal).map((m) => `${m.node.goal!.phase}:${m.node.goal!.roundsStarted}/${m.node.goal!.maxGoalRounds}:${m.node.goal!.armed}`);
    assert.ok(seen.includes('active:1/2:true') && seen.includes('active:2/2:true'), seen.join(' '));
    let g = lastNode(port, id).goal!;
    assert.equal(g.phase, 'blocked');
    assert.equal(g.blocked?.code, 'round-limit');
    assert.equal(g.armed, false);
    assert.equal(g.objective, 'keep going');

    await c.receive(port, { type: 'goal/resume', id: 'g2', sessionId: id });
    const refused = port.done('g2');
    assert.ok(refused && !refused.ok && /raise the limit/.test(refused.error));
    await c.receive(port, { type: 'goal/limit', id: 'g3', sessionId: id, maxRounds: 3 });
    await c.receive(port, { type: 'goal/resume', id: 'g4', sessionId: id });
    assert.equal(port.done('g4')?.ok, true);
    await t.h.settle();
    g = lastNode(port, id).goal!;
    assert.equal(`${g.phase}:${g.roundsStarted}/${g.maxGoalRounds}`, 'blocked:3/3');

    await c.receive(port, { type: 'goal/clear', id: 'g5', sessionId: id });
    assert.equal(lastNode(port, id).goal, undefined);
  });

  it('pauses a goal of a session that is not loaded (no event reaches the panel: the node is reloaded)', async () => {
    const port = new FakePort('panel');
    c.connect(port);
    await c.receive(port, { type: 'webview/ready', view: 'panel' });
    const id = (await t.h.createSession()).id;
    await t.h.goals.set(id, 'x', 1);
    await t.h.settle();
    await t.h.goals.limit(id, 4);
    // A fresh harness and panel: the session is on disk only.
    await c.dispose();
    await t.h.close();
    t = await makeHarness(server, { storeDir: t.storeDir, workspace: [t.workspace] });
    c = new PanelController(async () => t.h, { settings: () => SETTINGS, openTranscript: () => undefined, log: () => undefined, progress: (_t, work) => work() });
    const p2 = new FakePort('panel');
    c.connect(p2);
    await c.receive(p2, { type: 'webview/ready', view: 'panel' });
    await c.nodes();
    assert.equal(t.h.resident(id), undefined);
    await c.receive(p2, { type: 'goal/pause', id: 'p', sessionId: id });
    assert.equal(p2.done('p')?.ok, true);
    assert.equal(lastNode(p2, id).goal?.phase, 'paused');
    assert.equal(t.h.resident(id), undefined);
  });

  it('refuses malformed goal messages before they reach the harness', async () => {
    const port = new FakePort('panel');
    const id = (await t.h.createSession()).id;
    for (const bad of [
      { type: 'goal/set', id: 'b1', sessionId: id, objective: 'x', maxRounds: '3' },
      { type: 'goal/set', id: 'b2', sessionId: id },
      { type: 'goal/limit', id: 'b3', sessionId: id },
      { type: 'goal/pause', id: 'b4', sessionId: '../etc' },
    ]) await c.receive(port, bad);
    assert.equal(port.of('message/rejected').length, 4);
    for (const maxRounds of [0, -1, 1.5, 1e12]) {
      await c.receive(port, { type: 'goal/set', id: `m${maxRounds}`, sessionId: id, objective: 'x', maxRounds });
      const d = port.done(`m${maxRounds}`);
      assert.ok(d && !d.ok && /whole number from 1 to 1000/.test(d.error));
    }
    assert.equal((await t.h.goals.state(id)).goal, null);
  });
});
