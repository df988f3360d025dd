import assert from 'node:assert/strict';
import * as path from 'node:path';
import type { McpServerConfig } from '../../../src/core/mcp/config';
import { parseServer } from '../../../src/core/mcp/config';
import { MAX_SERVER_BYTES, MAX_TOOLS_PER_SERVER } from '../../../src/core/mcp/limits';
import { McpManager } from '../../../src/core/mcp/manager';
import type { ChatBody } from '../../support/model-server';
import { repoRoot } from '../../support/repo-root';
import { scriptedApproval } from '../../support/scripted-approval';
import { ofType, subagentWorld } from '../subagent/helpers';
import { managerPerTest, toolCtx } from './support';

// An MCP server is the user's choice, but what it says is input: these specs run a hostile one
// (test/support/mcp-hostile-server.mjs) against the client and the harness.

const HOSTILE = path.join(repoRoot(), 'test/support/mcp-hostile-server.mjs');
const SECRET = 'hostile-secret-8f3a1c';

function hostile(name: string, tools: string[], env: Record<string, string> = {}): McpServerConfig {
  return {
    name,
    source: 'user',
    transport: { kind: 'stdio', command: process.execPath, args: [HOSTILE, JSON.stringify(tools)], env: { HOSTILE_ID: name, HOSTILE_SECRET: SECRET, ...env } },
  };
}

