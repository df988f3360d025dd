import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { HarnessConfig } from '../../../src/core/harness';
import type { McpDeployment } from '../../../src/core/mcp/deployment';
import { MemoryTrust } from '../../../src/core/mcp/trust-file';
import type { SessionEvent } from '../../../src/core/session/events';
import type { ChatBody } from '../../support/model-server';
import { scriptedApproval } from '../../support/scripted-approval';
import { ofType, subagentWorld } from '../subagent/helpers';
import { alive, everythingStdio, filesystemStdio } from './support';

const echo = (message: string) => ({ name: 'mcp__everything__echo', arguments: { message } });
const toolNames = (b: ChatBody) => (b.tools ?? []).map((t) => (t as { function: { name: string } }).function.name);
const results = (evs: readonly SessionEvent[], name: string) => ofType(evs, 'tool/result').filter((e) => e.name === name);

describe('mcp: tools through the policy and the tree', function () {
  this.timeout(60_000);
  const w = subagentWorld({}, { perTest: true, gates: false });
  const mcp = (d: Partial<McpDeployment> = {}): { mcp: McpDeployment } => ({ mcp: { servers: [everythingStdio()], ...d } });

  it('a call asks first (an action outside the sandbox), naming the server; allowed, the result is logged under mcp__<server>__<tool>', async () => {
    const port = scriptedApproval(['allow']);
    await w.setup({ ...mcp(), approval: 'ask', approvalPort: port });
    await w.t.h.mcp.whenSettled();
    w.script.on('root', { toolCalls: [echo('through arbor')] }, { text: 'done' });
    await w.root.accept('[[root]] go');
    await w.t.h.settle();
    assert.equal(port.requests.length, 1);
    assert.equal(port.requests[0].tool, 'mcp__everything__echo');
    assert.match(port.requests[0].summary, /Call echo on MCP server "everything"/);
    assert.match(port.requests[0].reason, /outside Arbor's sandbox/);
    const [r] = results(await w.t.h.store.readEvents(w.root.id), 'mcp__everything__echo');
    assert.equal(r.isError, false, r.content);
    assert.match(r.content, /through arbor/);
  });

  it('under the policy never: refused, and the server is never called', async () => {
    await w.setup({ ...mcp(), approval: 'never' });
    await w.t.h.mcp.whenSettled();
    w.script.on('root', { toolCalls: [echo('nope')] }, { text: 'done' });
    await w.root.accept('[[root]] go');
    await w.t.h.settle();
    const [r] = results(await w.t.h.store.readEvents(w.root.id), 'mcp__everything__echo');
    assert.equal(r.isError, true);
    assert.match(r.content, /approval policy is "never".*was not made/);
  });

  it('a server or tool the user allowed up front is called without asking', async () => {
    const port = scriptedApproval([]);
    await w.setup({ ...mcp({ allowTools: ['mcp__everything__echo'] }), approval: 'ask', approvalPort: port });
    await w.t.h.mcp.whenSettled();
    w.script.on('root', { toolCalls: [echo('pre-allowed')] }, { text: 'done' });
    await w.root.accept('[[root]] go');
    await w.t.h.settle();
    assert.equal(port.requests.length, 0);
    assert.match(results(await w.t.h.store.readEvents(w.root.id), 'mcp__everything__echo')[0].content, /pre-allowed/);
  });

  it('a child never gets an MCP tool its parent could not call: a filtered parent narrows every grandchild', async () => {
    await w.setup(mcp({ allowTools: ['everything'] }));
    await w.t.h.mcp.whenSettled();
    // root (all tools) → c (read_file and subagent only) → g (asks for the MCP tool, and gets only what c had).
    w.script.on('root', { toolCalls: [{ name: 'subagent', arguments: { prompt: '[[c]] go', tools: ['read_file', 'subagent'] } }] }, { text: 'root done' });
    w.script.on(
      'c',
      { toolCalls: [{ name: 'subagent', arguments: { prompt: '[[g]] go', tools: ['mcp__everything__echo', 'read_file'] } }] },
      { text: 'c done' },
    );
    w.script.on('g', { toolCalls: [echo('smuggled')] }, { text: 'g done' });
    w.script.on('open', { toolCalls: [{ name: 'subagent', arguments: { prompt: '[[o]] go' } }] }, { text: 'open done' });
    w.script.on('o', { toolCalls: [echo('child call')] }, { text: 'o done' });
    await w.root.accept('[[root]] go');
    await w.t.h.settle();
    assert.ok(toolNames(w.script.bodies('root')[0]).includes('mcp__everything__echo'));
    assert.ok(!toolNames(w.script.bodies('c')[0]).some((n) => n.startsWith('mcp__')));
    const g = toolNames(w.script.bodies('g')[0]);
    assert.ok(!g.some((n) => n.startsWith('mcp__')), `grandchild tools: ${g}`);
    assert.ok(g.includes('read_file'));
    const [child] = w.t.h.store.children(w.root.id);
    const [grand] = w.t.h.store.children(child.id);
    const [r] = results(await w.t.h.store.readEvents(grand.id), 'mcp__everything__echo');
    assert.equal(r.isError, true);
    assert.match(r.content, /unknown tool|not available|no tool/i);

    // Control: an unfiltered parent's child sees and calls the tool (allowed server: no ask).
    const open = await w.t.h.createSession();
    await open.accept('[[open]] go');
    await w.t.h.settle();
    const [o] = w.t.h.store.children(open.id);
    assert.match(results(await w.t.h.store.readEvents(o.id), 'mcp__everything__echo')[0].content, /child call/);
  });

  describe('read-only holds through an allowed server', () => {
    // server-filesystem serves the roots Arbor answers (the workspace), whatever folder it was started with.
    let outside = '';
    const write = (file: string) => ({ name: 'mcp__fs__write_file', arguments: { path: path.join(outside, file), content: 'written through MCP' } });
    const read = () => ({ name: 'mcp__fs__read_text_file', arguments: { path: path.join(outside, 'notes.txt') } });
    const start = async (more: Partial<HarnessConfig>): Promise<void> => {
      await w.setup({ mcp: { servers: [filesystemStdio(os.tmpdir())], allowTools: ['fs'] }, ...more });
      outside = w.t.workspace;
      fs.writeFileSync(path.join(outside, 'notes.txt'), 'kept\n');
      await w.t.h.mcp.whenSettled();
    };

    it('a read-only child of a deployment that allowed the server up front (policy never) writes nothing through it, and reads what it declares read-only', async () => {
      await start({ approval: 'never', sandbox: 'workspace-write' });
      // A reviewer agent the project defines as read-only (decision 0056): what it is given, it cannot widen.
      fs.mkdirSync(path.join(outside, '.arbor/agents'), { recursive: true });
      fs.writeFileSync(path.join(outside, '.arbor/agents/reader.md'), '---\nname: reader\ndescription: Reads.\nsandbox: read-only\n---\nRead only.\n');
      w.script.on(
        'root',
        { toolCalls: [write('by-root.txt'), { name: 'subagent', arguments: { agent: 'reader', prompt: '[[ro]] go' } }] },
        { text: 'root done' },
      );
      w.script.on('ro', { toolCalls: [write('by-child.txt'), write('sub/by-child.txt'), read()] }, { text: 'ro done' });
      await w.root.accept('[[root]] go');
      await w.t.h.settle();
      // Control: the workspace-write root's allowed call wrote.
      assert.equal(fs.readFileSync(path.join(outside, 'by-root.txt'), 'utf8'), 'written through MCP');
      const [child] = w.t.h.store.children(w.root.id);
      const evs = await w.t.h.store.readEvents(child.id);
      const writes = results(evs, 'mcp__fs__write_file');
      assert.equal(writes.length, 2);
      for (const r of writes) {
        assert.equal(r.isError, true);
        assert.match(r.content, /was not made\. This session is read-only.*write_file is not one/);
      }
      assert.deepEqual(fs.readdirSync(outside).sort(), ['.arbor', 'by-root.txt', 'notes.txt']);
      const [r] = results(evs, 'mcp__fs__read_text_file');
      assert.equal(r.isError, false, r.content);
      assert.match(r.content, /kept/);
    });

    it('a read-only root under "ask": the allowed server\'s writing tool asks, saying why; refused, nothing is written', async () => {
      const port = scriptedApproval(['deny']);
      await start({ approval: 'ask', approvalPort: port, sandbox: 'read-only' });
      w.script.on('root', { toolCalls: [write('asked.txt'), read()] }, { text: 'done' });
      await w.root.accept('[[root]] go');
      await w.t.h.settle();
      assert.equal(port.requests.length, 1, 'only the write asks');
      assert.equal(port.requests[0].tool, 'mcp__fs__write_file');
      assert.match(port.requests[0].reason, /read-only and the server does not declare write_file read-only/);
      assert.equal(fs.existsSync(path.join(outside, 'asked.txt')), false);
      assert.match(results(await w.t.h.store.readEvents(w.root.id), 'mcp__fs__read_text_file')[0].content, /kept/);
    });
  });

  it('a workspace server the user has not allowed does not start; allowed once, it starts and stays allowed', async () => {
    let book: Record<string, string> | undefined;
    const trust = new MemoryTrust(
      () => book,
      (v) => {
        book = v;
      },
    );
    await w.setup(mcp({ servers: [everythingStdio('everything', {}, 'workspace')], trust }));
    await w.t.h.mcp.whenSettled();
    const [s] = w.t.h.mcp.states();
    assert.equal(s.phase, 'needs-allow');
    assert.equal(w.t.h.mcp.pidOf('everything'), undefined);
    assert.ok(!w.t.h.tools.view().some((t) => t.name.startsWith('mcp__')));
    await w.t.h.mcp.allow('everything');
    await w.t.h.mcp.whenSettled();
    assert.equal(w.t.h.mcp.states()[0].phase, 'ready');
    assert.ok(alive(w.t.h.mcp.pidOf('everything')));
    // The next deployment with the same memory starts it at once.
    w.t.h.mcp.setServers({ servers: [everythingStdio('everything', {}, 'workspace')], trust });
    await w.t.h.mcp.whenSettled();
    assert.equal(w.t.h.mcp.states()[0].phase, 'ready');
  });

  it('in an untrusted workspace a workspace server cannot be allowed at all', async () => {
    await w.setup(
      mcp({
        servers: [everythingStdio('everything', {}, 'workspace')],
        workspaceTrusted: false,
        trust: new MemoryTrust(
          () => ({}),
          () => undefined,
        ),
      }),
    );
    assert.equal(w.t.h.mcp.states()[0].phase, 'needs-allow');
    assert.match(w.t.h.mcp.states()[0].why ?? '', /not trusted/);
    await assert.rejects(w.t.h.mcp.allow('everything'), /not trusted: trust the workspace first/);
  });

  it('secrets in a server env never reach the log or the store, even when the server prints its environment', async () => {
    const secret = 'sk-live-DO-NOT-STORE-42';
    await w.setup(mcp({ servers: [everythingStdio('everything', { API_TOKEN: secret })], allowTools: ['everything'] }));
    await w.t.h.mcp.whenSettled();
    w.script.on('root', { toolCalls: [{ name: 'mcp__everything__get-env', arguments: {} }] }, { text: 'done' });
    await w.root.accept('[[root]] go');
    await w.t.h.settle();
    const [r] = results(await w.t.h.store.readEvents(w.root.id), 'mcp__everything__get-env');
    assert.match(r.content, /"API_TOKEN": "\[redacted\]"/);
    const storeDir = w.t.storeDir;
    await w.t.h.close();
    const leaks: string[] = [];
    const walk = (d: string) => {
      for (const f of fs.readdirSync(d, { withFileTypes: true })) {
        const p = path.join(d, f.name);
        if (f.isDirectory()) walk(p);
        else if (f.isFile() && fs.readFileSync(p).includes(secret)) leaks.push(p);
      }
    };
    walk(storeDir);
    assert.deepEqual(leaks, []);
  });

  it('the change stream says when a server moves, and closing the harness ends its process', async () => {
    await w.setup(mcp());
    let moves = 0;
    w.t.h.observe((c) => {
      if (c.type === 'mcp') moves++;
    });
    w.t.h.mcp.setServers({ servers: [everythingStdio('second')] });
    await w.t.h.mcp.whenSettled();
    assert.ok(moves >= 2, `mcp changes: ${moves}`);
    const pid = w.t.h.mcp.pidOf('second');
    assert.ok(alive(pid));
    await w.t.h.close();
    assert.equal(alive(pid), false);
  });
});
