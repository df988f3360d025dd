import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as acp from '@agentclientprotocol/sdk/unstable';
import { cliWorld } from '../support/cli';
import { agentText, startAcp, type AcpPeer } from '../support/acp-peer';

/** Every stdout line is one JSON-RPC 2.0 message. */
function assertJsonRpcOnly(peer: AcpPeer): void {
  assert.ok(peer.lines.length > 0);
  for (const l of peer.lines) {
    const m = JSON.parse(l) as { jsonrpc?: string };
    assert.equal(m.jsonrpc, '2.0', l);
  }
}

describe('acp: arbor acp as an ACP agent over stdio (SDK client, real process)', () => {
  const w = cliWorld('arbor-acp-', { realDir: true });
  let peer: AcpPeer | undefined;
  afterEach(async () => {
    if (peer && peer.child.exitCode === null) await peer.close();
    peer = undefined;
  });

  it('initialize, session/new and a prompt: the answer streams as chunks, the prompt ends end_turn', async () => {
    w.server.enqueue({ text: 'Hello from Arbor, streamed in pieces.' });
    peer = await startAcp(w.common);
    assert.equal(peer.init.agentInfo?.name, 'arbor');
    assert.equal(peer.init.agentCapabilities?.loadSession, true);
    const { sessionId, modes } = await peer.agent.request(acp.methods.agent.session.new, { cwd: w.ws, mcpServers: [] });
    assert.equal(modes?.currentModeId, 'workspace-write');
    const r = await peer.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'say hello' }] });
    assert.equal(r.stopReason, 'end_turn');
    assert.equal(agentText(peer.updates, sessionId), 'Hello from Arbor, streamed in pieces.');
    assert.equal(await peer.close(), 0);
    assertJsonRpcOnly(peer);
    assert.ok(fs.existsSync(w.store));
  });
});
