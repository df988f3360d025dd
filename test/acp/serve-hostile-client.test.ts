import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as acp from '@agentclientprotocol/sdk/unstable';
import { Script } from '../core/subagent/helpers';
import { answerTo, assertJsonRpcOnly, peerPerTest, startAcp } from '../support/acp-peer';
import { arbor, cliWorld } from '../support/cli';

// An ACP client `arbor acp` cannot trust (an editor plugin with a bug, a hostile script): what it
// sends may be huge, deep, aimed at a subagent, or name folders it should not; the agent answers
// each with a JSON-RPC error that says what to do, and keeps serving.

const text = (t: string): acp.ContentBlock[] => [{ type: 'text', text: t }];
const dataCode = (e: unknown): string | undefined => ((e as acp.RequestError).data as { code?: string } | undefined)?.code;
describe('acp: arbor acp against a hostile or buggy client', () => {
  const w = cliWorld('arbor-acp-hostile-', { realDir: true });
  const conn = peerPerTest();

  it('a line past the message limit is refused with its request id (MESSAGE_TOO_LARGE), not the end of the connection; the session goes on', async () => {
    conn.peer = await startAcp(w.common);
    const { sessionId } = await conn.peer.agent.request(acp.methods.agent.session.new, { cwd: w.ws, mcpServers: [] });
    const huge = 'a'.repeat(33 * 1024 * 1024);
    conn.peer.raw(
      `{"jsonrpc":"2.0","id":900001,"method":"session/prompt","params":{"sessionId":"${sessionId}","prompt":[{"type":"text","text":"${huge}"}]}}\n`,
    );
    const refused = await answerTo(conn.peer, 900001);
    assert.equal(refused.error?.code, -32600);
    assert.equal(refused.error?.data?.code, 'MESSAGE_TOO_LARGE');
    assert.match(refused.error!.message, /32 MiB/);
    assert.match(refused.error!.data!.message!, /resource_link/, 'it says what to do instead');
    assert.equal(w.server.requests.length, 0, 'nothing of it reached the model');
    w.server.enqueue({ text: 'still here' });
    assert.equal((await conn.peer.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: text('small') })).stopReason, 'end_turn');
    assert.match(conn.peer.stderr(), /refused a message of \d+ bytes \(session\/prompt, id 900001\)/);
    assertJsonRpcOnly(conn.peer);
  });

  it('JSON nested past the depth limit is refused (MESSAGE_TOO_DEEP); a deep line that is no JSON-RPC at all does not end the connection', async () => {
    conn.peer = await startAcp(w.common);
    const { sessionId } = await conn.peer.agent.request(acp.methods.agent.session.new, { cwd: w.ws, mcpServers: [] });
    const deep = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;
    // The SDK echoes an invalid message in its error: at this depth, that echo overflowed the stack and closed the connection.
    conn.peer.raw(`${deep(20_000)}\n`);
    conn.peer.raw(
      `{"jsonrpc":"2.0","id":900002,"method":"session/prompt","params":{"sessionId":"${sessionId}","prompt":[{"type":"text","text":"x","_meta":${deep(300)}}]}}\n`,
    );
    const refused = await answerTo(conn.peer, 900002);
    assert.equal(refused.error?.code, -32600);
    assert.equal(refused.error?.data?.code, 'MESSAGE_TOO_DEEP');
    assert.equal(conn.peer.child.exitCode, null);
    // A string full of brackets is text, not nesting.
    w.server.enqueue({ text: 'fine' });
    assert.equal(
      (await conn.peer.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: text(`${'{['.repeat(5000)} "\\" ]`) })).stopReason,
      'end_turn',
    );
    assertJsonRpcOnly(conn.peer);
  });

  it('a resource_link to a file outside the workspace is passed as its link, never read; the model reading it is refused', async () => {
    const secret = path.join(w.dir, 'secret.txt');
    fs.writeFileSync(secret, 'TOP-SECRET-VALUE');
    conn.peer = await startAcp(w.common);
    const { sessionId } = await conn.peer.agent.request(acp.methods.agent.session.new, { cwd: w.ws, mcpServers: [] });
    w.server.enqueue({ toolCalls: [{ id: 'r1', name: 'read_file', arguments: { path: secret } }] }, { text: 'could not' });
    const prompt: acp.ContentBlock[] = [
      { type: 'text', text: 'summarise' },
      { type: 'resource_link', name: 'secret', uri: `file://${secret}` },
    ];
    assert.equal((await conn.peer.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt })).stopReason, 'end_turn');
    const sent = JSON.stringify(w.server.requests.map((r) => r.body));
    assert.match(sent, /\[secret\]\(file:\/\/[^)]*secret\.txt\)/, 'the link is in the prompt as a link');
    assert.doesNotMatch(sent, /TOP-SECRET-VALUE/, 'the file is read neither for the prompt nor by the tool');
    const result = conn.peer.updates.find((n) => n.update.sessionUpdate === 'tool_call_update')?.update as acp.ToolCallUpdate;
    assert.equal(result.status, 'failed');
    assertJsonRpcOnly(conn.peer);
  });

  it('__proto__ and friends as a method, a session id or inside params are plain names: not found, not inherited', async () => {
    conn.peer = await startAcp(w.common);
    conn.peer.raw('{"jsonrpc":"2.0","id":900010,"method":"__proto__","params":{}}\n');
    assert.equal((await answerTo(conn.peer, 900010)).error?.code, -32601);
    // A cwd only on the params' prototype is no cwd.
    conn.peer.raw(`{"jsonrpc":"2.0","id":900011,"method":"session/new","params":{"mcpServers":[],"__proto__":{"cwd":"${w.ws}"}}}\n`);
    assert.equal((await answerTo(conn.peer, 900011)).error?.code, -32602);
    for (const [n, id] of [
      [900012, '__proto__'],
      [900013, 'constructor'],
      [900014, 'hasOwnProperty'],
    ] as const) {
      conn.peer.raw(`{"jsonrpc":"2.0","id":${n},"method":"session/set_mode","params":{"sessionId":"${id}","modeId":"full-access"}}\n`);
      assert.equal((await answerTo(conn.peer, n)).error?.data?.code, 'UNKNOWN_SESSION', id);
    }
    const { sessionId } = await conn.peer.agent.request(acp.methods.agent.session.new, { cwd: w.ws, mcpServers: [] });
    w.server.enqueue({ text: 'plain' });
    conn.peer.raw(
      `{"jsonrpc":"2.0","id":900015,"method":"session/prompt","params":{"sessionId":"${sessionId}","_meta":{"__proto__":{"x":1}},"prompt":[{"type":"text","text":"hi","_meta":{"__proto__":{"type":"image"},"constructor":{"prototype":{"p":1}}}}]}}\n`,
    );
    assert.equal(((await answerTo(conn.peer, 900015)).result as { stopReason: string }).stopReason, 'end_turn');
    assertJsonRpcOnly(conn.peer);
  });

  it('session/set_mode on an announced subagent is refused (NOT_A_ROOT): a client cannot widen a child past its parent', async () => {
    const script = new Script(w.server);
    script.on('root', { toolCalls: [{ name: 'subagent', arguments: { prompt: '[[kid]] try', label: 'kid' } }] }, { text: 'root done' });
    script.on(
      'kid',
      { toolCalls: [{ name: 'run_command', arguments: { command: 'true', outsideSandbox: true, justification: 'test' } }] },
      { toolCalls: [{ name: 'write_file', arguments: { path: 'pwned.txt', content: 'widened' } }] },
      { text: 'kid done' },
    );
    conn.peer = await startAcp([...w.common, '--child-approval', 'escalate'], { subagents: true });
    const { sessionId } = await conn.peer.agent.request(acp.methods.agent.session.new, { cwd: w.ws, mcpServers: [] });
    await conn.peer.agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: 'read-only' });
    let widen: unknown;
    conn.peer.onPermission = async (req) => {
      // While the read-only child waits on the human, the client tries to make it full-access.
      const kid = (req._meta as { arbor: { sessionId: string } }).arbor.sessionId;
      widen = await conn.peer!.agent.request(acp.methods.agent.session.setMode, { sessionId: kid, modeId: 'full-access' }).then(
        () => 'accepted',
        (e: unknown) => e,
      );
      return { outcome: { outcome: 'selected', optionId: 'reject_once' } };
    };
    assert.equal((await conn.peer.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: text('[[root]] go') })).stopReason, 'end_turn');
    assert.equal(conn.peer.permissions.length, 1);
    assert.notEqual(widen, 'accepted');
    assert.equal((widen as acp.RequestError).code, -32600);
    assert.equal(dataCode(widen), 'NOT_A_ROOT');
    assert.equal(fs.existsSync(path.join(w.ws, 'pwned.txt')), false, 'the child stayed read-only');
    assertJsonRpcOnly(conn.peer);
  });

  it('session/list and session/load of a folder without a store leave no store behind; a folder with one is listed', async () => {
    const other = path.join(w.dir, 'other');
    fs.mkdirSync(other);
    conn.peer = await startAcp(w.common);
    assert.deepEqual((await conn.peer.agent.request(acp.methods.agent.session.list, { cwd: other })).sessions, []);
    await assert.rejects(
      conn.peer.agent.request(acp.methods.agent.session.load, { sessionId: 's-guessed', cwd: other, mcpServers: [] }),
      (e: acp.RequestError) => e.code === -32002 && dataCode(e) === 'UNKNOWN_SESSION',
    );
    assert.deepEqual(fs.readdirSync(other), [], 'a look at a folder wrote nothing into it');
    const { sessionId } = await conn.peer.agent.request(acp.methods.agent.session.new, { cwd: other, mcpServers: [] });
    await conn.peer.close();
    conn.peer = await startAcp(w.common);
    assert.deepEqual(
      (await conn.peer.agent.request(acp.methods.agent.session.list, { cwd: other })).sessions.map((s) => s.sessionId),
      [sessionId],
    );
    // A session of that folder is not one of the started-for folder's.
    await assert.rejects(
      conn.peer.agent.request(acp.methods.agent.session.load, { sessionId, cwd: w.ws, mcpServers: [] }),
      (e: acp.RequestError) => dataCode(e) === 'UNKNOWN_SESSION',
    );
    assertJsonRpcOnly(conn.peer);
  });

  it("a session in a folder above the started-for one cannot rewrite that folder's store (--store) without asking", async () => {
    conn.peer = await startAcp(w.common);
    const first = (await conn.peer.agent.request(acp.methods.agent.session.new, { cwd: w.ws, mcpServers: [] })).sessionId;
    w.server.enqueue({ text: 'remember me' });
    await conn.peer.agent.request(acp.methods.agent.session.prompt, { sessionId: first, prompt: text('hello') });
    const catalog = path.join(w.store, 'catalog.wal');
    const before = fs.readFileSync(catalog);
    // The client opens the parent folder (it holds ws and the store): a workspace of its own.
    const { sessionId } = await conn.peer.agent.request(acp.methods.agent.session.new, { cwd: w.dir, mcpServers: [] });
    w.server.enqueue(
      { toolCalls: [{ id: 'w1', name: 'write_file', arguments: { path: 'store/catalog.wal', content: 'gone' } }] },
      { toolCalls: [{ id: 'c1', name: 'run_command', arguments: { command: 'echo gone > store/catalog.wal' } }] },
      { text: 'tried' },
    );
    assert.equal((await conn.peer.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: text('wipe') })).stopReason, 'end_turn');
    assert.equal(conn.peer.permissions.length, 1, 'the write asked (and the client refused)');
    assert.match(String(conn.peer.permissions[0].toolCall.title), /catalog\.wal/);
    // The journal only grows (this prompt's own records): what was in it is still there.
    assert.deepEqual(fs.readFileSync(catalog).subarray(0, before.length), before, 'neither the file tool nor a sandboxed command changed it');
    assert.equal(await conn.peer.close(), 0);
    const log = await arbor(['log', first, '--store', w.store]);
    assert.equal(log.code, 0, log.stderr);
    assert.match(log.stdout, /remember me/);
  });

  it('the file system root as cwd (here through a symlink) is refused (FILESYSTEM_ROOT): a workspace there would be the whole disk', async () => {
    const link = path.join(w.dir, 'to-root');
    fs.symlinkSync('/', link);
    const had = fs.existsSync('/.arbor');
    conn.peer = await startAcp(w.common);
    try {
      await assert.rejects(
        conn.peer.agent.request(acp.methods.agent.session.new, { cwd: link, mcpServers: [] }),
        (e: acp.RequestError) => e.code === -32602 && dataCode(e) === 'FILESYSTEM_ROOT' && /open a project folder/.test(e.message),
      );
      await assert.rejects(
        conn.peer.agent.request(acp.methods.agent.session.new, { cwd: '/', mcpServers: [] }),
        (e: acp.RequestError) => dataCode(e) === 'FILESYSTEM_ROOT',
      );
      assert.equal(fs.existsSync('/.arbor'), had, 'nothing was written at /');
    } finally {
      await conn.peer.close();
      // The agent before its fix made a store at /: this test's, removed.
      if (!had) fs.rmSync('/.arbor', { recursive: true, force: true });
    }
  });

  // Node's recursive mkdir never returns where mkdir says ENOENT under a folder that exists (procfs):
  // it spun a thread-pool thread for good, and four such froze every file operation of the process.
  describe('a folder that cannot hold new folders (/proc)', () => {
    /** The answer within a bound, or 'no answer'; the agent is killed (by its pid) when it cannot end. */
    const within = <T>(p: Promise<T>, ms: number) =>
      Promise.race([
        p.then(
          (v) => ({ v }),
          (e: unknown) => ({ e }),
        ),
        new Promise<'no answer'>((r) => setTimeout(() => r('no answer'), ms)),
      ]);
    afterEach(async () => {
      if (conn.peer && conn.peer.child.exitCode === null && (await within(conn.peer.close(), 10_000)) === 'no answer') conn.peer.child.kill('SIGKILL');
    });

    it('as a session cwd: a clear error, not a session/new that never answers; the agent goes on and exits', async () => {
      conn.peer = await startAcp(w.common);
      const r = await within(conn.peer.agent.request(acp.methods.agent.session.new, { cwd: '/proc', mcpServers: [] }), 20_000);
      assert.notEqual(r, 'no answer', 'session/new answered');
      const err = (r as { e?: acp.RequestError }).e;
      assert.equal(err?.code, -32603);
      assert.equal(dataCode(err), 'WORKSPACE_UNAVAILABLE');
      assert.match(err!.message, /\/proc\/\.arbor\/store cannot be made .*writable/);
      w.server.enqueue({ text: 'fine' });
      const { sessionId } = await conn.peer.agent.request(acp.methods.agent.session.new, { cwd: w.ws, mcpServers: [] });
      assert.equal((await conn.peer.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: text('x') })).stopReason, 'end_turn');
      assert.equal(await within(conn.peer.close(), 10_000).then((x) => (x === 'no answer' ? x : (x as { v: number | null }).v)), 0);
    });

    it("a full-access write there from the model fails at once; the session's next prompt runs", async () => {
      conn.peer = await startAcp(w.common);
      const { sessionId } = await conn.peer.agent.request(acp.methods.agent.session.new, { cwd: w.ws, mcpServers: [] });
      await conn.peer.agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: 'full-access' });
      w.server.enqueue(
        { toolCalls: [{ id: 'p1', name: 'write_file', arguments: { path: '/proc/self/arbor-made/x.txt', content: 'x' } }] },
        { text: 'could not' },
      );
      const r = await within(conn.peer.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: text('write there') }), 20_000);
      assert.notEqual(r, 'no answer', 'the prompt answered');
      const result = conn.peer.updates.find((n) => n.update.sessionUpdate === 'tool_call_update')?.update as acp.ToolCallUpdate;
      assert.equal(result.status, 'failed');
      w.server.enqueue({ text: 'next' });
      assert.equal((await conn.peer.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: text('next') })).stopReason, 'end_turn');
    });
  });
});
