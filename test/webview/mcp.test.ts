// The MCP pieces of the panel (decision 0055), in the built webview in headless chromium: the
// server list with states and tool counts, and an MCP call in the transcript showing its server.
import * as assert from 'node:assert/strict';
import type { HostToWebview } from '../../src/protocol';
import { FIXTURE_AT, FIXTURE_SETTINGS, rootNode, webviewFixture } from '../support/webview-fixture';

const SETTINGS = FIXTURE_SETTINGS;
const T = FIXTURE_AT;
const ROOT = 's-root-1';
const NODE = rootNode(ROOT);

describe('webview: MCP servers and calls', () => {
  const w = webviewFixture('arbor-webview-mcp-');
  const { send, count, textOf } = w;
  const snapshot: HostToWebview = { type: 'state/snapshot', nodes: [NODE], selected: ROOT, settings: SETTINGS, approvals: [] };

  it('lists the servers with their state and tool count, open while one needs attention', async () => {
    await w.open();
    await send(snapshot, {
      type: 'mcp/servers',
      servers: [
        { name: 'everything', source: 'workspace', phase: 'ready', toolCount: 14 },
        { name: 'docs', source: 'vscode', phase: 'needs-allow', toolCount: 0, why: 'defined in /w/.vscode/mcp.json; it starts once you allow it' },
        { name: 'web', source: 'user', phase: 'failed', toolCount: 0, why: 'it did not start: HTTP 401' },
      ],
    });
    assert.match(await textOf('.mcp summary'), /MCP servers \(1\/3 ready\)/);
    assert.equal(await w.page.evaluate<boolean>(`document.querySelector('.mcp').open`), true);
    assert.match(await textOf('[data-mcp-server=everything]'), /everything\s+ready, 14 tools/);
    assert.match(await textOf('[data-mcp-server=docs]'), /waiting for your allow\s+defined in/);
    assert.match(await textOf('[data-mcp-server=web]'), /failed\s+it did not start: HTTP 401/);
    await send({ type: 'mcp/servers', servers: [{ name: 'everything', source: 'workspace', phase: 'ready', toolCount: 15 }] });
    assert.equal(await count('.mcp .server'), 1);
    assert.equal(await w.page.evaluate<boolean>(`document.querySelector('.mcp').open`), false, 'all ready: folded');
    await send({ type: 'mcp/servers', servers: [] });
    assert.equal(await count('.mcp'), 0);
  });

  it('an MCP call in the transcript names its server', async () => {
    await w.open();
    await send(snapshot, {
      type: 'transcript/reset',
      sessionId: ROOT,
      hasMore: false,
      entries: [
        { kind: 'assistant', seq: 1, at: T, text: '', toolCalls: [{ id: 'c1', name: 'mcp__everything__echo', arguments: '{"message":"hi"}' }] },
        { kind: 'tool', seq: 2, at: T, callId: 'c1', name: 'mcp__everything__echo', content: 'Echo: hi', isError: false },
      ],
    });
    assert.equal(await textOf('.tool .mcp-server'), 'everything');
    assert.equal(await textOf('.tool .name'), 'echo');
  });
});
