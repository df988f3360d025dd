import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { McpManager } from '../../../src/core/mcp/manager';
import { until } from '../../support/harness';
import { alive, EVERYTHING, everythingHttp, everythingStdio, filesystemStdio, managerPerTest, toolCtx } from './support';

/** Allowed up front, so these specs are about the client, not the ask (policy.test.ts asks). */
const ALLOW = ['everything', 'fs', 'web'];

describe('mcp: the server manager against the real reference servers', function () {
  this.timeout(60_000);
  const mgr = managerPerTest();
  const { named } = mgr;
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-mcp-'));
  });
  afterEach(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('what a server runs, for the allow question: its command line with configured secrets redacted, or the URL without its query', () => {
    mgr.m = new McpManager(
      { tools: mgr.tools, roots: [dir] },
      {
        servers: [
          {
            name: 'w',
            source: 'workspace',
            file: '.mcp.json',
            transport: { kind: 'stdio', command: 'npx', args: ['-y', 'evil pkg', '--token=s3cr3t-value'], env: { TOKEN: 's3cr3t-value' } },
          },
          {
            name: 'h',
            source: 'workspace',
            file: '.mcp.json',
            transport: { kind: 'http', url: 'https://mcp.example.com/mcp?key=abc123', headers: { Authorization: 'Bearer tok-999' } },
          },
        ],
        workspaceTrusted: false,
      },
    );
    assert.equal(mgr.m.runs('w'), 'npx -y "evil pkg" --token=[redacted]');
    assert.equal(mgr.m.runs('h'), 'https://mcp.example.com/mcp');
    assert.equal(mgr.m.runs('nope'), undefined);
  });

  it('stdio: lists tools as mcp__<server>__<tool>, calls them, maps images, resource links and embedded resources, follows list_changed', async () => {
    mgr.m = new McpManager({ tools: mgr.tools, roots: [dir] }, { servers: [everythingStdio()], allowTools: ALLOW });
    await mgr.m.whenSettled();
    const [s] = mgr.m.states();
    assert.equal(s.phase, 'ready', s.why);
    assert.ok(s.toolCount >= 10, `tool count ${s.toolCount}`);
    const echo = named('mcp__everything__echo');
    assert.ok(echo, 'echo is registered');
    assert.match(echo.description, /\[MCP server "everything"\]/);
    const r = await echo.execute({ message: 'hello tree' }, toolCtx());
    assert.equal(r.isError, false, r.content);
    assert.match(r.content, /hello tree/);

    const img = await named('mcp__everything__get-tiny-image')!.execute({}, toolCtx());
    assert.equal(img.isError, false, img.content);
    assert.match(img.content, /\[image image\/png, [\d.]+ (bytes|KB): not shown to the model\]/);

    const links = await named('mcp__everything__get-resource-links')!.execute({ count: 2 }, toolCtx());
    assert.match(links.content, /\]\((demo|test|https?|file):\/\/[^)]+\)/);

    // An embedded resource: its text; a binary one: a line naming it.
    const text = await named('mcp__everything__get-resource-reference')!.execute({ resourceType: 'Text', resourceId: 1 }, toolCtx());
    assert.equal(text.isError, false, text.content);
    assert.match(text.content, /Resource demo:\/\/resource\/\S+:\n/);
    const blob = await named('mcp__everything__get-resource-reference')!.execute({ resourceType: 'Blob', resourceId: 2 }, toolCtx());
    assert.match(blob.content, /\[resource demo:\/\/resource\/\S+(, [^:]+)?: binary, not shown\]/);

    // The client declares roots: the server registers get-roots-list after initialize and says so.
    await until(() => !!named('mcp__everything__get-roots-list'), 10_000);
    const roots = await named('mcp__everything__get-roots-list')!.execute({}, toolCtx());
    assert.ok(roots.content.includes(dir), roots.content);
    assert.equal(mgr.m.states()[0].toolCount, mgr.tools.view().length);
  });

  it('stdio: progress of a long call reaches the tool context', async () => {
    mgr.m = new McpManager({ tools: mgr.tools, roots: [dir] }, { servers: [everythingStdio()], allowTools: ALLOW });
    await mgr.m.whenSettled();
    const notes: string[] = [];
    const r = await named('mcp__everything__trigger-long-running-operation')!.execute({ duration: 0.3, steps: 3 }, toolCtx({ progress: (t) => notes.push(t) }));
    assert.equal(r.isError, false, r.content);
    assert.ok(notes.length >= 2, `progress notes: ${JSON.stringify(notes)}`);
  });

  it('streamable HTTP, with a bearer header: same tools, and the token never shows in a result or a state', async () => {
    const token = 'tok-SECRET-123456';
    const web = await everythingHttp(token);
    try {
      mgr.m = new McpManager(
        { tools: mgr.tools, roots: [dir] },
        {
          servers: [{ name: 'web', source: 'user', transport: { kind: 'http', url: web.url, headers: { Authorization: `Bearer ${token}` } } }],
          allowTools: ALLOW,
        },
      );
      await mgr.m.whenSettled();
      assert.equal(mgr.m.states()[0].phase, 'ready', mgr.m.states()[0].why);
      const r = await named('mcp__web__echo')!.execute({ message: `say ${token}` }, toolCtx());
      assert.match(r.content, /say \[redacted\]/);
      assert.ok(!JSON.stringify(mgr.m.states()).includes(token));
    } finally {
      await mgr.m?.close();
      mgr.m = undefined;
      await web.stop();
    }
  });

  it('a wrong token: the server fails with a reason, and the other server still runs', async () => {
    const web = await everythingHttp('right-token');
    try {
      mgr.m = new McpManager(
        { tools: mgr.tools, roots: [dir] },
        {
          servers: [
            { name: 'web', source: 'user', transport: { kind: 'http', url: web.url, headers: { Authorization: 'Bearer wrong-token' } } },
            everythingStdio(),
          ],
          allowTools: ALLOW,
        },
      );
      await mgr.m.whenSettled();
      const byName = Object.fromEntries(mgr.m.states().map((s) => [s.name, s]));
      assert.equal(byName.web.phase, 'failed');
      assert.match(byName.web.why ?? '', /did not start/);
      assert.ok(!(byName.web.why ?? '').includes('wrong-token'));
      assert.equal(byName.everything.phase, 'ready');
    } finally {
      await mgr.m?.close();
      mgr.m = undefined;
      await web.stop();
    }
  });

  it('server-filesystem: reads a file of the folder it was given', async () => {
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'filesystem says hi');
    mgr.m = new McpManager({ tools: mgr.tools, roots: [dir] }, { servers: [filesystemStdio(dir)], allowTools: ALLOW });
    await mgr.m.whenSettled();
    assert.equal(mgr.m.states()[0].phase, 'ready', mgr.m.states()[0].why);
    const read = named('mcp__fs__read_text_file') ?? named('mcp__fs__read_file');
    assert.ok(read, `tools: ${mgr.tools.view().map((t) => t.name)}`);
    const r = await read.execute({ path: path.join(fs.realpathSync(dir), 'notes.txt') }, toolCtx());
    assert.match(r.content, /filesystem says hi/);
  });

  it('a killed server: its tools answer a clear error while it restarts, then work again; close leaves no process', async () => {
    mgr.m = new McpManager({ tools: mgr.tools, roots: [dir] }, { servers: [everythingStdio()], allowTools: ALLOW, backoffMs: 400 });
    await mgr.m.whenSettled();
    const pid = mgr.m.pidOf('everything');
    assert.ok(alive(pid));
    process.kill(pid!, 'SIGKILL');
    await until(() => mgr.m!.states()[0].phase === 'restarting', 10_000);
    const during = await named('mcp__everything__echo')!.execute({ message: 'x' }, toolCtx());
    assert.equal(during.isError, true);
    assert.match(during.content, /MCP server "everything" stopped \(its process exited\) and is being restarted \(attempt 1 of 5\)/);
    await until(() => mgr.m!.states()[0].phase === 'ready', 20_000);
    const after = await named('mcp__everything__echo')!.execute({ message: 'back' }, toolCtx());
    assert.match(after.content, /back/);
    const pid2 = mgr.m.pidOf('everything');
    assert.notEqual(pid2, pid);
    await mgr.m.close();
    mgr.m = undefined;
    await until(() => !alive(pid2), 5000);
  });

  it('restarts are bounded: a server that keeps dying ends failed, saying so', async () => {
    // server-everything that exits a second after its first answer (to initialize): up, gone, up, gone …
    const code = [
      'const write = process.stdout.write.bind(process.stdout); let armed = false;',
      'process.stdout.write = (...a) => { if (!armed) { armed = true; setTimeout(() => process.exit(3), 1000); } return write(...a); };',
      `import(${JSON.stringify(EVERYTHING)});`,
    ].join(' ');
    const flaky = { name: 'flaky', source: 'user' as const, transport: { kind: 'stdio' as const, command: process.execPath, args: ['-e', code], env: {} } };
    mgr.m = new McpManager({ tools: mgr.tools, roots: [dir] }, { servers: [flaky], maxRestarts: 2, backoffMs: 20 });
    await until(() => mgr.m!.states()[0].phase === 'failed', 30_000);
    assert.match(mgr.m.states()[0].why ?? '', /its process exited; gave up after 2 restarts/);
  });

  it('a command that cannot start fails at once, naming why', async () => {
    const bad = { name: 'bad', source: 'user' as const, transport: { kind: 'stdio' as const, command: path.join(dir, 'no-such-program'), args: [], env: {} } };
    mgr.m = new McpManager({ tools: mgr.tools, roots: [dir] }, { servers: [bad], startTimeoutMs: 5000 });
    await mgr.m.whenSettled();
    assert.equal(mgr.m.states()[0].phase, 'failed');
    assert.match(mgr.m.states()[0].why ?? '', /did not start: .*ENOENT/);
  });
});
