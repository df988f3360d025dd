import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { ArborApi } from '../../src/extension/extension';
import type { HostToWebview } from '../../src/protocol';
import { ModelServer } from '../support/model-server';
import { arborOnServer, EXTENSION_ID, isChild } from './arbor-on-server';

// R8 of WORKFLOW.md: the packaged layout (dist/host.js forking dist/workflow-child.js, both on
// the .vscodeignore allow-list) runs a workflow inside the real extension host.
describe('Arbor host: a workflow from the packaged layout', () => {
  let server: ModelServer;
  let api: ArborApi;
  before(async () => {
    server = await ModelServer.start();
    api = await arborOnServer(server);
  });
  after(() => server.stop());

  it('runs a fan-out script in its own process to the end', async () => {
    server.setFallback((body) => {
      if (isChild(body)) return { text: 'child answer' };
      if (body.messages[body.messages.length - 1].role === 'tool') return { text: 'workflow finished' };
      return {
        toolCalls: [
          {
            name: 'workflow',
            arguments: {
              script: 'phase("fan"); return await parallel([1, 2, 3].map((i) => () => agent("task " + i)));',
              meta: { name: 'host', description: 'three children' },
            },
          },
        ],
      };
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

  // Issue 12: the deployment's limits are the `arbor.workflow.*` settings, applied at the next
  // run without a reload.
  it('takes its limits from the arbor.workflow settings, changed live', async () => {
    server.setFallback((body) => {
      if (isChild(body)) return { text: 'child answer' };
      if (body.messages[body.messages.length - 1].role === 'tool') return { text: 'workflow ended' };
      return {
        toolCalls: [
          {
            name: 'workflow',
            arguments: {
              script: 'return await parallel([1, 2, 3].map((i) => () => agent("task " + i)));',
              meta: { name: 'capped', description: 'three children, two allowed' },
            },
          },
        ],
      };
    });
    const host = await api.host();
    const h = await host.getHarness();
    const config = vscode.workspace.getConfiguration('arbor');
    const set = { 'workflow.maxTotalAgents': 2, 'workflow.concurrency': 3, 'workflow.maxConcurrency': 5, 'workflow.wallClockMinutes': 2 };
    try {
      for (const [k, v] of Object.entries(set)) await config.update(k, v, vscode.ConfigurationTarget.Global);
      // The host applies a change from onDidChangeConfiguration; give it its turn.
      // Read again each time: a change replaces the engine's limits (`setDeployment`), it does not edit them.
      const now = () => h.workflows.engine.deployment;
      for (const deadline = Date.now() + 10_000; now().maxTotalAgents !== 2 || now().wallClockMs !== 120_000; ) {
        const d = now();
        if (Date.now() > deadline)
          assert.fail(
            `the settings did not reach the engine: ${JSON.stringify({ maxTotalAgents: d.maxTotalAgents, concurrency: d.concurrency, maxConcurrency: d.maxConcurrency, wallClockMs: d.wallClockMs })}`,
          );
        await new Promise((r) => setTimeout(r, 50));
      }
      const got: HostToWebview[] = [];
      const port = { view: 'panel' as const, post: (m: HostToWebview) => got.push(m) };
      host.controller.connect(port);
      await host.controller.receive(port, { type: 'chat/send', id: 'wf2', text: 'run a capped workflow' });
      await h.settle();
      const done = got.find((m) => m.type === 'request/done' && m.id === 'wf2') as { sessionId: string };
      const events = await h.store.readEvents(done.sessionId);
      const start = events.filter((e) => e.type === 'workflow/start').at(-1) as unknown as { data: { limits: object } };
      const end = events.filter((e) => e.type === 'workflow/end').at(-1) as unknown as { data: { status: string; code?: string; agents: number } };
      assert.deepEqual(start.data.limits, { maxTotalAgents: 2, concurrency: 3, wallClockMs: 120_000 });
      assert.deepEqual([end.data.status, end.data.code, end.data.agents], ['failed', 'AGENT_CAP', 2]);
      assert.equal(now().maxConcurrency, 5);
    } finally {
      for (const k of Object.keys(set)) await config.update(k, undefined, vscode.ConfigurationTarget.Global);
    }
  });
});
