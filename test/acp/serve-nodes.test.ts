// `arbor acp --nodes DIR --node-stores DIR` (decision 0077): the one process a placement keeps for
// all its nodes. Each node's folder is a workspace of its own with its store in the stores
// folder (a reconnect's session/load finds it there); a cwd outside the nodes folder is refused.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as acp from '@agentclientprotocol/sdk/unstable';
import { assertJsonRpcOnly, peerPerTest, startAcp } from '../support/acp-peer';
import { arbor, cliWorld } from '../support/cli';

const dataCode = (e: unknown): string | undefined => ((e as acp.RequestError).data as { code?: string } | undefined)?.code;

describe('acp: arbor acp --nodes serves a placement’s nodes, each a workspace with its own store', () => {
  const w = cliWorld('arbor-acp-nodes-', { realDir: true });
  const conn = peerPerTest();

  it('two nodes on one connection: each session works in its own folder and is stored in its own store; a cwd elsewhere is NOT_A_NODE', async () => {
    const nodes = path.join(w.dir, 'nodes');
    const stores = path.join(w.dir, 'stores');
    for (const n of ['n1', 'n2']) fs.mkdirSync(path.join(nodes, n, 'sub'), { recursive: true });
    conn.peer = await startAcp(['--nodes', nodes, '--node-stores', stores, '--base-url', w.server.baseURL, '--model', 'test-model']);
    await conn.peer.agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
    const one = await conn.peer.agent.request(acp.methods.agent.session.new, { cwd: path.join(nodes, 'n1'), mcpServers: [] });
    const two = await conn.peer.agent.request(acp.methods.agent.session.new, { cwd: path.join(nodes, 'n2', 'sub'), mcpServers: [] });
    w.server.enqueue({ toolCalls: [{ name: 'write_file', arguments: { path: 'mine.txt', content: 'one\n' } }] }, { text: 'n1 done' });
    const r1 = await conn.peer.agent.request(acp.methods.agent.session.prompt, { sessionId: one.sessionId, prompt: [{ type: 'text', text: 'write' }] });
    w.server.enqueue({ text: 'n2 done' });
    const r2 = await conn.peer.agent.request(acp.methods.agent.session.prompt, { sessionId: two.sessionId, prompt: [{ type: 'text', text: 'hi' }] });
    assert.equal(r1.stopReason, 'end_turn');
    assert.equal(r2.stopReason, 'end_turn');
    assert.equal(fs.readFileSync(path.join(nodes, 'n1', 'mine.txt'), 'utf8'), 'one\n', "the node's own folder is its workspace");
    assert.equal(fs.existsSync(path.join(nodes, 'n2', 'mine.txt')), false);
    for (const n of ['n1', 'n2']) assert.ok(fs.existsSync(path.join(stores, n)), `${n}'s store is in the stores folder`);
    assert.equal(fs.existsSync(path.join(nodes, 'n1', '.arbor')), false, 'no store inside a node (it would travel back as a change)');
    // A session of a node is listed from its own store, not the other's.
    const listed = await conn.peer.agent.request(acp.methods.agent.session.list, { cwd: path.join(nodes, 'n1') });
    assert.deepEqual(
      listed.sessions.map((s) => s.sessionId),
      [one.sessionId],
    );
    await assert.rejects(
      conn.peer.agent.request(acp.methods.agent.session.new, { cwd: w.ws, mcpServers: [] }),
      (e: acp.RequestError) => e.code === -32602 && dataCode(e) === 'NOT_A_NODE',
    );
    await assert.rejects(
      conn.peer.agent.request(acp.methods.agent.session.new, { cwd: nodes, mcpServers: [] }),
      (e: acp.RequestError) => e.code === -32602 && dataCode(e) === 'NOT_A_NODE',
      'the nodes folder itself is no node',
    );
    assertJsonRpcOnly(conn.peer);
  });

  it('an attacker node cannot write into another node’s folder or store on the shared process', async () => {
    const nodes = path.join(w.dir, 'nodes-x');
    const stores = path.join(w.dir, 'stores-x');
    for (const n of ['a', 'b']) fs.mkdirSync(path.join(nodes, n), { recursive: true });
    conn.peer = await startAcp(['--nodes', nodes, '--node-stores', stores, '--base-url', w.server.baseURL, '--model', 'test-model']);
    await conn.peer.agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
    const b = await conn.peer.agent.request(acp.methods.agent.session.new, { cwd: path.join(nodes, 'b'), mcpServers: [] });
    w.server.enqueue({ text: 'b is here' });
    await conn.peer.agent.request(acp.methods.agent.session.prompt, { sessionId: b.sessionId, prompt: [{ type: 'text', text: 'hi' }] });
    const a = await conn.peer.agent.request(acp.methods.agent.session.new, { cwd: path.join(nodes, 'a'), mcpServers: [] });
    await conn.peer.agent.request(acp.methods.agent.session.setMode, { sessionId: a.sessionId, modeId: 'workspace-write' });
    const other = path.join(nodes, 'b');
    const otherStore = path.join(stores, 'b');
    w.server.enqueue(
      {
        toolCalls: [
          { name: 'write_file', arguments: { path: path.join(other, 'abs.txt'), content: 'x\n' } },
          { name: 'write_file', arguments: { path: '../b/rel.txt', content: 'x\n' } },
          { name: 'run_command', arguments: { command: `echo x > ${other}/cmd.txt; echo x > ../b/cmd2.txt; echo x > ${otherStore}/cmd3.txt` } },
        ],
      },
      { text: 'tried' },
    );
    const r = await conn.peer.agent.request(acp.methods.agent.session.prompt, { sessionId: a.sessionId, prompt: [{ type: 'text', text: 'attack' }] });
    assert.equal(r.stopReason, 'end_turn');
    // The three calls ran and were refused (the model heard why), not skipped.
    const results = (w.server.requests.at(-1)?.body.messages ?? []).filter((m) => m.role === 'tool').map((m) => String(m.content));
    assert.equal(results.length, 3, JSON.stringify(results));
    assert.match(results[0], /outside the workspace/);
    assert.match(results[1], /outside the workspace/);
    assert.match(results[2], /^Exit code: [1-9]/, 'the command ran in the sandbox, where the other node is not there to write to');
    for (const f of ['abs.txt', 'rel.txt', 'cmd.txt', 'cmd2.txt']) assert.equal(fs.existsSync(path.join(other, f)), false, `${f} written into the other node`);
    assert.equal(fs.existsSync(path.join(otherStore, 'cmd3.txt')), false, "written into the other node's store");
    assert.deepEqual(fs.readdirSync(other), [], 'the other node’s folder is as it was');
  });

  it('--nodes without --node-stores is a usage error (exit 2)', async () => {
    const r = await arbor(['acp', '--nodes', w.dir, '--base-url', w.server.baseURL]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--nodes and --node-stores go together/);
  });
});
