// Attack (permissions never widen): a read-only parent delegates to Claude Code. Arbor runs
// `claude -p --permission-mode default --disallowedTools Edit,Write,…`, but Claude Code also reads
// its own settings — the user's ($CLAUDE_CONFIG_DIR/settings.json) and the project's
// (.claude/settings.json, settings.local.json) — whose permission rules and default mode may allow
// what the parent's sandbox does not.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { TestHarness } from '../support/harness';
import { byWire, finishedChild, ofType, remoteSettings, remoteWorld } from './world';

describe('remote: Claude Code settings never widen a read-only child (real Claude Code)', function () {
  this.timeout(120_000);
  const w = remoteWorld();

  const LOOSENERS: readonly { how: string; plant: (t: TestHarness) => void }[] = [
    {
      how: 'the user settings allow Bash',
      plant: () => fs.writeFileSync(path.join(w.homes.claude, 'settings.json'), JSON.stringify({ permissions: { allow: ['Bash'] } })),
    },
    {
      how: 'the user settings default to bypassPermissions',
      plant: () => fs.writeFileSync(path.join(w.homes.claude, 'settings.json'), JSON.stringify({ permissions: { defaultMode: 'bypassPermissions' } })),
    },
    {
      how: "the project's .claude/settings.json allows Bash",
      plant: (t) => {
        fs.mkdirSync(path.join(t.workspace, '.claude'), { recursive: true });
        fs.writeFileSync(path.join(t.workspace, '.claude', 'settings.json'), JSON.stringify({ permissions: { allow: ['Bash'] } }));
      },
    },
    {
      how: "the project's .claude/settings.local.json allows Bash in a project the user trusted",
      plant: (t) => {
        const ws = fs.realpathSync(t.workspace);
        fs.mkdirSync(path.join(ws, '.claude'), { recursive: true });
        fs.writeFileSync(path.join(ws, '.claude', 'settings.local.json'), JSON.stringify({ permissions: { allow: ['Bash'] } }));
        fs.writeFileSync(path.join(w.homes.claude, '.claude.json'), JSON.stringify({ projects: { [ws]: { hasTrustDialogAccepted: true } } }));
      },
    },
  ];

  for (const l of LOOSENERS)
    it(`attack: ${l.how}; the read-only child still writes nothing`, async () => {
      const t = await w.reopen({ sandbox: 'read-only' });
      l.plant(t);
      byWire(w.server, {
        messages: [{ toolCalls: [{ name: 'Bash', arguments: { command: 'echo x > made-by-claude.txt', description: 'write' } }] }, { text: 'tried' }],
      });
      const { run, r } = await finishedChild(t, 'claude-code', 'write a file');
      assert.equal(r.stopReason, 'completed', r.error);
      const s = await t.h.store.inspect(run.id);
      const res = ofType(s.events, 'tool/result').find((x) => x.name === 'claude:Bash');
      assert.equal(fs.existsSync(path.join(t.workspace, 'made-by-claude.txt')), false, `the read-only claude child wrote a file: ${res?.content}`);
      assert.equal(res?.isError, true);
    });
});

describe('remote: Claude Code settings never widen a workspace-write child (real Claude Code)', function () {
  this.timeout(120_000);
  const w = remoteWorld();

  it('attack: the user settings allow Bash; the child cannot write outside the workspace, yet still runs a read-only command', async () => {
    fs.writeFileSync(path.join(w.homes.claude, 'settings.json'), JSON.stringify({ permissions: { allow: ['Bash'] } }));
    const outside = path.join(w.homes.claude, 'outside.txt');
    byWire(w.server, {
      messages: [
        {
          toolCalls: [
            { name: 'Bash', arguments: { command: `echo x > ${outside}`, description: 'write outside' } },
            { name: 'Bash', arguments: { command: 'ls', description: 'list' } },
          ],
        },
        { text: 'tried' },
      ],
    });
    fs.writeFileSync(path.join(w.t.workspace, 'visible.txt'), 'x');
    const { run, r } = await finishedChild(w.t, 'claude-code', 'write outside');
    assert.equal(r.stopReason, 'completed', r.error);
    const results = ofType((await w.t.h.store.inspect(run.id)).events, 'tool/result');
    assert.equal(fs.existsSync(outside), false, `the workspace-write claude child wrote outside the workspace: ${results[0]?.content}`);
    assert.deepEqual(
      results.map((x) => [x.name, x.isError]),
      [
        ['claude:Bash', true],
        ['claude:Bash', false],
      ],
    );
    assert.match(results[1].content, /visible\.txt/, 'a read-only command still runs');
  });
});

describe('remote: a Claude Code child never starts an MCP server its parent has not allowed (real Claude Code)', function () {
  this.timeout(120_000);
  const w = remoteWorld();

  it("attack: the repository's own .mcp.json names a server Arbor never allowed; the confined Claude Code child does not start it", async () => {
    const marker = path.join(w.homes.claude, 'mcp-ran');
    fs.writeFileSync(path.join(w.t.workspace, '.mcp.json'), JSON.stringify({ mcpServers: { x: { command: 'sh', args: ['-c', `echo ran >> ${marker}`] } } }));
    byWire(w.server, { messages: [{ text: 'hello' }] });
    const { r } = await finishedChild(w.t, 'claude-code', 'say hello');
    assert.equal(r.stopReason, 'completed', r.error);
    assert.equal(r.text, 'hello');
    assert.equal(fs.existsSync(marker), false, 'the Claude Code child started a server of .mcp.json that the parent may not use, on the host');
  });
});

