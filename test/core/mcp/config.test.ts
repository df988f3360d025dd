import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describeConfigError, type McpServerConfig, merge, parseServerMap, readServerFile, readWorkspaceServers } from '../../../src/core/mcp/config';
import { McpManager } from '../../../src/core/mcp/manager';
import { allowCovers, mcpToolName, serverOfTool } from '../../../src/core/mcp/names';
import { checkRunAllow, pinOf, serverFingerprint } from '../../../src/core/mcp/pins';
import { FileTrust, MemoryTrust, TRUST_BOOK_NAME } from '../../../src/core/mcp/trust-file';
import { ScopeRegistry } from '../../../src/core/scope/registry';
import type { Tool } from '../../../src/core/tools/tool';
import { everythingStdio } from './support';

describe('mcp: server config in the formats users have', () => {
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-mcpcfg-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));
  const write = (rel: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), text);
  };

  it(".mcp.json (Claude Code's mcpServers): stdio and http entries; a bad entry is an error naming file and server, the rest load", () => {
    write(
      '.mcp.json',
      JSON.stringify({
        mcpServers: {
          docs: { command: 'node', args: ['server.js'], env: { TOKEN: 'abc123' } },
          web: { type: 'http', url: 'https://example.test/mcp', headers: { Authorization: 'Bearer xyz789' } },
          broken: { args: ['no command'] },
          bad__name: { command: 'x' },
        },
      }),
    );
    const r = readWorkspaceServers(dir, {});
    assert.deepEqual(
      r.servers.map((s) => [s.name, s.source, s.transport.kind]),
      [
        ['docs', 'workspace', 'stdio'],
        ['web', 'workspace', 'http'],
      ],
    );
    assert.equal(r.errors.length, 2);
    const lines = r.errors.map(describeConfigError);
    assert.ok(
      lines[0].includes(path.join(dir, '.mcp.json')) && lines[0].includes('"broken"') && lines[0].includes('"command" must be a non-empty string'),
      lines[0],
    );
    assert.match(lines[1], /server name "bad__name" must be/);
  });

  it('.vscode/mcp.json (VS Code servers, JSONC): workspaceFolder and env:X variables expanded; a name taken by .mcp.json is refused', () => {
    write('.mcp.json', JSON.stringify({ mcpServers: { docs: { command: 'a' } } }));
    write(
      '.vscode/mcp.json',
      `{
        // comments are fine here
        "servers": {
          "files": { "type": "stdio", "command": "node", "args": ["\${workspaceFolder}/srv.js"], "env": { "KEY": "\${env:MY_KEY}" } },
          "docs": { "command": "b" },
        }
      }`,
    );
    const r = readWorkspaceServers(dir, { MY_KEY: 'k-1' });
    const files = r.servers.find((s) => s.name === 'files')!;
    assert.equal(files.source, 'vscode');
    assert.deepEqual(files.transport, { kind: 'stdio', command: 'node', args: [`${dir}/srv.js`], env: { KEY: 'k-1' } });
    assert.equal(r.errors.length, 1);
    assert.match(describeConfigError(r.errors[0]), /"docs" is already defined in .*\.mcp\.json/);
  });

  it('a file that is not JSON is one clear error; a missing file is no servers and no error', () => {
    write('.mcp.json', '{ "mcpServers": ');
    const r = readServerFile(path.join(dir, '.mcp.json'), 'mcpServers', 'cli');
    assert.equal(r.servers.length, 0);
    assert.match(describeConfigError(r.errors[0]), /\.mcp\.json is not valid JSON: .*fix it and reload/);
    assert.deepEqual(readServerFile(path.join(dir, 'none.json'), 'mcpServers', 'cli'), { servers: [], errors: [] });
  });

  it('a user-level list and sse: refused with what to use instead; merge keeps the first of a name', () => {
    const user = parseServerMap({ old: { type: 'sse', url: 'http://x/sse' }, ok: { command: 'y' } }, 'user', 'setting arbor.mcp.servers', 'arbor.mcp.servers');
    assert.match(user.errors[0].message, /sse.*not supported.*"type": "http"/);
    const m = merge([user, parseServerMap({ ok: { command: 'z' } }, 'cli', 'f.json', 'mcpServers')]);
    assert.equal(m.servers.length, 1);
    assert.equal((m.servers[0].transport as { command: string }).command, 'y');
  });

  it('tool names: mcp__<server>__<tool>, wire-safe and at most 64 characters; allow entries as Claude Code writes them', () => {
    assert.equal(mcpToolName('everything', 'echo'), 'mcp__everything__echo');
    const odd = mcpToolName('srv', 'a.b c');
    assert.match(odd, /^mcp__srv__a_b_c_[0-9a-f]{6}$/);
    const long = mcpToolName('srv', 'x'.repeat(100));
    assert.equal(long.length, 64);
    assert.equal(serverOfTool('mcp__my_srv__do__it'), 'my_srv');
    assert.equal(serverOfTool('read_file'), undefined);
    for (const entry of ['srv', 'mcp__srv', 'mcp__srv__*', 'mcp__srv__echo']) assert.ok(allowCovers(entry, 'srv', 'mcp__srv__echo'), entry);
    assert.equal(allowCovers('mcp__srv__other', 'srv', 'mcp__srv__echo'), false);
    assert.equal(allowCovers('mcp__sr', 'srv', 'mcp__srv__echo'), false);
  });

  it('the CLI trust file: an allow holds for the server as it was; pointed at another program or given another environment, it must be allowed again', async () => {
    write('.mcp.json', JSON.stringify({ mcpServers: { docs: { command: 'node', args: ['a.js'], env: { T: 'secret-value-1' } } } }));
    const trust = new FileTrust(path.join(dir, 'store'), dir);
    const [docs] = readWorkspaceServers(dir, {}).servers;
    assert.equal(trust.isAllowed(docs), false);
    await trust.allow(docs);
    assert.equal(trust.isAllowed(docs), true);
    assert.ok(!fs.readFileSync(path.join(dir, 'store', TRUST_BOOK_NAME), 'utf8').includes('secret-value-1'), 'no env value in the file');
    write('.mcp.json', JSON.stringify({ mcpServers: { docs: { command: 'node', args: ['evil.js'], env: { T: 'secret-value-1' } } } }));
    const [changed] = readWorkspaceServers(dir, {}).servers;
    assert.equal(trust.isAllowed(changed), false);
    // Same program, an environment that runs code of its own: allowed again first.
    write(
      '.mcp.json',
      JSON.stringify({ mcpServers: { docs: { command: 'node', args: ['a.js'], env: { T: 'secret-value-1', NODE_OPTIONS: '--require ./evil.js' } } } }),
    );
    const [preloaded] = readWorkspaceServers(dir, {}).servers;
    assert.equal(trust.isAllowed(preloaded), false);
    // Another workspace with the same server name is not allowed by this one's allow.
    assert.equal(new FileTrust(path.join(dir, 'store'), '/elsewhere').isAllowed(docs), false);
  });

  it('the --allow-mcp pin (decision 0112): the first start pins what a name runs; a change is refused, naming the part that changed, never a value', async () => {
    const server = (args: string[], env: Record<string, string>, cwd?: string) => {
      write('.mcp.json', JSON.stringify({ mcpServers: { docs: { command: 'node', args, env, ...(cwd ? { cwd } : {}) } } }));
      return readWorkspaceServers(dir, {}).servers[0];
    };
    const book = new FileTrust(path.join(dir, 'store'), dir);
    const first = server(['a.js'], { T: 'secret-value-1' });
    assert.deepEqual(checkRunAllow(first, book.recordOf('docs')), { ok: true, first: true });
    book.pin(first);
    assert.ok(!fs.readFileSync(path.join(dir, 'store', TRUST_BOOK_NAME), 'utf8').includes('secret-value-1'), 'no env value in the file');
    assert.deepEqual(checkRunAllow(first, book.recordOf('docs')), { ok: true, first: false });
    assert.equal(book.isAllowed(first), false, 'a pin is not an allow: without --allow-mcp it waits');
    assert.equal(book.allowedBefore('docs'), false);
    const verdict = (s: ReturnType<typeof server>) => checkRunAllow(s, book.recordOf('docs'));
    assert.deepEqual(verdict(server(['evil.js'], { T: 'secret-value-1' })), { ok: false, changed: ['its arguments'] });
    assert.deepEqual(verdict(server(['a.js'], { T: 'secret-value-1', NODE_OPTIONS: '--require ./e.js' })), {
      ok: false,
      changed: ['its environment (NODE_OPTIONS added)'],
    });
    assert.deepEqual(verdict(server(['a.js'], { T: 'secret-value-2' }, '/elsewhere')), {
      ok: false,
      changed: ['its working folder', "its environment's values"],
    });
    // `arbor mcp allow` of a changed server: allowed for good and pinned in the same record.
    const moved = server(['b.js'], { T: 'secret-value-1' });
    await book.allow(moved);
    assert.equal(book.isAllowed(moved), true);
    assert.deepEqual(checkRunAllow(moved, book.recordOf('docs')), { ok: true, first: false });
    assert.deepEqual(checkRunAllow(first, book.recordOf('docs')), { ok: false, changed: ['its arguments'] }, 'the allow re-pinned');
    // Another workspace's record is not this one's; an allow from before pins existed is compared as a whole.
    assert.equal(new FileTrust(path.join(dir, 'store'), '/elsewhere').recordOf('docs'), undefined);
    assert.deepEqual(checkRunAllow(server(['evil.js'], {}), { fingerprint: 'ffffffffffffffff' }), { ok: false, changed: ['what it runs'] });
  });

  it('the s54 allow and pin files are read as the one book while the store has none, and the first write keeps them', async () => {
    const server = (name: string, args: string[]) => {
      write('.mcp.json', JSON.stringify({ mcpServers: { [name]: { command: 'node', args, env: { T: 'secret-value-1' } } } }));
      return readWorkspaceServers(dir, {}).servers[0];
    };
    const [allowedPinned, oldAllow, pinOnly] = [server('a', ['a.js']), server('b', ['b.js']), server('c', ['c.js'])];
    const store = path.join(dir, 'store');
    fs.mkdirSync(store);
    // As session 54 wrote them: `arbor mcp allow a` (allow and pin), an allow of b from before pins, `--allow-mcp c` (a pin).
    const allows = { [dir]: { a: serverFingerprint(allowedPinned), b: serverFingerprint(oldAllow) } };
    fs.writeFileSync(path.join(store, 'mcp-allowed.json'), JSON.stringify(allows));
    fs.writeFileSync(path.join(store, 'mcp-pinned.json'), JSON.stringify({ [dir]: { a: pinOf(allowedPinned), c: pinOf(pinOnly) } }));
    const book = new FileTrust(store, dir);
    const holds = () => {
      assert.deepEqual(
        [allowedPinned, oldAllow, pinOnly].map((s) => book.isAllowed(s)),
        [true, true, false],
      );
      assert.deepEqual(book.recordOf('a'), { ...pinOf(allowedPinned), allowed: true });
      assert.deepEqual(book.recordOf('b'), { fingerprint: serverFingerprint(oldAllow), allowed: true });
      assert.deepEqual(book.recordOf('c'), pinOf(pinOnly));
      assert.deepEqual(checkRunAllow(server('a', ['x.js']), book.recordOf('a')), { ok: false, changed: ['its arguments'] });
      assert.deepEqual(checkRunAllow(server('b', ['x.js']), book.recordOf('b')), { ok: false, changed: ['what it runs'] });
      assert.deepEqual(checkRunAllow(server('c', ['x.js']), book.recordOf('c')), { ok: false, changed: ['its arguments'] });
    };
    holds();
    assert.equal(fs.existsSync(path.join(store, TRUST_BOOK_NAME)), false, 'reading writes nothing');
    // The first write (a pin of another server) keeps all of them, in the book from then on.
    book.pin(server('d', ['d.js']));
    fs.rmSync(path.join(store, 'mcp-allowed.json'));
    fs.rmSync(path.join(store, 'mcp-pinned.json'));
    holds();
    assert.equal(book.recordOf('d')?.fingerprint, serverFingerprint(server('d', ['d.js'])));
  });

  it('four processes pinning and allowing at once lose none of each other’s records (the book is written under a lock)', async () => {
    const store = path.join(dir, 'store-busy');
    const trustFile = path.resolve(__dirname, '../../../src/core/mcp/trust-file.js');
    const script = (who: number) => `
      const { FileTrust } = require(${JSON.stringify(trustFile)});
      const book = new FileTrust(${JSON.stringify(store)}, ${JSON.stringify(dir)});
      for (let i = 0; i < 15; i++) {
        const s = { name: 's${who}-' + i, transport: { kind: 'stdio', command: 'node', args: [String(i)], env: {} } };
        if (i % 2) book.allow(s); else book.pin(s);
      }`;
    const { spawn } = await import('node:child_process');
    await Promise.all(
      [0, 1, 2, 3].map(
        (who) =>
          new Promise<void>((resolve, reject) => {
            const p = spawn(process.execPath, ['-e', script(who)], { stdio: 'inherit' });
            p.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`writer ${who} exited ${code}`))));
          }),
      ),
    );
    const book = new FileTrust(store, dir);
    for (let who = 0; who < 4; who++) for (let i = 0; i < 15; i++) assert.ok(book.recordOf(`s${who}-${i}`), `s${who}-${i} was lost`);
  });

  it("the extension's trust: a server allowed before and changed since waits, and its state says what it runs changed", async () => {
    let kept: Record<string, string> | undefined;
    const trust = new MemoryTrust(
      () => kept,
      (v) => {
        kept = v;
      },
    );
    const before = everythingStdio('docs', {}, 'workspace');
    await trust.allow(before);
    const changed: McpServerConfig = { ...before, transport: { kind: 'stdio', command: process.execPath, args: ['evil.js'], env: {} } };
    const m = new McpManager({ tools: new ScopeRegistry<Tool>(), roots: [] }, { servers: [changed], trust });
    try {
      const [state] = m.states();
      assert.equal(state.phase, 'needs-allow');
      assert.match(state.why ?? '', /what it runs changed since it was allowed, so it starts once you allow it again/);
      assert.equal(state.changedSinceAllowed, true, 'said as a field, not only in words: the extension asks again saying so');
      const fresh = new McpManager({ tools: new ScopeRegistry<Tool>(), roots: [] }, { servers: [everythingStdio('other', {}, 'workspace')], trust });
      assert.match(fresh.states()[0].why ?? '', /; it starts once you allow it$/);
      assert.equal(fresh.states()[0].changedSinceAllowed, undefined, 'never allowed: not changed since');
      await fresh.close();
      // Allowed again: it starts, and the flag goes with the wait.
      await m.allow('docs');
      await m.whenSettled();
      assert.notEqual(m.states()[0].phase, 'needs-allow');
      assert.equal(m.states()[0].changedSinceAllowed, undefined, JSON.stringify(m.states()[0]));
    } finally {
      await m.close();
    }
  });
});
