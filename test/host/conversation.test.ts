import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { ArborApi } from '../../src/extension/extension';
import type { HostToWebview } from '../../src/protocol';
import { ModelServer } from '../support/model-server';

const EXTENSION_ID = 'arbor-dev.arbor';

describe('Arbor host: store, settings and a conversation in the real extension host', () => {
  let server: ModelServer;
  let api: ArborApi;
  before(async () => {
    server = await ModelServer.start();
    const config = vscode.workspace.getConfiguration('arbor');
    await config.update('model.baseUrl', server.baseURL, vscode.ConfigurationTarget.Global);
    await config.update('model.name', 'host-test-model', vscode.ConfigurationTarget.Global);
    const ext = vscode.extensions.getExtension<ArborApi>(EXTENSION_ID);
    assert.ok(ext);
    api = await ext.activate();
  });
  // The host is disposed once, after every file (index.ts): later files use the same host.
  after(() => server.stop());

  it('activates quickly, without loading the host bundle', () => {
    // The bench (extension.activate_ms) reads the figure measured here, in the real host.
    if (process.env.ARBOR_ACTIVATION_OUT) fs.writeFileSync(process.env.ARBOR_ACTIVATION_OUT, JSON.stringify({ activationMs: api.activationMs }));
    assert.ok(api.activationMs < 200, `activate() took ${api.activationMs} ms`);
  });

  it('registers every Arbor command', async () => {
    const commands = await vscode.commands.getCommands(true);
    const pkg = vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON as { contributes: { commands: { command: string }[] } };
    for (const c of pkg.contributes.commands) assert.ok(commands.includes(c.command), `${c.command} is not registered`);
  });

  it('keeps the store in workspace storage and round-trips a conversation with the model server', async () => {
    const host = await api.host();
    const h = await host.getHarness();
    assert.ok(h.store.dir.includes('workspaceStorage') || h.store.dir.includes('globalStorage'), h.store.dir);
    assert.equal(path.basename(h.store.dir), 'store');
    const got: HostToWebview[] = [];
    const port = { view: 'panel' as const, post: (m: HostToWebview) => got.push(m) };
    host.controller.connect(port);
    server.enqueue({ text: 'hello from the host test' });
    await host.controller.receive(port, { type: 'chat/send', id: 'h1', text: 'hi from VS Code' });
    await h.settle();
    const done = got.find((m) => m.type === 'request/done' && m.id === 'h1');
    assert.ok(done && done.type === 'request/done' && done.ok);
    const id = (done as { sessionId: string }).sessionId;
    const events = await h.store.readEvents(id);
    const answer = events.find((e) => e.type === 'assistant/message');
    assert.ok(answer && answer.type === 'assistant/message' && answer.text === 'hello from the host test');
    assert.equal(server.requests[0].body.model, 'host-test-model');
    // The raw event log opens as a read-only JSON Lines document.
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.from({ scheme: 'arbor-log', path: `/${id}.jsonl` }));
    const lines = doc
      .getText()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string });
    assert.equal(lines.length, events.length);
  });

  it('the raw event log document follows its session live (decision 0015)', async () => {
    const host = await api.host();
    const h = await host.getHarness();
    const got: HostToWebview[] = [];
    const port = { view: 'panel' as const, post: (m: HostToWebview) => got.push(m) };
    host.controller.connect(port);
    server.enqueue({ text: 'first answer' });
    await host.controller.receive(port, { type: 'chat/send', id: 'log1', text: 'first' });
    await h.settle();
    const done = got.find((m) => m.type === 'request/done' && m.id === 'log1') as { sessionId: string };
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.from({ scheme: 'arbor-log', path: `/${done.sessionId}.jsonl` }));
    const before = doc.getText().trim().split('\n').length;
    server.enqueue({ text: 'second answer, appended while the log is open' });
    await host.controller.send(done.sessionId, 'second');
    await h.settle();
    const total = (await h.store.readEvents(done.sessionId)).length;
    const deadline = Date.now() + 5_000;
    while (doc.getText().trim().split('\n').length !== total && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.equal(doc.getText().trim().split('\n').length, total, `the open log has every event (was ${before} lines)`);
    assert.ok(doc.getText().includes('second answer, appended while the log is open'));
  });

  it('never writes the API key to settings or the store', async () => {
    await vscode.commands.getCommands(true);
    const host = await api.host();
    await host.setApiKey('sk-host-test-secret');
    const h = await host.getHarness();
    const settings = JSON.stringify(vscode.workspace.getConfiguration('arbor'));
    assert.ok(!settings.includes('sk-host-test-secret'));
    for (const s of h.store.list()) assert.ok(!JSON.stringify(await h.store.readEvents(s.id)).includes('sk-host-test-secret'));
    await host.setApiKey('');
  });
});
