import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as acp from '@agentclientprotocol/sdk/unstable';
import { Script } from '../core/subagent/helpers';
import { type AcpPeer, agentText, assertJsonRpcOnly, peerPerTest, startAcp } from '../support/acp-peer';
import { cliWorld } from '../support/cli';
import { until } from '../support/harness';

const text = (t: string): acp.ContentBlock[] => [{ type: 'text', text: t }];
type Sub = acp.SubagentUpdate & { sessionUpdate: 'subagent_update' };
const subagentUpdates = (peer: AcpPeer): (Sub & { on: string })[] =>
  peer.updates.filter((n) => n.update.sessionUpdate === 'subagent_update').map((n) => ({ ...(n.update as Sub), on: n.sessionId }));

describe('acp: arbor acp announces its delegation tree (subagent_update)', () => {
  const w = cliWorld('arbor-acp-tree-', { realDir: true });
  const conn = peerPerTest();
  const open = async (subagents: boolean, extra: string[] = []) => {
    conn.peer = await startAcp([...w.common, ...extra], { subagents });
    return (await conn.peer.agent.request(acp.methods.agent.session.new, { cwd: w.ws, mcpServers: [] })).sessionId;
  };

  it('a delegating prompt: the child is announced on its parent (title = label), its events flow as its own session, its state ends idle', async () => {
    const script = new Script(w.server);
    script.on(
      'root',
      { toolCalls: [{ id: 'd1', name: 'subagent', arguments: { prompt: '[[kid]] count to three', label: 'counter' } }] },
      { text: 'The counter said 3.' },
    );
    script.on('kid', { text: 'one two three' });
    const rootId = await open(true);
    assert.equal(
      (await conn.peer!.agent.request(acp.methods.agent.session.prompt, { sessionId: rootId, prompt: text('[[root]] delegate the counting') })).stopReason,
      'end_turn',
    );
    const subs = subagentUpdates(conn.peer!);
    const kidId = subs[0].sessionId;
    assert.equal(subs[0].on, rootId);
    assert.equal(subs[0].title, 'counter');
    assert.deepEqual(subs[0].capabilities, { cancel: {} });
    const firstKid = conn.peer!.updates.findIndex((n) => n.sessionId === kidId);
    const announced = conn.peer!.updates.findIndex((n) => n.update.sessionUpdate === 'subagent_update');
    assert.ok(announced < firstKid, 'announced before any of its own traffic');
    assert.equal(agentText(conn.peer!.updates, kidId), 'one two three');
    const task = conn.peer!.updates.find((n) => n.sessionId === kidId && n.update.sessionUpdate === 'user_message_chunk');
    assert.equal((task?.update._meta as { arbor: { source: string } } | undefined)?.arbor.source, 'delegation');
    assert.deepEqual(subs.at(-1)?.state && { state: subs.at(-1)!.state!.state, stopReason: (subs.at(-1)!.state as { stopReason?: string }).stopReason }, {
      state: 'idle',
      stopReason: 'end_turn',
    });
    const call = conn.peer!.updates.find((n) => n.sessionId === rootId && n.update.sessionUpdate === 'tool_call')?.update as acp.ToolCall;
    assert.equal(call.kind, 'think');
    assert.equal(call.title, 'subagent: counter');
    assert.equal(agentText(conn.peer!.updates, rootId), 'The counter said 3.');

    // Loaded again by a client that understands subagents: the child is announced and replayed too.
    await conn.peer!.close();
    conn.peer = await startAcp(w.common, { subagents: true });
    await conn.peer.agent.request(acp.methods.agent.session.load, { sessionId: rootId, cwd: w.ws, mcpServers: [] });
    assert.deepEqual(
      subagentUpdates(conn.peer).map((s) => [s.sessionId, s.title, s.on]),
      [[kidId, 'counter', rootId]],
    );
    assert.equal(agentText(conn.peer.updates, kidId), 'one two three');
    assertJsonRpcOnly(conn.peer);
  });

  it('a client that did not advertise subagents sees only the parent: the child stays behind its tool call', async () => {
    const script = new Script(w.server);
    script.on('root', { toolCalls: [{ name: 'subagent', arguments: { prompt: '[[kid]] work', label: 'worker' } }] }, { text: 'done' });
    const rootId = await open(false);
    assert.equal((await conn.peer!.agent.request(acp.methods.agent.session.prompt, { sessionId: rootId, prompt: text('[[root]] go') })).stopReason, 'end_turn');
    assert.deepEqual(subagentUpdates(conn.peer!), []);
    assert.deepEqual([...new Set(conn.peer!.updates.map((n) => n.sessionId))], [rootId]);
    assert.ok(conn.peer!.updates.some((n) => n.update.sessionUpdate === 'tool_call_update' && n.update.status === 'completed'));
  });

  it('the client cancels a child alone: its turn stops, the parent goes on and answers end_turn', async () => {
    const script = new Script(w.server);
    script.on(
      'root',
      { toolCalls: [{ name: 'subagent', arguments: { prompt: '[[slow]] take your time', label: 'slow', mode: 'background' } }] },
      { text: 'started it' },
      { text: 'the slow one was stopped' },
    );
    script.on('slow', { text: 'thinking hard', chunkSize: 4, fault: { kind: 'stall', afterChunks: 1 } });
    const rootId = await open(true);
    const p = conn.peer!.agent.request(acp.methods.agent.session.prompt, { sessionId: rootId, prompt: text('[[root]] start the slow one') });
    await until(
      () =>
        subagentUpdates(conn.peer!).length > 0 &&
        conn.peer!.updates.some((n) => n.sessionId === subagentUpdates(conn.peer!)[0].sessionId && n.update.sessionUpdate === 'agent_message_chunk'),
      10_000,
    );
    const slowId = subagentUpdates(conn.peer!)[0].sessionId;
    await conn.peer!.agent.notify(acp.methods.agent.session.cancel, { sessionId: slowId });
    assert.equal((await p).stopReason, 'end_turn');
    const last = subagentUpdates(conn.peer!)
      .filter((s) => s.sessionId === slowId)
      .at(-1);
    assert.equal(last?.state?.state, 'idle');
    assert.equal((last?.state as { stopReason?: string } | undefined)?.stopReason, 'cancelled');
    assert.equal(agentText(conn.peer!.updates, rootId), 'started itthe slow one was stopped');
  });

  it("a child's escalated request goes to the root's session, with its label in the title and its lineage in _meta", async () => {
    const script = new Script(w.server);
    script.on('root', { toolCalls: [{ name: 'subagent', arguments: { prompt: '[[kid]] build', label: 'builder' } }] }, { text: 'built' });
    script.on(
      'kid',
      { toolCalls: [{ name: 'run_command', arguments: { command: 'echo built > out.txt', outsideSandbox: true, justification: 'test' } }] },
      { text: 'ok' },
    );
    const rootId = await open(true, ['--child-approval', 'escalate']);
    conn.peer!.onPermission = async () => ({ outcome: { outcome: 'selected', optionId: 'allow_once' } });
    assert.equal(
      (await conn.peer!.agent.request(acp.methods.agent.session.prompt, { sessionId: rootId, prompt: text('[[root]] build it') })).stopReason,
      'end_turn',
    );
    const kidId = subagentUpdates(conn.peer!)[0].sessionId;
    const asked = conn.peer!.permissions[0];
    assert.equal(asked.sessionId, rootId);
    assert.match(String(asked.toolCall.title), /^\[builder\] .*echo built > out\.txt/);
    assert.deepEqual((asked._meta as { arbor: { lineage: string[] } }).arbor.lineage, [kidId, rootId]);
    assert.equal(fs.readFileSync(path.join(w.ws, 'out.txt'), 'utf8'), 'built\n');
    assert.ok(
      subagentUpdates(conn.peer!).some((s) => s.sessionId === kidId && s.state?.state === 'requires_action'),
      'the child showed it waits on the human',
    );
  });
});
