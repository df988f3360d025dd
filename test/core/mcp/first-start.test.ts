import assert from 'node:assert/strict';
import type { McpServerConfig } from '../../../src/core/mcp/config';
import type { ChatBody } from '../../support/model-server';
import { ofType, subagentWorld, waitFor } from '../subagent/helpers';
import { EVERYTHING } from './support';

// A model request waits for MCP servers still on their first start (decision 0055 amended): the
// first turn after an open (a reload, a restart, a queue recovered at open) carries the tools the
// user configured, not a head without them that the model answers blind and the prompt cache
// then misses. The wait is bounded and a Stop ends it.

const toolNames = (b: ChatBody) => (b.tools ?? []).map((t) => (t as { function: { name: string } }).function.name);

/** server-everything over stdio, started only after `delayS` seconds (a server that downloads or compiles first). */
function slowEverything(name: string, delayS: number): McpServerConfig {
  return {
    name,
    source: 'user',
    transport: { kind: 'stdio', command: 'sh', args: ['-c', `sleep ${delayS}; exec "${process.execPath}" "${EVERYTHING}" stdio`], env: {} },
  };
}

/** A stdio server that never answers `initialize`. */
function mute(name: string): McpServerConfig {
  return {
    name,
    source: 'user',
    transport: { kind: 'stdio', command: process.execPath, args: ['-e', 'setInterval(() => {}, 1000); process.stdin.resume();'], env: {} },
  };
}

describe('mcp: the first request after an open waits for servers still starting', function () {
  this.timeout(60_000);
  const w = subagentWorld({}, { perTest: true, gates: false });

  it('a turn accepted while a server starts: its first request carries the server tools, and the model can call them', async () => {
    await w.setup({ mcp: { servers: [slowEverything('slow', 1.5)], allowTools: ['slow'] } });
    assert.equal(w.t.h.mcp.states()[0].phase, 'starting');
    w.script.on('root', { toolCalls: [{ name: 'mcp__slow__echo', arguments: { message: 'there' } }] }, { text: 'done' });
    await w.root.accept('[[root]] go');
    await w.t.h.settle();
    const [first] = w.script.bodies('root');
    assert.ok(toolNames(first).includes('mcp__slow__echo'), `the first request's tools: ${toolNames(first).join(', ')}`);
    const [r] = ofType(await w.t.h.store.readEvents(w.root.id), 'tool/result');
    assert.equal(r.isError, false, r.content);
    assert.match(r.content, /there/);
  });

  it('a server that never answers: the request goes without it once its start gives up (bounded), and the turn completes', async () => {
    await w.setup({ mcp: { servers: [mute('mute')], startTimeoutMs: 1_500 } });
    w.script.on('root', { text: 'answered without it' });
    const t0 = Date.now();
    await w.root.accept('[[root]] go');
    await w.t.h.settle();
    assert.ok(Date.now() - t0 >= 1_000, 'the request waited for the start');
    const [first] = w.script.bodies('root');
    assert.ok(!toolNames(first).some((n) => n.startsWith('mcp__mute')));
    const end = ofType(await w.t.h.store.readEvents(w.root.id), 'turn/end')[0];
    assert.equal(end.stopReason, 'completed');
    await waitFor(() => w.t.h.mcp.states()[0].phase === 'failed', 'the start to give up');
  });

  it('a Stop while the request waits: the turn ends interrupted at once and no request is made', async () => {
    await w.setup({ mcp: { servers: [mute('mute')], startTimeoutMs: 30_000 } });
    w.script.on('root', { text: 'never asked' });
    await w.root.accept('[[root]] go');
    await waitFor(() => w.root.session.events.some((e) => e.type === 'turn/start'), 'the turn to start');
    const t0 = Date.now();
    await w.root.cancel('interrupted');
    await w.t.h.settle();
    assert.ok(Date.now() - t0 < 10_000, 'the Stop did not wait for the server');
    assert.equal(w.script.bodies('root').length, 0);
    const end = ofType(await w.t.h.store.readEvents(w.root.id), 'turn/end')[0];
    assert.equal(end.stopReason, 'interrupted');
  });

  it('nothing starting: no wait at all (a server already listed, or one waiting for an allow)', async () => {
    await w.setup({ mcp: { servers: [slowEverything('slow', 0)] } });
    await w.t.h.mcp.whenSettled();
    const ac = new AbortController();
    assert.equal(w.t.h.mcp.firstStarts(ac.signal), undefined);
  });
});
