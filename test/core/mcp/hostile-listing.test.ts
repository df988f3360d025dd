import assert from 'node:assert/strict';
import { McpManager } from '../../../src/core/mcp/manager';
import { ofType, subagentWorld } from '../subagent/helpers';
import { managerPerTest, RAW_SECRET, raw, toolCtx } from './support';

// What a hostile server lists and answers, past what an SDK server would send: a raw JSON-RPC
// server (test/support/mcp-raw-server.mjs) against the client.

const SECRET = RAW_SECRET;

const obj = (properties: Record<string, unknown> = {}) => ({ type: 'object', properties });

describe('mcp: a hostile listing', function () {
  this.timeout(120_000);
  const mgr = managerPerTest();
  const { named } = mgr;

  it("runs no regular expression of a server's output schema on the host: a catastrophic pattern does not stall it", async () => {
    const tool = { name: 're', inputSchema: obj(), outputSchema: obj({ s: { type: 'string', pattern: '^(a|aa)+$' } }) };
    const s = `${'a'.repeat(40)}b`;
    mgr.m = new McpManager(
      { tools: mgr.tools, roots: [] },
      { servers: [raw('r', { tools: [tool], calls: { re: { content: [{ type: 'text', text: s }], structuredContent: { s } } } })], allowTools: ['r'] },
    );
    await mgr.m.whenSettled();
    const t = named('mcp__r__re');
    assert.ok(t, JSON.stringify(mgr.m.states()));
    // The event loop's longest pause while the call runs: a backtracking regex would hold it for minutes.
    let last = Date.now();
    let worst = 0;
    const tick = setInterval(() => {
      worst = Math.max(worst, Date.now() - last);
      last = Date.now();
    }, 20);
    const t0 = Date.now();
    const r = await t.execute({}, toolCtx());
    clearInterval(tick);
    assert.ok(Date.now() - t0 < 5000, `the call took ${Date.now() - t0} ms`);
    assert.ok(worst < 2000, `the event loop stood still for ${worst} ms`);
    assert.equal(r.isError, false, r.content);
    assert.match(r.content, /a{40}b/);
  });

  it("one malformed tool costs that tool, not the server's listing, and the state says which", async () => {
    const tools0 = [
      { name: 'good', inputSchema: obj({ q: { type: 'string' } }) },
      { name: 'bad-type', inputSchema: { type: 'string' } },
      { name: 'bad-ref', inputSchema: obj(), outputSchema: { type: 'object', $ref: '#/nope' } },
      { name: 42 },
    ];
    mgr.m = new McpManager({ tools: mgr.tools, roots: [] }, { servers: [raw('r', { tools: tools0 })], allowTools: ['r'] });
    await mgr.m.whenSettled();
    const [st] = mgr.m.states();
    assert.equal(st.phase, 'ready', JSON.stringify(st));
    assert.ok(named('mcp__r__good'), `tools: ${mgr.tools.view().map((t) => t.name)}; state: ${JSON.stringify(st)}`);
    assert.ok(named('mcp__r__bad-ref'), 'an output schema Arbor never uses is no reason to leave a tool out');
    assert.equal(st.toolCount, 2);
    assert.match(st.why ?? '', /2 tools are not offered: not valid MCP: "bad-type" \(inputSchema\.type: .*\), an entry without a name \(name: /);
  });

  it("an input schema Arbor's argument check cannot read is left out, with its reason, and never breaks a call", async () => {
    const tools0 = [
      { name: 'enum5', inputSchema: obj({ q: { type: 'string', enum: 5 } }) },
      { name: 'req5', inputSchema: obj({ q: { type: 'object', required: 5, properties: {} } }) },
      { name: 'fine', inputSchema: obj({ q: { type: 'string', enum: ['a', 'b'] } }) },
    ];
    mgr.m = new McpManager({ tools: mgr.tools, roots: [] }, { servers: [raw('r', { tools: tools0 })], allowTools: ['r'] });
    await mgr.m.whenSettled();
    const [st] = mgr.m.states();
    assert.ok(named('mcp__r__fine'));
    assert.ok(!named('mcp__r__enum5'), 'a schema whose enum is not a list is not offered');
    assert.ok(!named('mcp__r__req5'), 'a schema whose required is not a list is not offered');
    assert.match(st.why ?? '', /"enum5".*q\.enum/);
    assert.match(st.why ?? '', /"req5".*q\.required/);
  });

  it('a definition nested a million levels deep, listed after a list_changed, is left out; nothing is thrown past the manager', async () => {
    const thrown: unknown[] = [];
    const onRejection = (e: unknown) => thrown.push(e);
    process.on('unhandledRejection', onRejection);
    try {
      mgr.m = new McpManager(
        { tools: mgr.tools, roots: [] },
        {
          servers: [raw('r', { tools: [{ name: 'poke', inputSchema: obj() }], calls: { poke: { $listChanged: true, content: [] } }, laterDeep: 1_000_000 })],
          allowTools: ['r'],
        },
      );
      await mgr.m.whenSettled();
      await named('mcp__r__poke')!.execute({}, toolCtx());
      for (let i = 0; i < 100 && !/deep/.test(mgr.m.states()[0].why ?? ''); i++) await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(thrown.map(String), []);
      const [st] = mgr.m.states();
      assert.equal(st.phase, 'ready');
      assert.ok(named('mcp__r__poke'), 'the other tools stay');
      assert.ok(!named('mcp__r__deep'));
      assert.match(st.why ?? '', /not offered: not valid MCP: "deep" \(nested deeper than 64 levels\)/);
    } finally {
      process.off('unhandledRejection', onRejection);
    }
  });

  it('a tool whose name carries a configured secret is not offered: the name would reach the model and the log', async () => {
    const listed = [`x_${SECRET}`, 'y', 'read_file'].map((name) => ({ name, inputSchema: obj() }));
    mgr.m = new McpManager({ tools: mgr.tools, roots: [] }, { servers: [raw('r', { tools: listed }, { MODE: 'read' })] });
    await mgr.m.whenSettled();
    const names = mgr.tools.view().map((t) => t.name);
    assert.ok(names.includes('mcp__r__y'));
    assert.ok(names.includes('mcp__r__read_file'), 'a short configured value (a mode, a level) takes no tool away');
    assert.ok(!names.some((n) => n.includes(SECRET)), `offered: ${names}`);
    const [st] = mgr.m.states();
    assert.ok(!JSON.stringify(st).includes(SECRET), JSON.stringify(st));
    assert.match(st.why ?? '', /its name holds a value of the server's configuration/);
  });
});

describe('mcp: a hostile listing through the harness', function () {
  this.timeout(60_000);
  const w = subagentWorld({}, { perTest: true, gates: false });

  it("a call of a tool whose schema Arbor's argument check cannot read ends as a tool result; the turn completes", async () => {
    const tools0 = [{ name: 'enum5', inputSchema: obj({ q: { type: 'string', enum: 5 } }) }];
    await w.setup({ mcp: { servers: [raw('r', { tools: tools0 })], allowTools: ['r'] } });
    await w.t.h.mcp.whenSettled();
    w.script.on('root', { toolCalls: [{ name: 'mcp__r__enum5', arguments: { q: 'x' } }] }, { text: 'done' });
    await w.root.accept('[[root]] go');
    await w.t.h.settle();
    const evs = await w.t.h.store.readEvents(w.root.id);
    const [r] = ofType(evs, 'tool/result');
    assert.ok(r, `no tool result: ${JSON.stringify(ofType(evs, 'turn/end'))}`);
    assert.equal(r.isError, true);
    assert.deepEqual(
      ofType(evs, 'turn/end').map((e) => e.stopReason),
      ['completed'],
    );
  });
});
