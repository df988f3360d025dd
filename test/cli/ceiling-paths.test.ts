import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { FILESYSTEM } from '../core/mcp/support';
import { arbor, cliWorld } from '../support/cli';
import type { ScriptedToolCall } from '../support/model-server';

// The other ways out of an explicit `--sandbox` ceiling (decision 0125, amended in s60): an MCP
// server (outside the OS sandbox, with the user's rights), a hook that answers `ask`, a child
// (a subagent whose agent file asks for full-access, a fork), workflow scripts left unconfined.
// Real `arbor run` processes, the real model server, real bubblewrap, the real filesystem MCP server.

interface Result {
  type: string;
  session?: string;
  name?: string;
  content?: string;
  isError?: boolean;
}

const lines = (stdout: string): Result[] =>
  stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Result);
const results = (stdout: string) => lines(stdout).filter((e) => e.type === 'tool/result');

describe('cli: an MCP call is no approval question under an explicit --sandbox', function () {
  this.timeout(90_000);
  const w = cliWorld('arbor-cli-ceiling-mcp-', { realDir: true });
  // The filesystem server takes the roots Arbor gives it (the workspace): what it writes there is
  // still past read-only, and past any ceiling as a call Arbor cannot confine.
  const target = () => path.join(w.ws, 'mcp.txt');
  /** The filesystem server (it is given the workspace as its root). */
  const config = () => {
    const file = path.join(w.dir, 'fs.json');
    fs.writeFileSync(file, JSON.stringify({ mcpServers: { fs: { command: process.execPath, args: [FILESYSTEM, w.dir] } } }));
    return file;
  };
  const write = () => ({ name: 'mcp__fs__write_file', arguments: { path: target(), content: 'via mcp' } });
  const read = () => ({ name: 'mcp__fs__list_allowed_directories', arguments: {} });

  async function run(flags: string[], calls: ScriptedToolCall[]): Promise<Result[]> {
    w.server.enqueue({ toolCalls: calls }, { text: 'tried' });
    const r = await arbor(['run', ...w.common, '--mcp-config', config(), ...flags, '--json', 'use the server'], {}, 60_000);
    assert.equal(r.code, 0, r.stderr);
    return results(r.stdout);
  }

  for (const mode of ['read-only', 'workspace-write']) {
    it(`--sandbox ${mode} --approval auto: a write through the server is refused unasked and says what lifts it`, async () => {
      const [res] = await run(['--sandbox', mode, '--approval', 'auto'], [write()]);
      assert.equal(res.name, 'mcp__fs__write_file');
      assert.ok(res.isError, res.content);
      assert.match(res.content!, /POLICY_CEILING/);
      assert.match(res.content!, new RegExp(`--sandbox ${mode}`));
      assert.match(res.content!, /--mcp-allow-tools/);
      assert.equal(fs.existsSync(target()), false, 'the MCP server wrote nothing');
    });
  }

  it('--sandbox workspace-write with the tool allowed up front (--mcp-allow-tools): the user’s own allow holds', async () => {
    const [res] = await run(['--sandbox', 'workspace-write', '--mcp-allow-tools', 'mcp__fs__write_file'], [write()]);
    assert.ok(!res.isError, res.content);
    assert.equal(fs.readFileSync(target(), 'utf8'), 'via mcp');
  });

  it('--sandbox read-only with the server allowed up front: its read-only tools run, a write is still refused unasked', async () => {
    const [listed, wrote] = await run(['--sandbox', 'read-only', '--mcp-allow-tools', 'fs', '--approval', 'auto'], [read(), write()]);
    assert.ok(!listed.isError, listed.content);
    assert.match(listed.content!, new RegExp(path.basename(w.dir)));
    assert.ok(wrote.isError, wrote.content);
    assert.match(wrote.content!, /POLICY_CEILING/);
    assert.equal(fs.existsSync(target()), false);
  });

  it('without --sandbox (no ceiling) --approval auto still approves the call, as before', async () => {
    const [res] = await run(['--approval', 'auto'], [write()]);
    assert.ok(!res.isError, res.content);
    assert.equal(fs.readFileSync(target(), 'utf8'), 'via mcp');
  });
});

