import assert from 'node:assert/strict';
import * as acp from '@agentclientprotocol/sdk/unstable';
import { EVERYTHING } from '../core/mcp/support';
import { peerPerTest, startAcp } from '../support/acp-peer';
import { cliWorld } from '../support/cli';

describe('acp: mcpServers passed in session/new are honoured', function () {
  this.timeout(90_000);
  const w = cliWorld('arbor-acp-mcp-', { realDir: true });
  const conn = peerPerTest();

  it("the client's stdio server starts with the session, and the model calls its tool (the client approves)", async () => {
    w.server.enqueue({ toolCalls: [{ id: 'm1', name: 'mcp__everything__echo', arguments: { message: 'over acp' } }] }, { text: 'done' });
    conn.peer = await startAcp([...w.common, '--approval', 'auto']);
    assert.deepEqual(conn.peer.init.agentCapabilities?.mcpCapabilities, { http: true, sse: false });
    const { sessionId } = await conn.peer.agent.request(acp.methods.agent.session.new, {
      cwd: w.ws,
      mcpServers: [{ name: 'everything', command: process.execPath, args: [EVERYTHING, 'stdio'], env: [{ name: 'SOME_TOKEN', value: 'acp-secret-1234' }] }],
    });
    const r = await conn.peer.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'echo' }] });
    assert.equal(r.stopReason, 'end_turn');
    const names = (w.server.requests[0].body as { tools: { function: { name: string } }[] }).tools.map((t) => t.function.name);
    assert.ok(names.includes('mcp__everything__echo'), names.join(', '));
    const done = conn.peer.updates.find(
      (n) => n.update.sessionUpdate === 'tool_call_update' && n.update.toolCallId === 'm1' && n.update.status === 'completed',
    );
    assert.ok(done, 'the MCP call completed');
    assert.ok(!conn.peer.stderr().includes('ignored'), conn.peer.stderr());
  });
});
