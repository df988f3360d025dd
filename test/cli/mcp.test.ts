import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { EVERYTHING } from '../core/mcp/support';
import { arbor, cliWorld } from '../support/cli';

const server = { command: process.execPath, args: [EVERYTHING, 'stdio'] };

describe('cli: MCP servers (arbor mcp, --mcp-config, --allow-mcp)', function () {
  this.timeout(90_000);
  const w = cliWorld('arbor-cli-mcp-');

  it("a workspace .mcp.json server waits for 'arbor mcp allow'; allowed once, it is remembered for this workspace", async () => {
    fs.writeFileSync(path.join(w.ws, '.mcp.json'), JSON.stringify({ mcpServers: { everything: server, 'bad server': { command: 'x' } } }));
    const before = await arbor(['mcp', 'list', ...w.common]);
    assert.equal(before.code, 0, before.stderr);
    assert.match(before.stdout, /^everything {2}needs-allow {2}\(.*\.mcp\.json\): defined in .*; it starts once you allow it$/m);
    assert.match(before.stderr, /server "bad server": server name "bad server" must be/);

    const allowed = await arbor(['mcp', 'allow', 'everything', ...w.common]);
    assert.equal(allowed.code, 0, allowed.stderr);
    assert.match(allowed.stdout, /^everything {2}ready \d+ tools/m);

    const after = await arbor(['mcp', 'list', '--json', ...w.common]);
    const [state] = after.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.equal(state.phase, 'ready');
    assert.ok(state.toolCount >= 10);

    const unknown = await arbor(['mcp', 'allow', 'nope', ...w.common]);
    assert.notEqual(unknown.code, 0);
    assert.match(unknown.stderr, /no MCP server named "nope"/);
  });

  it('arbor run: --mcp-config servers start (the user chose them); the model calls a tool under --approval auto', async () => {
    const file = path.join(w.dir, 'mine.json');
    fs.writeFileSync(file, JSON.stringify({ mcpServers: { mine: server } }));
    w.server.enqueue({ toolCalls: [{ name: 'mcp__mine__echo', arguments: { message: 'from the cli' } }] }, { text: 'echoed' });
    const r = await arbor(['run', ...w.common, '--mcp-config', file, '--approval', 'auto', '--json', 'use the echo tool']);
    assert.equal(r.code, 0, r.stderr);
    const result = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .find((e) => e.type === 'tool/result');
    assert.equal(result.name, 'mcp__mine__echo');
    assert.match(result.content, /from the cli/);
    const body = w.server.requests[0].body as { tools: { function: { name: string } }[] };
    assert.ok(body.tools.some((t) => t.function.name === 'mcp__mine__echo'));
  });

  it('arbor run: a workspace server not allowed is not started (said on stderr); --allow-mcp starts it for this run', async () => {
    fs.writeFileSync(path.join(w.ws, '.mcp.json'), JSON.stringify({ mcpServers: { everything: server } }));
    w.server.enqueue({ text: 'nothing to do' });
    const r = await arbor(['run', ...w.common, 'hello']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /MCP server "everything" not started: .*Allow it with 'arbor mcp allow everything' or --allow-mcp everything/);
    const names = (w.server.requests[0].body as { tools: { function: { name: string } }[] }).tools.map((t) => t.function.name);
    assert.ok(!names.some((n) => n.startsWith('mcp__')));

    w.server.enqueue({ text: 'ok' });
    const r2 = await arbor(['run', ...w.common, '--allow-mcp', 'everything', 'hello']);
    assert.equal(r2.code, 0, r2.stderr);
    const names2 = (w.server.requests[1].body as { tools: { function: { name: string } }[] }).tools.map((t) => t.function.name);
    assert.ok(names2.includes('mcp__everything__echo'));
  });
});