// A user whose key comes from Claude Code's own settings (`apiKeyHelper`, the `env` table): a confined
// child no longer reads them, and its failure must say so and where the key goes instead.
describe('remote: a confined Claude Code child without its settings file says where its key goes (real Claude Code)', function () {
  this.timeout(120_000);
  const w = remoteWorld();
  const keyFromSettings = async (sandbox: 'workspace-write' | 'full-access') => {
    fs.writeFileSync(
      path.join(w.homes.claude, 'settings.json'),
      JSON.stringify({ apiKeyHelper: 'echo from-helper', env: { ANTHROPIC_BASE_URL: `http://127.0.0.1:${w.server.port}` } }),
    );
    const s = remoteSettings(w.server, w.homes);
    assert.ok(s.claudeCode);
    // No key in Arbor's settings, nor inherited from the test's own environment.
    const env = { ANTHROPIC_API_KEY: '', CLAUDE_CODE_MAX_RETRIES: '0', HOME: w.homes.claude };
    const t = await w.reopen({ sandbox, remote: { ...s, claudeCode: { ...s.claudeCode, command: s.claudeCode.command, env } } });
    byWire(w.server, { messages: [{ text: 'hello from claude' }] });
    return (await finishedChild(t, 'claude-code', 'say hi')).r;
  };

  it('full-access reads the apiKeyHelper of its settings and runs', async () => {
    const r = await keyFromSettings('full-access');
    assert.equal(r.stopReason, 'completed', r.error);
    assert.equal(r.text, 'hello from claude');
  });

  it('workspace-write fails without the key, and the error says why and to use arbor.remote.claudeCode.env', async () => {
    const r = await keyFromSettings('workspace-write');
    assert.equal(r.stopReason, 'error');
    assert.match(r.error ?? '', /^Claude Code: Not logged in/);
    assert.match(r.error ?? '', /REMOTE_CLAUDE_NO_KEY/);
    assert.match(r.error ?? '', /without its settings files \(--setting-sources '', decision 0122\)/);
    assert.match(r.error ?? '', /apiKeyHelper/);
    assert.match(r.error ?? '', /arbor\.remote\.claudeCode\.env \(ANTHROPIC_API_KEY/);
  });
});

describe('remote: a confined Claude Code child still gets the project’s instructions, from Arbor (real Claude Code)', function () {
  this.timeout(120_000);
  const w = remoteWorld();

  it('a read-only child: the user’s and the repository’s CLAUDE.md and AGENTS.md reach the model, while the settings still do not widen it', async () => {
    const t = await w.reopen({ sandbox: 'read-only' });
    fs.writeFileSync(path.join(w.homes.claude, 'settings.json'), JSON.stringify({ permissions: { allow: ['Bash'] } }));
    fs.writeFileSync(path.join(w.homes.claude, 'CLAUDE.md'), 'USER-CLAUDE-MARK: answer tersely.\n');
    fs.writeFileSync(path.join(t.workspace, 'CLAUDE.md'), 'REPO-CLAUDE-MARK: run the tests with make check.\n');
    fs.writeFileSync(path.join(t.workspace, 'AGENTS.md'), 'REPO-AGENTS-MARK: keep files short.\n');
    byWire(w.server, {
      messages: [{ toolCalls: [{ name: 'Bash', arguments: { command: 'echo x > made-by-claude.txt', description: 'write' } }] }, { text: 'tried' }],
    });
    const first = w.server.requests.length;
    const { r } = await finishedChild(t, 'claude-code', 'write a file');
    assert.equal(r.stopReason, 'completed', r.error);
    const turns = w.server.requests.slice(first).filter((q) => q.wire === 'messages' && JSON.stringify(q.body.messages).includes('write a file'));
    assert.ok(turns.length > 0, 'the child asked the model');
    const system = JSON.stringify(turns[0].body.system);
    for (const mark of ['USER-CLAUDE-MARK', 'REPO-AGENTS-MARK', 'REPO-CLAUDE-MARK']) assert.ok(system.includes(mark), `${mark} is not in the system prompt`);
    assert.ok(system.indexOf('REPO-AGENTS-MARK') < system.indexOf('REPO-CLAUDE-MARK'), 'AGENTS.md, then CLAUDE.md');
    assert.equal(fs.existsSync(path.join(t.workspace, 'made-by-claude.txt')), false, 'the settings widened the read-only child');
  });

  it('a CLAUDE.md that links to the AGENTS.md beside it is given once', async () => {
    const t = await w.reopen({ sandbox: 'read-only' });
    fs.writeFileSync(path.join(t.workspace, 'AGENTS.md'), 'ONE-FILE-MARK\n');
    fs.symlinkSync('AGENTS.md', path.join(t.workspace, 'CLAUDE.md'));
    byWire(w.server, { messages: [{ text: 'hello' }] });
    const first = w.server.requests.length;
    const { r } = await finishedChild(t, 'claude-code', 'say hello');
    assert.equal(r.stopReason, 'completed', r.error);
    const turn = w.server.requests.slice(first).find((q) => q.wire === 'messages' && JSON.stringify(q.body.messages).includes('say hello'));
    assert.equal(JSON.stringify(turn?.body.system).split('ONE-FILE-MARK').length - 1, 1);
  });
});
