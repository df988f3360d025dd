import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { ArborApi } from '../../src/extension/extension';
import type { HostToWebview } from '../../src/protocol';
import { ModelServer, type ChatBody } from '../support/model-server';

const EXTENSION_ID = 'arbor-dev.arbor';
const isChild = (b: ChatBody) => b.messages.some((m) => String(m.content ?? '').startsWith('[Arbor runtime] You are a subagent'));

// R8 of WORKFLOW.md: the packaged layout (dist/host.js forking dist/workflow-child.js, both on
// the .vscodeignore allow-list) runs a workflow inside the real extension host.
describe('Arbor host: a workflow from the packaged layout', () => {
  let server: ModelServer;
  let api: ArborApi;
  before(async () => {
    server = await ModelServer.start();
    const config = vscode.workspace.getConfiguration('arbor');
    await config.update('model.baseUrl', server.baseURL, vscode.ConfigurationTarget.Global);
    const ext = vscode.extensions.getExtension<ArborApi>(EXTENSION_ID);
    assert.ok(ext);
    api = await ext.activate();
  });
  after(() => server.stop());

  it('runs a fan-out script in its own process to the end', async () => {
    server.setFallback((body) => {
      if (isChild(body)) return { text: 'child answer' };
      if (body.messages[body.messages.length - 1].role === 'tool') return { text: 'workflow finished' };
      return { toolCalls: [{ name: 'workflow', arguments: { script: 'phase("fan"); return await parallel([1, 2, 3].map((i) => () => agent("task " + i)));', meta: { name: 'host', description: 'three children' } } }] };
    });
    const host = await api.host();
    const h = await host.getHarness();
    const got: HostToWebview[] = [];
    const port = { view: 'panel' as const, post: (m: HostToWebview) => got.push(m) };
    host.controller.connect(port);
    await host.controller.receive(port, { type: 'chat/send', id: 'wf1', text: 'run a workflow' });
    await h.settle();
    const done = got.find((m) => m.type === 'request/done' && m.id === 'wf1') as { sessionId: string };
    const events = await h.store.readEvents(done.sessionId);
    const end = events.find((e) => e.type === 'workflow/end') as unknown as { data: { status: string; agents: number; error?: string } };
    assert.equal(end.data.status, 'completed', end.data.error);
    assert.equal(end.data.agents, 3);
    const ext = vscode.extensions.getExtension(EXTENSION_ID)!;
    assert.ok(require.resolve(path.join(ext.extensionPath, 'dist', 'workflow-child.js')));
  });
});
