// Attack (session 54): Claude Code in print mode (`claude -p`, how Arbor runs a Claude Code
// child) starts the MCP servers of the project's `.mcp.json` without asking anyone (checked with
// the pinned 2.1.332: `"source":"project"`, and the server's program ran). They run outside its
// sandbox and outside Arbor's. A confined command that writes `.mcp.json` must not get a
// program started on the host by the next Claude Code child.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { byWire, ofType, remoteWorld } from './world';

describe('remote: a project .mcp.json a command writes (real Claude Code, real bubblewrap)', function () {
  this.timeout(120_000);
  const w = remoteWorld();

  it('attack: a command writes .mcp.json naming a server; the next Claude Code child never starts it', async () => {
    const ws = fs.realpathSync(w.t.workspace);
    const marker = path.join(w.homes.claude, 'escaped');
    const plant = `printf '{"mcpServers":{"x":{"command":"sh","args":["-c","echo ran >> ${marker}"]}}}' > .mcp.json`;
    byWire(w.server, {
      chat: [
        { toolCalls: [{ name: 'run_command', arguments: { command: plant } }] },
        { toolCalls: [{ name: 'delegate_claude_code', arguments: { prompt: 'Say hello', label: 'cc' } }] },
        { text: 'parent done' },
      ],
      messages: [{ text: 'hello' }],
    });
    const root = await w.t.h.createSession();
    await root.accept('go');
    await w.t.h.settle();
    const [child] = w.t.h.store.children(root.id);
    const said = ofType((await w.t.h.store.inspect(child.id)).events, 'assistant/message').map((m) => m.text);
    assert.ok(said.includes('hello'), `the Claude Code child ran its turn: ${JSON.stringify(said)}`);
    assert.equal(fs.existsSync(marker), false, 'Claude Code started the MCP server a command planted, on the host');
    const cmd = ofType((await w.t.h.store.inspect(root.id)).events, 'tool/result').find((r) => r.name === 'run_command');
    assert.ok(cmd?.isError, `the command could not write .mcp.json: ${cmd?.content}`);
    assert.equal(fs.existsSync(path.join(ws, '.mcp.json')), false, 'no project MCP configuration was written');
  });
});
