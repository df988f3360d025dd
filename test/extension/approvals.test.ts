import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { listAgents } from '../../src/core/subagent/control';
import { statusBarView } from '../../src/extension/presenter/status-bar';
import type { ApprovalPrompt } from '../../src/protocol';
import { until } from '../support/harness';
import { panelPerTest } from '../support/panel';

// The panel's side of approvals (issue 8 point 5): marks up the tree, the host's badge and
// notification hook, allow once / for this conversation / deny with a reason, revoke.

describe('extension: approvals in the panel', () => {
  const w = panelPerTest({ harness: { childApproval: 'escalate' } });

  async function nextPrompt(n: number): Promise<ApprovalPrompt> {
    await until(() => w.port.of('approval/requested').length >= n, 10_000);
    return w.port.of('approval/requested')[n - 1].prompt;
  }

  it('allow for this conversation: the grant is listed, the next matching command does not ask, revoke makes it ask again', async () => {
    w.server.enqueue({ toolCalls: [{ name: 'run_command', arguments: { command: 'echo first-run', outsideSandbox: true } }] }, { text: 'ran' });
    await w.c.receive(w.port, { type: 'chat/send', id: 'r1', text: 'run the tests' });
    const p1 = await nextPrompt(1);
    const id = p1.sessionId;
    assert.deepEqual(p1.grant, { kind: 'command-prefix', value: 'echo first-run' });
    assert.equal(w.approvalChanges.at(-1)?.added?.requestId, p1.requestId, 'the host hook heard of the new request (badge, notification)');
    assert.equal(w.approvalChanges.at(-1)?.pending, 1);
    await w.c.receive(w.port, { type: 'approval/answer', requestId: p1.requestId, decision: 'allow', remember: true });
    await w.t.h.settle();
    assert.equal(w.approvalChanges.at(-1)?.pending, 0, 'the badge clears once answered');
    await until(() => (w.port.grants(id)?.length ?? 0) === 1);
    const [g] = w.port.grants(id)!;
    const markers = w.port
      .of('transcript/append')
      .flatMap((m) => m.entries)
      .filter((e) => e.kind === 'marker');
    assert.ok(
      markers.some((e) => e.kind === 'marker' && e.text === 'Allowed for this conversation: run_command on "echo first-run …".'),
      'the chat shows the grant where it was given',
    );
    assert.deepEqual({ tool: g.tool, scope: g.scope }, { tool: 'run_command', scope: { kind: 'command-prefix', value: 'echo first-run' } });

    w.server.enqueue({ toolCalls: [{ name: 'run_command', arguments: { command: 'echo first-run --again', outsideSandbox: true } }] }, { text: 'ran again' });
    await w.c.receive(w.port, { type: 'chat/send', id: 'r2', sessionId: id, text: 'run the tests again' });
    await w.t.h.settle();
    assert.equal(w.port.of('approval/requested').length, 1, 'the second matching request did not ask');
    const results = w.t.h.resident(id)!.session.events.filter((e) => e.type === 'tool/result');
    assert.ok(results.every((e) => e.type === 'tool/result' && !e.isError));

    await w.c.receive(w.port, { type: 'approval/revoke', id: 'rv', sessionId: id, grantId: g.grantId });
    assert.ok(w.port.of('request/done').some((m) => m.id === 'rv' && m.ok));
    assert.deepEqual(w.port.grants(id), []);
    assert.ok(
      w.t.h.resident(id)!.session.events.some((e) => e.type === 'approval/grant' && e.revoked === true),
      'the revoke is in the log',
    );
    w.server.enqueue({ toolCalls: [{ name: 'run_command', arguments: { command: 'echo first-run', outsideSandbox: true } }] }, { text: 'asked' });
    await w.c.receive(w.port, { type: 'chat/send', id: 'r3', sessionId: id, text: 'once more' });
    const p3 = await nextPrompt(2);
    await w.c.receive(w.port, { type: 'approval/answer', requestId: p3.requestId, decision: 'allow' });
    await w.t.h.settle();
    assert.deepEqual(w.port.grants(id), [], 'allow once records no grant');
  });

  it('deny with a reason: the model reads the reason in the tool result', async () => {
    w.server.enqueue({ toolCalls: [{ name: 'run_command', arguments: { command: 'npm test', outsideSandbox: true } }] }, { text: 'understood' });
    await w.c.receive(w.port, { type: 'chat/send', id: 'r1', text: 'run the tests' });
    const p = await nextPrompt(1);
    await w.c.receive(w.port, { type: 'approval/answer', requestId: p.requestId, decision: 'deny', reason: 'not now, the CI is running' });
    await w.t.h.settle();
    const tool = w.server.requests.at(-1)!.body.messages.find((m) => m.role === 'tool');
    assert.match(String(tool?.content), /who said: "not now, the CI is running"/);
  });

  it('a protected write shows the diff against the current file in the prompt', async () => {
    fs.mkdirSync(path.join(w.t.workspace, '.vscode'));
    fs.writeFileSync(path.join(w.t.workspace, '.vscode', 'settings.json'), '{\n  "editor.tabSize": 2\n}\n');
    w.server.enqueue(
      { toolCalls: [{ name: 'write_file', arguments: { path: '.vscode/settings.json', content: '{\n  "editor.tabSize": 4\n}\n' } }] },
      { text: 'ok' },
    );
    await w.c.receive(w.port, { type: 'chat/send', id: 'r1', text: 'edit the settings' });
    const p = await nextPrompt(1);
    assert.equal(p.preview?.kind, 'diff');
    assert.match(p.preview!.text, /^- {2}"editor.tabSize": 2$/m);
    assert.match(p.preview!.text, /^\+ {2}"editor.tabSize": 4$/m);
    // The card names the file as the workspace does (core keeps the real, absolute path).
    assert.deepEqual(p.grant, { kind: 'path', value: '.vscode/settings.json' });
    await w.c.receive(w.port, { type: 'approval/answer', requestId: p.requestId, decision: 'deny' });
    await w.t.h.settle();
    assert.equal(fs.readFileSync(path.join(w.t.workspace, '.vscode', 'settings.json'), 'utf8'), '{\n  "editor.tabSize": 2\n}\n');
  });

  it('a path grant is listed relative to the workspace; a compound command says why it can be allowed only once', async () => {
    fs.mkdirSync(path.join(w.t.workspace, '.vscode'));
    w.server.enqueue(
      { toolCalls: [{ name: 'write_file', arguments: { path: '.vscode/tasks.json', content: '{}\n' } }] },
      { toolCalls: [{ name: 'run_command', arguments: { command: 'npm test && npm run lint', outsideSandbox: true } }] },
      { text: 'done' },
    );
    await w.c.receive(w.port, { type: 'chat/send', id: 'r1', text: 'set up the tasks' });
    const p = await nextPrompt(1);
    assert.deepEqual(p.grant, { kind: 'path', value: '.vscode/tasks.json' });
    assert.equal(p.noGrant, undefined);
    await w.c.receive(w.port, { type: 'approval/answer', requestId: p.requestId, decision: 'allow', remember: true });
    await until(() => (w.port.grants(p.sessionId)?.length ?? 0) === 1);
    assert.deepEqual(w.port.grants(p.sessionId)![0].scope, { kind: 'path', value: '.vscode/tasks.json' });
    const chained = await nextPrompt(2);
    assert.equal(chained.grant, undefined, 'a chained command is never offered for the conversation');
    assert.match(chained.noGrant ?? '', /^Only once: this command chains, pipes, redirects or substitutes/);
    await w.c.receive(w.port, { type: 'approval/answer', requestId: chained.requestId, decision: 'deny' });
    await w.t.h.settle();
  });

  it("a child's request marks the child and every ancestor until it is answered", async () => {
    w.server.enqueue(
      { toolCalls: [{ name: 'subagent', arguments: { prompt: 'run it', label: 'kid' } }] },
      { toolCalls: [{ name: 'run_command', arguments: { command: 'echo from-child', outsideSandbox: true } }] },
      { text: 'child done' },
      { text: 'parent done' },
    );
    await w.c.receive(w.port, { type: 'chat/send', id: 'r1', text: 'delegate' });
    const p = await nextPrompt(1);
    const [child, root] = p.lineage;
    assert.ok(child && root && child !== root);
    await until(() => w.port.node(root)?.pendingApprovals === 1 && w.port.node(child)?.pendingApprovals === 1);
    assert.equal(w.port.node(child)?.activity, 'waiting for approval');
    // One status fold for every reader: the tree, list_agents and the status bar agree.
    assert.equal(w.port.node(child)?.status, 'approval');
    assert.equal(w.port.node(root)?.status, 'running', 'its turn runs: the subagent call is its tool call');
    const listed = await listAgents(w.t.h.subagents, root);
    assert.deepEqual(
      listed.map((l) => [l.id, l.status]),
      [[child, 'approval']],
    );
    assert.deepEqual(w.c.statusCounts(), { approval: 1, running: 1 });
    assert.equal(statusBarView(w.c.statusCounts()).text, '$(shield) Arbor: 2 running · 1 needs you');
    await w.c.receive(w.port, { type: 'approval/answer', requestId: p.requestId, decision: 'allow', remember: true });
    await w.t.h.settle();
    await until(() => w.port.node(root)?.pendingApprovals === undefined && w.port.node(child)?.pendingApprovals === undefined);
    assert.equal(w.c.statusCounts().approval, undefined);
    // The grant belongs to the child that asked, not to its parent.
    assert.equal((await w.t.h.grants(child)).length, 1);
    assert.equal((await w.t.h.grants(root)).length, 0);
  });

  it('refuses a malformed answer or revoke, and a revoke of an unknown grant fails with a message', async () => {
    await w.c.receive(w.port, { type: 'approval/answer', requestId: 'x', decision: 'deny', reason: 'y'.repeat(3000) });
    await w.c.receive(w.port, { type: 'approval/revoke', id: 'r', sessionId: '../x', grantId: 'g' });
    assert.equal(w.port.of('message/rejected').length, 2);
    w.server.enqueue({ text: 'hi' });
    await w.c.receive(w.port, { type: 'chat/send', id: 'r1', text: 'hello' });
    await w.t.h.settle();
    const id = w.port.sessionOf('r1');
    await w.c.receive(w.port, { type: 'approval/revoke', id: 'r2', sessionId: id, grantId: 'nope' });
    const done = w.port.of('request/done').find((m) => m.id === 'r2');
    assert.ok(done && !done.ok && /no active grant/.test(done.error));
  });
});
