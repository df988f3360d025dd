import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as acp from '@agentclientprotocol/sdk/unstable';
import { agentText, assertJsonRpcOnly, peerPerTest, startAcp } from '../support/acp-peer';
import { arbor, cliWorld } from '../support/cli';

/** The shape of a stream of updates, with text runs joined: what a client would render. */
function shape(updates: readonly acp.SessionNotification[], sessionId: string): string[] {
  const out: string[] = [];
  for (const n of updates) {
    if (n.sessionId !== sessionId) continue;
    const u = n.update;
    if (u.sessionUpdate === 'agent_message_chunk' || u.sessionUpdate === 'agent_thought_chunk' || u.sessionUpdate === 'user_message_chunk') {
      const text = u.content.type === 'text' ? u.content.text : '';
      const last = out[out.length - 1];
      if (last?.startsWith(`${u.sessionUpdate}:`)) out[out.length - 1] = last + text;
      else out.push(`${u.sessionUpdate}:${text}`);
    } else if (u.sessionUpdate === 'tool_call') out.push(`tool_call:${u.toolCallId}:${u.kind}:${u.status}`);
    else if (u.sessionUpdate === 'tool_call_update') out.push(`tool_call_update:${u.toolCallId}:${u.status}`);
  }
  return out;
}

describe('acp: arbor acp as an ACP agent over stdio (SDK client, real process)', () => {
  const w = cliWorld('arbor-acp-', { realDir: true });
  const conn = peerPerTest();

  it('initialize, session/new and a prompt: the answer streams as coalesced chunks, the prompt ends end_turn, stdin EOF exits 0', async () => {
    w.server.enqueue({ text: 'Hello from Arbor, streamed in pieces.', chunkSize: 2 });
    conn.peer = await startAcp(w.common);
    assert.equal(conn.peer.init.agentInfo?.name, 'arbor');
    assert.equal(conn.peer.init.agentCapabilities?.loadSession, true);
    assert.deepEqual(conn.peer.init.agentCapabilities?.promptCapabilities, { image: false, audio: false, embeddedContext: true });
    const { sessionId, modes } = await conn.peer.agent.request(acp.methods.agent.session.new, { cwd: w.ws, mcpServers: [] });
    assert.equal(modes?.currentModeId, 'workspace-write');
    assert.deepEqual(
      modes?.availableModes.map((m) => m.id),
      ['read-only', 'workspace-write', 'full-access'],
    );
    const r = await conn.peer.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'say hello' }] });
    assert.equal(r.stopReason, 'end_turn');
    assert.equal(agentText(conn.peer.updates, sessionId), 'Hello from Arbor, streamed in pieces.');
    // 19 deltas of two characters, far fewer notifications: coalesced, not one per token.
    assert.ok(conn.peer.updates.length < 19, `${conn.peer.updates.length} updates`);
    assert.equal(await conn.peer.close(), 0);
    assertJsonRpcOnly(conn.peer);
    const sessions = JSON.parse((await arbor(['sessions', '--json', '--store', w.store])).stdout) as { id: string; status: string }[];
    assert.deepEqual(
      sessions.map((s) => [s.id, s.status]),
      [[sessionId, 'idle']],
    );
  });

  it('tool calls carry ACP kinds and their results; session/load in a new process replays the transcript in the same order', async () => {
    fs.writeFileSync(path.join(w.ws, 'README.md'), '# Demo\nhello\n');
    w.server.enqueue(
      {
        reasoning: 'Look first.',
        toolCalls: [
          { id: 'c1', name: 'list_files', arguments: {} },
          { id: 'c2', name: 'read_file', arguments: { path: 'README.md' } },
        ],
      },
      { toolCalls: [{ id: 'c3', name: 'edit_file', arguments: { path: 'README.md', oldText: 'hello', newText: 'hello, world' } }] },
      { toolCalls: [{ id: 'c4', name: 'read_file', arguments: { path: 'missing.md' } }] },
      { text: 'Edited README.md.' },
    );
    conn.peer = await startAcp(w.common);
    const { sessionId } = await conn.peer.agent.request(acp.methods.agent.session.new, { cwd: w.ws, mcpServers: [] });
    const prompt: acp.ContentBlock[] = [
      { type: 'text', text: 'greet the world' },
      { type: 'resource', resource: { uri: 'file:///notes.txt', text: 'a note' } },
    ];
    assert.equal((await conn.peer.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt })).stopReason, 'end_turn');
    const live = shape(conn.peer.updates, sessionId);
    assert.deepEqual(live, [
      'agent_thought_chunk:Look first.',
      'tool_call:c1:search:in_progress',
      'tool_call:c2:read:in_progress',
      'tool_call_update:c1:completed',
      'tool_call_update:c2:completed',
      'tool_call:c3:edit:in_progress',
      'tool_call_update:c3:completed',
      'tool_call:c4:read:in_progress',
      'tool_call_update:c4:failed',
      'agent_message_chunk:Edited README.md.',
    ]);
    const read = conn.peer.updates.find((n) => n.update.sessionUpdate === 'tool_call' && n.update.toolCallId === 'c2')!.update as acp.ToolCall;
    assert.deepEqual(read.locations, [{ path: path.join(w.ws, 'README.md') }]);
    assert.equal(read.title, 'read_file: README.md');
    // The embedded resource reached the model inlined, with its uri.
    assert.match(String(w.server.requests[0].body.messages.at(-1)?.content), /file:\/\/\/notes\.txt:\n```\na note\n```/);
    assert.equal(await conn.peer.close(), 0);

    conn.peer = await startAcp(w.common);
    const listed = await conn.peer.agent.request(acp.methods.agent.session.list, { cwd: w.ws });
    assert.deepEqual(
      listed.sessions.map((s) => [s.sessionId, s.cwd]),
      [[sessionId, w.ws]],
    );
    const loaded = await conn.peer.agent.request(acp.methods.agent.session.load, { sessionId, cwd: w.ws, mcpServers: [] });
    assert.equal(loaded.modes?.currentModeId, 'workspace-write');
    const replay = shape(conn.peer.updates, sessionId);
    assert.match(replay[0], /^user_message_chunk:greet the world/);
    assert.deepEqual(replay.slice(1), live);
    // A loaded session takes the next prompt, with its history.
    w.server.enqueue({ text: 'Still here.' });
    assert.equal(
      (await conn.peer.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'again' }] })).stopReason,
      'end_turn',
    );
    assert.ok(w.server.requests.at(-1)!.body.messages.some((m) => m.content === 'Edited README.md.'));
    assertJsonRpcOnly(conn.peer);
  });

  it("session/set_mode switches the sandbox (current_mode_update), and the mode holds for the model's next command", async () => {
    w.server.enqueue({ toolCalls: [{ name: 'run_command', arguments: { command: 'echo x > made.txt' } }] }, { text: 'tried' });
    conn.peer = await startAcp(w.common);
    const { sessionId } = await conn.peer.agent.request(acp.methods.agent.session.new, { cwd: w.ws, mcpServers: [] });
    await conn.peer.agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: 'read-only' });
    const modeUpdate = conn.peer.updates.find((n) => n.update.sessionUpdate === 'current_mode_update');
    assert.deepEqual(modeUpdate?.update, { sessionUpdate: 'current_mode_update', currentModeId: 'read-only' });
    await assert.rejects(
      conn.peer.agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: 'anything' }),
      (e: acp.RequestError) => e.code === -32602 && /UNKNOWN_MODE/.test(JSON.stringify(e.data)),
    );
    assert.equal(
      (await conn.peer.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'write' }] })).stopReason,
      'end_turn',
    );
    assert.equal(fs.existsSync(path.join(w.ws, 'made.txt')), false);
    const listed = await conn.peer.agent.request(acp.methods.agent.session.list, {});
    assert.equal(listed.sessions.length, 1);
    assertJsonRpcOnly(conn.peer);
  });
});