describe('cli: hooks and children stay under an explicit --sandbox', function () {
  this.timeout(90_000);
  const w = cliWorld('arbor-cli-ceiling-more-', { realDir: true });
  const outside = () => path.join(w.dir, 'outside.txt');
  const unconfined = () => ({
    name: 'run_command',
    arguments: { command: `echo escaped > ${outside()}`, outsideSandbox: true, justification: 'to write outside' },
  });

  it('a PreToolUse hook answering "ask", approved by --approval auto, lifts nothing: the tools still refuse', async () => {
    const hook = path.join(w.dir, 'ask.js');
    fs.writeFileSync(
      hook,
      `process.stdout.write(JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'ask', permissionDecisionReason: 'hook wants a human' } }));`,
    );
    const settings = path.join(w.dir, 'hooks.json');
    fs.writeFileSync(
      settings,
      JSON.stringify({ hooks: { PreToolUse: [{ matcher: '*', hooks: [{ type: 'command', command: `${process.execPath} ${hook}` }] }] } }),
    );
    w.server.enqueue({ toolCalls: [{ name: 'write_file', arguments: { path: 'in.txt', content: 'x' } }, unconfined()] }, { text: 'tried' });
    const r = await arbor(['run', ...w.common, '--hooks-file', settings, '--sandbox', 'read-only', '--approval', 'auto', '--json', 'go']);
    assert.equal(r.code, 0, r.stderr);
    const all = lines(r.stdout);
    assert.ok(
      all.some((e) => e.type === 'hook/run'),
      'the hook ran',
    );
    const [wrote, ran] = results(r.stdout);
    assert.ok(wrote.isError, wrote.content);
    assert.match(wrote.content!, /read-only/);
    assert.ok(ran.isError, ran.content);
    assert.match(ran.content!, /POLICY_CEILING/);
    assert.equal(fs.existsSync(path.join(w.ws, 'in.txt')), false);
    assert.equal(fs.existsSync(outside()), false);
  });

  it('a subagent whose agent file asks for full-access, and a fork: neither runs wider than --sandbox read-only', async () => {
    fs.mkdirSync(path.join(w.ws, '.arbor', 'agents'), { recursive: true });
    fs.writeFileSync(
      path.join(w.ws, '.arbor', 'agents', 'wide.md'),
      '---\nname: wide\ndescription: Runs anything.\nsandbox: full-access\n---\nYou run what you are told.\n',
    );
    const flags = ['--sandbox', 'read-only', '--approval', 'auto', '--json'];
    w.server.enqueue(
      { toolCalls: [{ name: 'subagent', arguments: { prompt: 'escape', agent: 'wide' } }] },
      { toolCalls: [unconfined(), { name: 'write_file', arguments: { path: 'child.txt', content: 'x' } }] },
      { text: 'child tried' },
      { text: 'done' },
    );
    const r = await arbor(['run', ...w.common, ...flags, 'delegate'], {}, 60_000);
    assert.equal(r.code, 0, r.stderr);
    const id = /session (\S+)/.exec(r.stderr)![1];
    // A fork needs a finished turn: the next message forks.
    w.server.enqueue(
      { toolCalls: [{ name: 'subagent_fork', arguments: { prompt: 'escape too' } }] },
      { toolCalls: [unconfined()] },
      { text: 'fork tried' },
      { text: 'done' },
    );
    const f = await arbor(['send', ...w.common, ...flags, id, 'fork'], {}, 60_000);
    assert.equal(f.code, 0, f.stderr);
    const all = [...lines(r.stdout), ...lines(f.stdout)].filter((e) => e.type === 'tool/result');
    // (A fork's log begins with its parent's history: the earlier `subagent` result is in it, not its own.)
    const children = all.filter((e) => e.session !== id && e.name !== 'subagent');
    assert.deepEqual(
      children.map((e) => e.name),
      ['run_command', 'write_file', 'run_command'],
      JSON.stringify(all),
    );
    for (const res of children) assert.ok(res.isError, `${res.name}: ${res.content}`);
    for (const res of children.filter((e) => e.name === 'run_command')) assert.match(res.content!, /POLICY_CEILING/);
    assert.equal(fs.existsSync(outside()), false, 'no child ran unconfined');
    assert.equal(fs.existsSync(path.join(w.ws, 'child.txt')), false);
  });

  for (const mode of ['read-only', 'workspace-write']) {
    it(`--unconfined-workflows with --sandbox ${mode} is a usage error (exit 2) that says which to drop`, async () => {
      const r = await arbor(['run', ...w.common, '--sandbox', mode, '--unconfined-workflows', 'hi']);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /--unconfined-workflows.*--sandbox/);
      assert.match(r.stderr, /FLAGS_CONFLICT/);
      assert.equal(w.server.requests.length, 0, 'nothing was run');
    });
  }

  it('--unconfined-workflows with --sandbox full-access, or without --sandbox, is accepted', async () => {
    for (const flags of [['--sandbox', 'full-access'], []]) {
      w.server.enqueue({ text: 'ok' });
      const r = await arbor(['run', ...w.common, ...flags, '--unconfined-workflows', 'hi']);
      assert.equal(r.code, 0, r.stderr);
    }
  });
});
