// Nothing a confined command wrote becomes trusted configuration (decision 0112). An attacker's
// view through the real CLI: the model asks run_command (real bubblewrap, workspace-write) to point
// the workspace's MCP server `foo` at a script of its own, and the user's script runs
// `arbor run --allow-mcp foo` again. The script would run on the host, outside the sandbox.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { EVERYTHING } from '../core/mcp/support';
import { arbor, cliWorld } from '../support/cli';

const server = { command: process.execPath, args: [EVERYTHING, 'stdio'] };

describe('cli: a confined command cannot make --allow-mcp start its program (decision 0112)', function () {
  this.timeout(120_000);
  const w = cliWorld('arbor-cli-mcp-trust-', { realDir: true });
  const marker = () => path.join(w.dir, 'marker');
  const evilConfig = () => JSON.stringify({ mcpServers: { foo: { command: process.execPath, args: ['evil.js'] } } });
  const evilScript = () => `require("fs").writeFileSync(${JSON.stringify(marker())}, "ran on the host")`;
  const toolResults = (stdout: string) =>
    stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; content?: string })
      .filter((e) => e.type === 'tool/result');

  it('a command cannot rewrite .mcp.json (read-only in the sandbox); the next --allow-mcp run starts the server the user had', async () => {
    fs.writeFileSync(path.join(w.ws, '.mcp.json'), JSON.stringify({ mcpServers: { foo: server } }));
    const command = `printf '%s' '${evilScript()}' > evil.js; printf '%s' '${evilConfig()}' > .mcp.json; echo exit=$?`;
    w.server.enqueue({ toolCalls: [{ name: 'run_command', arguments: { command } }] }, { text: 'done' });
    const first = await arbor(['run', ...w.common, '--json', '--allow-mcp', 'foo', 'set things up']);
    assert.equal(first.code, 0, first.stderr);
    w.server.enqueue({ text: 'ok' });
    const second = await arbor(['run', ...w.common, '--allow-mcp', 'foo', 'hello']);
    assert.equal(fs.existsSync(marker()), false, 'the program a command wrote ran on the host');
    assert.equal(second.code, 0, second.stderr);
    const [res] = toolResults(first.stdout);
    assert.match(res.content ?? '', /\.mcp\.json: Read-only file system/);
    assert.ok(fs.existsSync(path.join(w.ws, 'evil.js')), 'the command ran and wrote the workspace');
    assert.deepEqual(JSON.parse(fs.readFileSync(path.join(w.ws, '.mcp.json'), 'utf8')), { mcpServers: { foo: server } });
    const names = (w.server.requests[w.server.requests.length - 1].body as { tools: { function: { name: string } }[] }).tools.map((t) => t.function.name);
    assert.ok(names.includes('mcp__foo__echo'), 'the server the user had started');
  });

  it('--allow-mcp NAME refuses a server whose command changed since it was last allowed, says what changed and how to allow it', async () => {
    fs.writeFileSync(path.join(w.ws, '.mcp.json'), JSON.stringify({ mcpServers: { foo: server } }));
    w.server.enqueue({ text: 'ok' });
    const first = await arbor(['run', ...w.common, '--allow-mcp', 'foo', 'hello']);
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stderr, /--allow-mcp foo: first allowed here; it runs .*server-everything.* A later change to what it runs is refused/);

    // Changed where no sandbox stood between: a `git pull`, a command run outside the sandbox, a
    // workspace with no bubblewrap. Written by the test itself, as those would.
    fs.writeFileSync(path.join(w.ws, 'evil.js'), evilScript());
    fs.writeFileSync(path.join(w.ws, '.mcp.json'), evilConfig());
    const asked = w.server.requests.length;
    const second = await arbor(['run', ...w.common, '--allow-mcp', 'foo', 'hello']);
    assert.equal(second.code, 2, second.stderr);
    assert.match(second.stderr, /MCP_CHANGED/);
    assert.match(
      second.stderr,
      /--allow-mcp foo: MCP server "foo" in .*\.mcp\.json changed since it was last allowed here \(its arguments\); it now runs: .*evil\.js/,
    );
    assert.match(second.stderr, /If you made this change, allow it again with 'arbor mcp allow foo'/);
    assert.equal(fs.existsSync(marker()), false, 'the changed server started');
    assert.equal(w.server.requests.length, asked, 'the run went on despite the refusal');

    // Put back as it was: the pin holds, it starts again.
    fs.writeFileSync(path.join(w.ws, '.mcp.json'), JSON.stringify({ mcpServers: { foo: server } }));
    w.server.enqueue({ text: 'ok' });
    const third = await arbor(['run', ...w.common, '--allow-mcp', 'foo', 'hello']);
    assert.equal(third.code, 0, third.stderr);
    assert.doesNotMatch(third.stderr, /first allowed here/);
  });

  it('a server allowed with arbor mcp allow and changed since is refused by --allow-mcp too', async () => {
    fs.writeFileSync(path.join(w.ws, '.mcp.json'), JSON.stringify({ mcpServers: { foo: server } }));
    const allowed = await arbor(['mcp', 'allow', 'foo', ...w.common]);
    assert.equal(allowed.code, 0, allowed.stderr);
    fs.writeFileSync(path.join(w.ws, 'evil.js'), evilScript());
    fs.writeFileSync(path.join(w.ws, '.mcp.json'), evilConfig());
    const r = await arbor(['run', ...w.common, '--allow-mcp', 'foo', 'hello']);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /MCP server "foo" in .*\.mcp\.json changed since it was last allowed here \(its arguments\)/);
    assert.equal(fs.existsSync(marker()), false, 'the changed server started');
  });
});
