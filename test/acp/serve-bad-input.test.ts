import assert from 'node:assert/strict';
import * as acp from '@agentclientprotocol/sdk/unstable';
import { assertJsonRpcOnly, peerPerTest, startAcp } from '../support/acp-peer';
import { cliWorld } from '../support/cli';
import { until } from '../support/harness';

const dataCode = (e: unknown): string | undefined => ((e as acp.RequestError).data as { code?: string } | undefined)?.code;

describe('acp: arbor acp refuses bad input with JSON-RPC errors and keeps serving', () => {
  const w = cliWorld('arbor-acp-bad-', { realDir: true });
  const conn = peerPerTest();

  it('a malformed JSON line gets a parse error (-32700); the connection goes on', async () => {
    conn.peer = await startAcp(w.common);
    conn.peer.raw('{"jsonrpc":"2.0","id":99,"method":\n');
    conn.peer.raw('not json at all\n');
    await until(() => conn.peer!.lines.filter((l) => (JSON.parse(l) as { error?: { code: number } }).error?.code === -32700).length === 2);
    const { sessionId } = await conn.peer.agent.request(acp.methods.agent.session.new, { cwd: w.ws, mcpServers: [] });
    assert.match(sessionId, /^s-/);
    assertJsonRpcOnly(conn.peer);
  });

  it('bad params, a relative or missing cwd, an unknown session and image content are refused with codes; nothing crashes', async () => {
    conn.peer = await startAcp(w.common);
    const req = conn.peer.agent.request.bind(conn.peer.agent) as (m: string, p: unknown) => Promise<unknown>;
    await assert.rejects(req('session/new', { cwd: 5, mcpServers: [] }), (e: acp.RequestError) => e.code === -32602);
    await assert.rejects(req('session/prompt', { sessionId: 'x' }), (e: acp.RequestError) => e.code === -32602);
    await assert.rejects(
      req('session/new', { cwd: 'relative/path', mcpServers: [] }),
      (e: acp.RequestError) => e.code === -32602 && dataCode(e) === 'RELATIVE_CWD',
    );
    await assert.rejects(
      req('session/new', { cwd: `${w.ws}/nowhere`, mcpServers: [] }),
      (e: acp.RequestError) => e.code === -32602 && dataCode(e) === 'NO_SUCH_FOLDER',
    );
    await assert.rejects(
      req('session/prompt', { sessionId: 's-unknown', prompt: [{ type: 'text', text: 'hi' }] }),
      (e: acp.RequestError) => e.code === -32002 && dataCode(e) === 'UNKNOWN_SESSION',
    );
    await assert.rejects(req('session/load', { sessionId: 's-unknown', cwd: w.ws, mcpServers: [] }), (e: acp.RequestError) => e.code === -32002);
    const { sessionId } = await conn.peer.agent.request(acp.methods.agent.session.new, { cwd: w.ws, mcpServers: [] });
    const image: acp.ContentBlock = { type: 'image', mimeType: 'image/png', data: 'iVBORw0KGgo=' };
    await assert.rejects(
      conn.peer.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'look' }, image] }),
      (e: acp.RequestError) => e.code === -32602 && dataCode(e) === 'UNSUPPORTED_CONTENT',
    );
    assert.equal(w.server.requests.length, 0, 'a refused prompt reaches no model');
    // A cancel for a session nobody has is a notification: ignored, said on stderr.
    await conn.peer.agent.notify(acp.methods.agent.session.cancel, { sessionId: 's-nobody' });
    w.server.enqueue({ text: 'still fine' });
    assert.equal(
      (await conn.peer.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'hi' }] })).stopReason,
      'end_turn',
    );
    assert.match(conn.peer.stderr(), /session\/cancel for unknown session s-nobody ignored/);
    assertJsonRpcOnly(conn.peer);
  });

  it('MCP servers that cannot start, or are malformed, are said on stderr; the session opens all the same', async () => {
    conn.peer = await startAcp(w.common);
    const { sessionId } = await conn.peer.agent.request(acp.methods.agent.session.new, {
      cwd: w.ws,
      mcpServers: [
        { name: 'fs', command: '/bin/true', args: [], env: [] },
        { name: 'bad name', command: '/bin/true', args: [], env: [] },
      ],
    });
    assert.match(sessionId, /^s-/);
    await until(() => /MCP server "fs" failed: it did not start/.test(conn.peer!.stderr()));
    assert.match(conn.peer.stderr(), /MCP config ACP session\/new mcpServers, server "bad name": server name "bad name" must be/);
    assertJsonRpcOnly(conn.peer);
  });

  it('a failed turn is a JSON-RPC error naming the cause; the step limit is max_turn_requests', async () => {
    conn.peer = await startAcp([...w.common, '--max-steps', '1']);
    const { sessionId } = await conn.peer.agent.request(acp.methods.agent.session.new, { cwd: w.ws, mcpServers: [] });
    w.server.enqueue({ fault: { kind: 'status', status: 400, message: 'bad model request' } });
    await assert.rejects(
      conn.peer.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'x' }] }),
      (e: acp.RequestError) => e.code === -32603 && dataCode(e) === 'TURN_FAILED',
    );
    w.server.enqueue({ toolCalls: [{ name: 'list_files', arguments: {} }] });
    assert.equal(
      (await conn.peer.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'y' }] })).stopReason,
      'max_turn_requests',
    );
    assertJsonRpcOnly(conn.peer);
  });
});
