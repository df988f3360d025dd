import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { ArborApi } from '../../src/extension/extension';
import type { HostToWebview } from '../../src/protocol';
import { arborOnServer, EXTENSION_ID, isChild } from '../host/arbor-on-server';
import { ModelServer } from '../support/model-server';

// Issue 21.7: the .vsix a user installs (not the repository in development mode) runs a
// delegation end to end: a root that spawns a child against the local model server.
describe('Arbor from its .vsix: one delegation', () => {
  let server: ModelServer;
  let api: ArborApi;
  before(async () => {
    server = await ModelServer.start();
    api = await arborOnServer(server);
  });
  after(() => server.stop());

  it('runs from the installed package, not from a development folder', () => {
    const ext = vscode.extensions.getExtension(EXTENSION_ID)!;
    const expected = process.env.ARBOR_VSIX_EXTENSIONS_DIR;
    assert.ok(expected, 'the runner names the extensions folder it installed into');
    assert.equal(path.dirname(ext.extensionPath), path.resolve(expected));
    assert.equal(ext.packageJSON.icon, 'media/arbor-icon.png');
  });

  it('a root spawns a child against the local model server, and the child completes', async () => {
    server.setFallback((body) => {
      if (isChild(body)) return { text: 'child answer: 3 files' };
      // The root delegates once (its first request), then only answers.
      if (body.messages.some((m) => m.role === 'assistant')) return { text: 'root done' };
      return { toolCalls: [{ name: 'subagent', arguments: { prompt: 'count the files', label: 'counter' } }] };
    });
    const host = await api.host();
    const h = await host.getHarness();
    const got: HostToWebview[] = [];
    const port = { view: 'panel' as const, post: (m: HostToWebview) => got.push(m) };
    host.controller.connect(port);
    await host.controller.receive(port, { type: 'chat/send', id: 'd1', text: 'delegate the count' });
    const done = got.find((m) => m.type === 'request/done' && m.id === 'd1') as { sessionId?: string } | undefined;
    assert.ok(done?.sessionId, `the message was accepted: ${JSON.stringify(done)}`);
    const root = done.sessionId;
    const deadline = Date.now() + 60_000;
    let child: string | undefined;
    for (;;) {
      await h.settle();
      child = h.store.list().find((x) => x.parentSession === root)?.id;
      const node = child ? (await host.controller.nodes()).find((n) => n.id === child) : undefined;
      if (node?.status === 'settled') break;
      if (Date.now() > deadline) assert.fail(`the child did not settle: ${JSON.stringify(node)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const events = await h.store.readEvents(child!);
    const end = events.filter((e) => e.type === 'turn/end').at(-1) as { stopReason?: string; error?: string } | undefined;
    assert.equal(end?.stopReason, 'completed', end?.error);
    const said = events.filter((e) => e.type === 'assistant/message').map((e) => (e as { text: string }).text);
    assert.ok(said.includes('child answer: 3 files'), JSON.stringify(said));
    assert.ok(
      server.requests.some((r) => isChild(r.body)),
      'the child asked the local model server',
    );
  });
});
