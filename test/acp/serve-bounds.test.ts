import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as acp from '@agentclientprotocol/sdk/unstable';
import { MAX_LIVE_SESSIONS, MAX_WORKSPACES } from '../../src/acp/server';
import { EVERYTHING } from '../core/mcp/support';
import { type AcpPeer, agentText, assertJsonRpcOnly, startAcp } from '../support/acp-peer';
import { cliWorld } from '../support/cli';
import { until } from '../support/harness';

// A client `arbor acp` cannot trust may open sessions and folders without end: each session and
// each workspace it keeps live is memory, and a process that grows until it dies takes every
// prompt of every session with it. Idle sessions past the cap are released (their logs are on
// disk), a session answering a prompt never is, and folders past their cap are closed or refused.

const text = (t: string): acp.ContentBlock[] => [{ type: 'text', text: t }];
const dataCode = (e: unknown): string | undefined => ((e as acp.RequestError).data as { code?: string } | undefined)?.code;
/**
 * The agent's live JS heap, MB: a heap snapshot (taken after a full collection) on SIGUSR2, its
 * objects' sizes summed. Resident memory is no measure of what is kept: V8 grows its heap lazily
 * (tens of MB either way over a thousand sessions), while what is live is exact here.
 */
async function liveHeapMb(peer: AcpPeer, dir: string): Promise<number> {
  const before = new Set(fs.readdirSync(dir));
  peer.child.kill('SIGUSR2');
  // The snapshot is whole once it parses (it is written in pieces).
  let snap: { snapshot: { meta: { node_fields: string[] } }; nodes: number[] } | undefined;
  let file: string | undefined;
  for (const end = Date.now() + 60_000; !snap && Date.now() < end; await new Promise((r) => setTimeout(r, 200))) {
    file ??= fs.readdirSync(dir).find((f) => !before.has(f) && f.endsWith('.heapsnapshot'));
    if (file === undefined) continue;
    try {
      snap = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
    } catch {
      // not whole yet
    }
  }
  if (!snap) throw new Error('no heap snapshot');
  fs.rmSync(path.join(dir, file!));
  const fields = snap.snapshot.meta.node_fields;
  const self = fields.indexOf('self_size');
  let total = 0;
  for (let i = self; i < snap.nodes.length; i += fields.length) total += snap.nodes[i]!;
  return total / (1024 * 1024);
}
/** The agent process's resident memory, MB (reported beside the heap). */
const rssMb = (peer: AcpPeer): number => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${peer.child.pid}/status`, 'utf8'))![1]) / 1024;
/** `n` session/new requests, `batch` at a time (a client need not wait for one answer to send the next). */
async function flood(peer: AcpPeer, cwd: string, n: number, batch = 25): Promise<void> {
  for (let i = 0; i < n; i += batch)
    await Promise.all(Array.from({ length: Math.min(batch, n - i) }, () => peer.agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] })));
}
/** The user and agent text a session/load replayed for a session. */
function replayed(peer: AcpPeer, sessionId: string, from: number): { user: string; agent: string } {
  const mine = peer.updates.slice(from).filter((u) => u.sessionId === sessionId);
  const user = mine
    .filter((u) => u.update.sessionUpdate === 'user_message_chunk')
    .map((u) => ((u.update as { content: acp.ContentBlock }).content as { text?: string }).text ?? '')
    .join('');
  return { user, agent: agentText(mine, sessionId) };
}

describe('acp: arbor acp bounds what a client keeps live', function () {
  this.timeout(90_000);
  // Measured on 2 cores under load: before the bound each session kept ~7.8 KB of heap (an agent,
  // its feed entries); after it, 0.4–1.9 KB (the store's catalog row, as for any stored session).
  const WARM = 300;
  const FLOOD = 1800;
  const LINE_KB_PER_SESSION = 3;
  const w = cliWorld('arbor-acp-bounds-', { realDir: true });
  let peer: AcpPeer | undefined;
  afterEach(async () => {
    if (peer && peer.child.exitCode === null) await peer.close();
    peer = undefined;
  });

  it('thousands of session/new leave the memory bounded and the process serving; a running prompt is never released; an idle session comes back whole', async () => {
    const snaps = path.join(w.dir, 'snaps');
    fs.mkdirSync(snaps);
    peer = await startAcp(w.common, { nodeArgs: ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${snaps}`] });
    // An idle session with history, and one answering a prompt (its reply stalls until cancelled).
    const idle = (await peer.agent.request(acp.methods.agent.session.new, { cwd: w.ws, mcpServers: [] })).sessionId;
    w.server.enqueue({ text: 'answer one' });
    assert.equal((await peer.agent.request(acp.methods.agent.session.prompt, { sessionId: idle, prompt: text('question one') })).stopReason, 'end_turn');
    const busy = (await peer.agent.request(acp.methods.agent.session.new, { cwd: w.ws, mcpServers: [] })).sessionId;
    w.server.enqueue({ text: 'still working', chunkSize: 4, fault: { kind: 'stall', afterChunks: 1 } });
    const running = peer.agent.request(acp.methods.agent.session.prompt, { sessionId: busy, prompt: text('long job') });
    await until(() => agentText(peer!.updates, busy).length > 0, 30_000);

    await flood(peer, w.ws, WARM);
    const [heap0, rss0] = [await liveHeapMb(peer, snaps), rssMb(peer)];
    await flood(peer, w.ws, FLOOD - WARM);
    const [heap1, rss1] = [await liveHeapMb(peer, snaps), rssMb(peer)];
    const perSession = ((heap1 - heap0) * 1024) / (FLOOD - WARM);
    assert.ok(
      perSession < LINE_KB_PER_SESSION,
      `the live heap grew ${(heap1 - heap0).toFixed(1)} MB over ${FLOOD - WARM} sessions, ${perSession.toFixed(1)} KB each (line ${LINE_KB_PER_SESSION} KB; heap ${heap0.toFixed(1)} MB when warm; RSS ${rss0.toFixed(0)} → ${rss1.toFixed(0)} MB)`,
    );
    assert.equal(peer.child.exitCode, null, 'the agent is serving');

    // The running prompt was kept: its cancel reaches it and it answers.
    await peer.agent.notify(acp.methods.agent.session.cancel, { sessionId: busy });
    assert.equal((await running).stopReason, 'cancelled');
    assert.doesNotMatch(peer.stderr(), /cancel for unknown session/);

    // The idle one was released (more than the cap came after it): a load brings its history back, in order, and it goes on.
    const from = peer.updates.length;
    await peer.agent.request(acp.methods.agent.session.load, { sessionId: idle, cwd: w.ws, mcpServers: [] });
    assert.deepEqual(replayed(peer, idle, from), { user: 'question one', agent: 'answer one' });
    w.server.enqueue({ text: 'answer two' });
    assert.equal((await peer.agent.request(acp.methods.agent.session.prompt, { sessionId: idle, prompt: text('question two') })).stopReason, 'end_turn');
    const sent = JSON.stringify(w.server.requests.at(-1)!.body.messages);
    assert.match(sent, /question one[\s\S]*answer one[\s\S]*question two/, 'the model saw the whole conversation');
    assertJsonRpcOnly(peer);
  });

  it('a released session a client prompts without loading it comes back by itself', async () => {
    peer = await startAcp(w.common);
    const first = (await peer.agent.request(acp.methods.agent.session.new, { cwd: w.ws, mcpServers: [] })).sessionId;
    w.server.enqueue({ text: 'kept' });
    await peer.agent.request(acp.methods.agent.session.prompt, { sessionId: first, prompt: text('remember') });
    await flood(peer, w.ws, MAX_LIVE_SESSIONS);
    w.server.enqueue({ text: 'again' });
    assert.equal((await peer.agent.request(acp.methods.agent.session.prompt, { sessionId: first, prompt: text('more') })).stopReason, 'end_turn');
    assert.match(JSON.stringify(w.server.requests.at(-1)!.body.messages), /remember[\s\S]*kept[\s\S]*more/);
  });

  it(`past ${MAX_WORKSPACES} folders each with a live session the next is refused (TOO_MANY_WORKSPACES); once idle, the oldest closes and its sessions still load, with the MCP servers their client gave them`, async () => {
    peer = await startAcp(w.common);
    await peer.agent.request(acp.methods.agent.session.new, { cwd: w.ws, mcpServers: [] });
    const folders = Array.from({ length: MAX_WORKSPACES }, (_, i) => path.join(w.dir, `p${i}`));
    for (const f of folders) fs.mkdirSync(f);
    const ids: string[] = [];
    // The started-for folder is one workspace: the rest of the cap are these.
    // The first folder's client gives it an MCP server: a close to bound memory must not take it away.
    const everything: acp.McpServer = { name: 'everything', command: process.execPath, args: [EVERYTHING, 'stdio'], env: [] };
    const open = folders.slice(0, MAX_WORKSPACES - 1);
    for (let i = 0; i < open.length; i++)
      ids.push((await peer.agent.request(acp.methods.agent.session.new, { cwd: open[i]!, mcpServers: i === 0 ? [everything] : [] })).sessionId);
    const last = folders[MAX_WORKSPACES - 1]!;
    await assert.rejects(
      peer.agent.request(acp.methods.agent.session.new, { cwd: last, mcpServers: [] }),
      (e: acp.RequestError) =>
        e.code === -32600 && dataCode(e) === 'TOO_MANY_WORKSPACES' && /at most 32/.test(e.message) && /start another arbor acp/.test(e.message),
    );
    assert.equal(fs.existsSync(path.join(last, '.arbor')), false, 'nothing was made in the refused folder');
    // The folders' sessions go idle past the session cap: a new folder now closes the oldest idle one.
    await flood(peer, w.ws, MAX_LIVE_SESSIONS);
    await peer.agent.request(acp.methods.agent.session.new, { cwd: last, mcpServers: [] });
    const from = peer.updates.length;
    await peer.agent.request(acp.methods.agent.session.load, { sessionId: ids[1]!, cwd: folders[1]!, mcpServers: [] });
    assert.equal(peer.updates.length, from, 'an empty session replays nothing');
    w.server.enqueue({ text: 'back' });
    assert.equal((await peer.agent.request(acp.methods.agent.session.prompt, { sessionId: ids[1]!, prompt: text('hi') })).stopReason, 'end_turn');
    // The first folder was closed; a new session there opens it again with a server of its own, and
    // the servers clients gave it before come back with it: its released session finds its tools.
    await peer.agent.request(acp.methods.agent.session.new, { cwd: folders[0]!, mcpServers: [{ ...everything, name: 'other' }] });
    w.server.enqueue({ text: 'still here' });
    assert.equal((await peer.agent.request(acp.methods.agent.session.prompt, { sessionId: ids[0]!, prompt: text('tools?') })).stopReason, 'end_turn');
    const tools = (w.server.requests.at(-1)!.body as { tools?: { function: { name: string } }[] }).tools?.map((t) => t.function.name) ?? [];
    assert.ok(tools.includes('mcp__everything__echo'), `the client's server is back: ${tools.join(', ')}`);
    assert.ok(tools.includes('mcp__other__echo'), `the new session's server too: ${tools.join(', ')}`);
    assertJsonRpcOnly(peer);
  });

  it('the home folder, or one above it, as a new root is refused (HOME_FOLDER); a project inside it is a root of its own', async () => {
    const home = path.join(w.dir, 'home');
    const project = path.join(home, 'project');
    fs.mkdirSync(project, { recursive: true });
    peer = await startAcp(w.common, { env: { HOME: home } });
    for (const cwd of [home, w.dir])
      await assert.rejects(
        peer.agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] }),
        (e: acp.RequestError) => e.code === -32602 && dataCode(e) === 'HOME_FOLDER' && /open a project folder inside it/.test(e.message),
        cwd,
      );
    assert.equal(fs.existsSync(path.join(home, '.arbor', 'store')), false, 'no store was made in the home folder');
    await peer.agent.request(acp.methods.agent.session.new, { cwd: project, mcpServers: [] });
    assert.ok(fs.existsSync(path.join(project, '.arbor', 'store')));
  });
});