describe('mcp: a hostile server', function () {
  this.timeout(60_000);
  const mgr = managerPerTest();
  const { named } = mgr;

  it("cannot shadow another server's tool through the `_` between server and tool names", async () => {
    // Server "a_" offers `x` (mcp__a___x); server "a" offers `_x`, which maps to the same name.
    const victim = hostile('a_', ['x']);
    mgr.m = new McpManager({ tools: mgr.tools, roots: [] }, { servers: [victim], allowTools: ['a_', 'a'] });
    await mgr.m.whenSettled();
    assert.match((await named('mcp__a___x')!.execute({}, toolCtx())).content, /from a_/);
    mgr.m.addServers([hostile('a', ['_x', 'y'])]);
    await mgr.m.whenSettled();
    assert.ok(named('mcp__a__y'), 'the other server is up');
    const r = await named('mcp__a___x')!.execute({}, toolCtx());
    assert.match(r.content, /from a_/, `the victim's tool now answers: ${r.content}`);
    // And a config cannot name a server so that its names run into another's.
    const bad = parseServer('a_', { command: 'x' }, 'user', 'test');
    assert.ok('message' in bad, 'a server name ending in "_" is refused');
  });

  it('never puts its configured secrets in a progress line, a description, a title or a schema', async () => {
    mgr.m = new McpManager({ tools: mgr.tools, roots: [] }, { servers: [hostile('h', ['leak'])], allowTools: ['h'] });
    await mgr.m.whenSettled();
    const t = named('mcp__h__leak')!;
    assert.ok(!JSON.stringify({ d: t.description, p: t.parameters }).includes(SECRET), `tool definition: ${t.description} ${JSON.stringify(t.parameters)}`);
    const seen: string[] = [];
    const r = await t.execute({}, toolCtx({ progress: (p) => seen.push(p) }));
    assert.equal(r.isError, false, r.content);
    assert.ok(seen.length > 0, 'progress arrived');
    assert.ok(!seen.join('\n').includes(SECRET), `progress: ${seen.join(' | ')}`);
  });

  it("a configured value that is also JSON's own text (true) is redacted in a tool's definition without breaking it", async () => {
    mgr.m = new McpManager({ tools: mgr.tools, roots: [] }, { servers: [hostile('h', ['leak'], { DEBUG: 'true', LEVEL: 'null' })], allowTools: ['h'] });
    await mgr.m.whenSettled();
    const t = named('mcp__h__leak');
    assert.ok(t, `the tool is offered (state: ${JSON.stringify(mgr.m.states())})`);
    assert.equal(typeof t.parameters, 'object');
  });

  it('a call that never answers ends on Stop; a server that dies mid-call answers an error at once', async () => {
    mgr.m = new McpManager({ tools: mgr.tools, roots: [] }, { servers: [hostile('h', ['hang', 'die'])], allowTools: ['h'], backoffMs: 60_000 });
    await mgr.m.whenSettled();
    const stop = new AbortController();
    setTimeout(() => stop.abort(), 300);
    const t0 = Date.now();
    const hung = await named('mcp__h__hang')!.execute({}, toolCtx({ signal: stop.signal }));
    assert.equal(hung.isError, true);
    assert.ok(Date.now() - t0 < 5000, `Stop took ${Date.now() - t0} ms`);
    const t1 = Date.now();
    const died = await named('mcp__h__die')!.execute({}, toolCtx());
    assert.equal(died.isError, true, died.content);
    assert.ok(Date.now() - t1 < 5000, `a dead server took ${Date.now() - t1} ms`);
  });

  it('offers at most 128 of its tools and none whose definition is huge, and says so in its state', async () => {
    mgr.m = new McpManager(
      { tools: mgr.tools, roots: [] },
      { servers: [hostile('h', ['big', 'small'], { HOSTILE_MANY: '1000', HOSTILE_HUGE: 'big=2048' })], allowTools: ['h'] },
    );
    await mgr.m.whenSettled();
    const [st] = mgr.m.states();
    assert.equal(st.phase, 'ready', JSON.stringify(st));
    const mine = mgr.tools.view().filter((t) => t.name.startsWith('mcp__h__'));
    assert.equal(mine.length, MAX_TOOLS_PER_SERVER);
    assert.equal(st.toolCount, MAX_TOOLS_PER_SERVER);
    assert.ok(!named('mcp__h__big'), 'a 2 MB definition is not offered');
    assert.ok(named('mcp__h__small'), 'the listing order is kept: the first tools are offered');
    const bytes = mine.reduce((n, t) => n + JSON.stringify({ n: t.name, d: t.description, p: t.parameters }).length, 0);
    assert.ok(bytes <= MAX_SERVER_BYTES, `${bytes} bytes of definitions`);
    assert.match(st.why ?? '', /tool "big" \(20\d\d KB\) not offered: a definition may take at most 32 KB/);
    assert.match(st.why ?? '', /more tools are not offered: at most 128 tools of one server are/);
  });

  it('a flood of list_changed notices costs at most two more listings, not one each', async () => {
    mgr.m = new McpManager({ tools: mgr.tools, roots: [] }, { servers: [hostile('h', ['flood', 'lists'], { HOSTILE_FLOOD: '500' })], allowTools: ['h'] });
    await mgr.m.whenSettled();
    assert.equal((await named('mcp__h__flood')!.execute({}, toolCtx())).content, 'flooded');
    // The notices are on the wire before the call's answer; give the client a moment to read them.
    await new Promise((r) => setTimeout(r, 500));
    const n = Number((await named('mcp__h__lists')!.execute({}, toolCtx())).content);
    assert.ok(n >= 2 && n <= 3, `${n} listings for 500 notices (the first listing, then at most two)`);
    assert.equal(mgr.m.states()[0].phase, 'ready');
  });
});

describe('mcp: a hostile server through the harness', function () {
  this.timeout(60_000);
  const w = subagentWorld({}, { perTest: true, gates: false });

  it('a tool annotated read-only still asks under `ask`, and no secret reaches the model request', async () => {
    const port = scriptedApproval(['deny']);
    await w.setup({ mcp: { servers: [hostile('h', ['peek'])] }, approval: 'ask', approvalPort: port });
    await w.t.h.mcp.whenSettled();
    w.script.on('root', { toolCalls: [{ name: 'mcp__h__peek', arguments: {} }] }, { text: 'done' });
    await w.root.accept('[[root]] go');
    await w.t.h.settle();
    assert.equal(port.requests.length, 1, 'asked');
    const [r] = ofType(await w.t.h.store.readEvents(w.root.id), 'tool/result').filter((e) => e.name === 'mcp__h__peek');
    assert.equal(r.isError, true);
    const bodies: ChatBody[] = w.script.bodies('root');
    assert.ok(bodies.length > 0);
    for (const b of bodies) assert.ok(!JSON.stringify(b.tools ?? []).includes(SECRET), 'a configured secret reached the model in a tool definition');
  });
});
