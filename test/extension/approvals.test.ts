import { listAgents } from '../../src/core/subagent/control';
import { statusBarView } from '../../src/extension/presenter/status-bar';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { PanelController, type ViewPort } from '../../src/extension/controller';
import type { ApprovalPrompt, HostToWebview, PanelSettings } from '../../src/protocol';
import { makeHarness, type TestHarness, until } from '../support/harness';
import { ModelServer } from '../support/model-server';

// The panel's side of approvals (issue 8 point 5): marks up the tree, the host's badge and
// notification hook, allow once / for this conversation / deny with a reason, revoke.

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
  lastNode(id: string) {
    return this.of('tree/node').filter((m) => m.node.id === id).pop()?.node;
  }
  lastGrants(id: string) {
    return this.of('grants/list').filter((m) => m.sessionId === id).pop()?.grants;
  }
}

describe('extension: approvals in the panel', () => {
  let server: ModelServer;
  let t: TestHarness;
  let c: PanelController;
  let port: FakePort;
  let changes: { pending: number; added?: ApprovalPrompt }[];
  before(async () => (server = await ModelServer.start()));
  after(() => server.stop());
  beforeEach(async () => {
    server.reset();
    changes = [];
    c = new PanelController(async () => t.h, {
      settings: () => SETTINGS,
      openTranscript: () => undefined,
      log: () => undefined,
      progress: (_title, work) => work(),
      approvalsChanged: (pending, added) => changes.push({ pending: pending.length, ...(added ? { added } : {}) }),
    });
    t = await makeHarness(server, { approvalPort: c, approval: 'ask', childApproval: 'escalate', releaseDelayMs: 5 });
    port = new FakePort('panel');
    c.connect(port);
    await c.receive(port, { type: 'webview/ready', view: 'panel' });
  });
  afterEach(async () => {
    await c.dispose();
    await t.cleanup();
  });

  async function nextPrompt(n: number): Promise<ApprovalPrompt> {
    await until(() => port.of('approval/requested').length >= n, 10_000);
    return port.of('approval/requested')[n - 1].prompt;
  }

  it('allow for this conversation: the grant is listed, the next matching command does not ask, revoke makes it ask again', async () => {
    server.enqueue({ toolCalls: [{ name: 'run_command', arguments: { command: 'echo first-run', outsideSandbox: true } }] }, { text: 'ran' });
    await c.receive(port, { type: 'chat/send', id: 'r1', text: 'run the tests' });
    const p1 = await nextPrompt(1);
    const id = p1.sessionId;
    assert.deepEqual(p1.grant, { kind: 'command-prefix', value: 'echo first-run' });
    assert.equal(changes.at(-1)?.added?.requestId, p1.requestId, 'the host hook heard of the new request (badge, notification)');
    assert.equal(changes.at(-1)?.pending, 1);
    await c.receive(port, { type: 'approval/answer', requestId: p1.requestId, decision: 'allow', remember: true });
    await t.h.settle();
    assert.equal(changes.at(-1)?.pending, 0, 'the badge clears once answered');
    await until(() => (port.lastGrants(id)?.length ?? 0) === 1);
    const [g] = port.lastGrants(id)!;
    const markers = port.of('transcript/append').flatMap((m) => m.entries).filter((e) => e.kind === 'marker');
    assert.ok(markers.some((e) => e.kind === 'marker' && e.text === 'Allowed for this conversation: run_command on "echo first-run …".'), 'the chat shows the grant where it was given');
    assert.deepEqual({ tool: g.tool, scope: g.scope }, { tool: 'run_command', scope: { kind: 'command-prefix', value: 'echo first-run' } });

    server.enqueue({ toolCalls: [{ name: 'run_command', arguments: { command: 'echo first-run --again', outsideSandbox: true } }] }, { text: 'ran again' });
    await c.receive(port, { type: 'chat/send', id: 'r2', sessionId: id, text: 'run the tests again' });
    await t.h.settle();
    assert.equal(port.of('approval/requested').length, 1, 'the second matching request did not ask');
    const results = t.h.resident(id)!.session.events.filter((e) => e.type === 'tool/result');
    assert.ok(results.every((e) => e.type === 'tool/result' && !e.isError));

    await c.receive(port, { type: 'approval/revoke', id: 'rv', sessionId: id, grantId: g.grantId });
    assert.ok(port.of('request/done').some((m) => m.id === 'rv' && m.ok));
    assert.deepEqual(port.lastGrants(id), []);
    assert.ok(t.h.resident(id)!.session.events.some((e) => e.type === 'approval/grant' && e.revoked === true), 'the revoke is in the log');
    server.enqueue({ toolCalls: [{ name: 'run_command', arguments: { command: 'echo first-run', outsideSandbox: true } }] }, { text: 'asked' });
    await c.receive(port, { type: 'chat/send', id: 'r3', sessionId: id, text: 'once more' });
    const p3 = await nextPrompt(2);
    await c.receive(port, { type: 'approval/answer', requestId: p3.requestId, decision: 'allow' });
    await t.h.settle();
    assert.deepEqual(port.lastGrants(id), [], 'allow once records no grant');
  });

  it('deny with a reason: the model reads the reason in the tool result', async () => {
    server.enqueue({ toolCalls: [{ name: 'run_command', arguments: { command: 'npm test', outsideSandbox: true } }] }, { text: 'understood' });
    await c.receive(port, { type: 'chat/send', id: 'r1', text: 'run the tests' });
    const p = await nextPrompt(1);
    await c.receive(port, { type: 'approval/answer', requestId: p.requestId, decision: 'deny', reason: 'not now, the CI is running' });
    await t.h.settle();
    const tool = server.requests.at(-1)!.body.messages.find((m) => m.role === 'tool');
    assert.match(String(tool?.content), /who said: "not now, the CI is running"/);
  });

  it('a protected write shows the diff against the current file in the prompt', async () => {
    fs.mkdirSync(path.join(t.workspace, '.vscode'));
    fs.writeFileSync(path.join(t.workspace, '.vscode', 'settings.json'), '{\n  "editor.tabSize": 2\n}\n');
    server.enqueue({ toolCalls: [{ name: 'write_file', arguments: { path: '.vscode/settings.json', content: '{\n  "editor.tabSize": 4\n}\n' } }] }, { text: 'ok' });
    await c.receive(port, { type: 'chat/send', id: 'r1', text: 'edit the settings' });
    const p = await nextPrompt(1);
    assert.equal(p.preview?.kind, 'diff');
    assert.match(p.preview!.text, /^-  "editor.tabSize": 2$/m);
    assert.match(p.preview!.text, /^\+  "editor.tabSize": 4$/m);
    assert.equal(p.grant?.kind, 'path');
    await c.receive(port, { type: 'approval/answer', requestId: p.requestId, decision: 'deny' });
    await t.h.settle();
    assert.equal(fs.readFileSync(path.join(t.workspace, '.vscode', 'settings.json'), 'utf8'), '{\n  "editor.tabSize": 2\n}\n');
  });

  it("a child's request marks the child and every ancestor until it is answered", async () => {
    server.enqueue(
      { toolCalls: [{ name: 'subagent', arguments: { prompt: 'run it', label: 'kid' } }] },
      { toolCalls: [{ name: 'run_command', arguments: { command: 'echo from-child', outsideSandbox: true } }] },
      { text: 'child done' },
      { text: 'parent done' },
    );
    await c.receive(port, { type: 'chat/send', id: 'r1', text: 'delegate' });
    const p = await nextPrompt(1);
    const [child, root] = p.lineage;
    assert.ok(child && root && child !== root);
    await until(() => port.lastNode(root)?.pendingApprovals === 1 && port.lastNode(child)?.pendingApprovals === 1);
    assert.equal(port.lastNode(child)?.activity, 'waiting for approval');
    // One status fold for every reader: the tree, list_agents and the status bar agree.
    assert.equal(port.lastNode(child)?.status, 'approval');
    assert.equal(port.lastNode(root)?.status, 'running', 'its turn runs: the subagent call is its tool call');
    const listed = await listAgents(t.h.subagents, root);
    assert.deepEqual(listed.map((l) => [l.id, l.status]), [[child, 'approval']]);
    assert.deepEqual(c.statusCounts(), { approval: 1, running: 1 });
    assert.equal(statusBarView(c.statusCounts()).text, '$(shield) Arbor: 2 running · 1 needs you');
    await c.receive(port, { type: 'approval/answer', requestId: p.requestId, decision: 'allow', remember: true });
    await t.h.settle();
    await until(() => port.lastNode(root)?.pendingApprovals === undefined && port.lastNode(child)?.pendingApprovals === undefined);
    assert.equal(c.statusCounts().approval, undefined);
    // The grant belongs to the child that asked, not to its parent.
    assert.equal((await t.h.grants(child)).length, 1);
    assert.equal((await t.h.grants(root)).length, 0);
  });

  it('refuses a malformed answer or revoke, and a revoke of an unknown grant fails with a message', async () => {
    await c.receive(port, { type: 'approval/answer', requestId: 'x', decision: 'deny', reason: 'y'.repeat(3000) });
    await c.receive(port, { type: 'approval/revoke', id: 'r', sessionId: '../x', grantId: 'g' });
    assert.equal(port.of('message/rejected').length, 2);
    server.enqueue({ text: 'hi' });
    await c.receive(port, { type: 'chat/send', id: 'r1', text: 'hello' });
    await t.h.settle();
    const ok = port.of('request/done').find((m) => m.id === 'r1');
    assert.ok(ok?.ok && ok.sessionId);
    const id = ok.sessionId;
    await c.receive(port, { type: 'approval/revoke', id: 'r2', sessionId: id, grantId: 'nope' });
    const done = port.of('request/done').find((m) => m.id === 'r2');
    assert.ok(done && !done.ok && /no active grant/.test(done.error));
  });
});
