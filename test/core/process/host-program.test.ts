import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { guardFolders, hostLaunch, hostPath, hostProgram } from '../../../src/core/process/host-program';
import { harnessPerTest, until } from '../../support/harness';
import { checkpointsOf, run } from '../checkpoint/fixture';

// Attack: the user's PATH names a folder of the workspace (an activated `.venv/bin`, direnv's
// `PATH_add bin`, `node_modules/.bin`). A confined command writes its own `git` there; Arbor's
// next checkpoint runs `git` by name on the host, unconfined, as the user — out of the sandbox.
// The same for ssh (a placement), a remote agent's command, an MCP server's.

const realGit = () => fs.realpathSync(execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim());

describe('programs Arbor runs by name are never taken from a folder its commands can write', () => {
  const w = harnessPerTest();
  let PATH: string | undefined;
  beforeEach(() => {
    PATH = process.env.PATH;
  });
  afterEach(() => {
    process.env.PATH = PATH;
  });

  it('attack: a command plants `git` in the workspace folder first on PATH; the checkpoints after it run the real git, never the planted one', async () => {
    const ws = fs.realpathSync(w.t.workspace);
    const escaped = path.join(w.t.dir, 'escaped');
    fs.mkdirSync(path.join(ws, 'bin'));
    process.env.PATH = `${path.join(ws, 'bin')}:${PATH}`;
    const plant = `printf '#!/bin/sh\\necho "$@" >> ${escaped}\\nexec ${realGit()} "$@"\\n' > bin/git && chmod +x bin/git && echo planted`;
    w.server.enqueue({ toolCalls: [{ id: 'c1', ...run(plant) }] }, { toolCalls: [{ id: 'c2', ...run('echo changed > made.txt') }] }, { text: 'done' });
    const a = await w.t.h.createSession();
    await w.t.h.send(a.id, 'go');
    await w.t.h.settle();
    assert.ok(fs.existsSync(path.join(ws, 'bin/git')), 'the command planted its git (the sandbox lets it write the workspace)');
    assert.equal(fs.existsSync(escaped) ? fs.readFileSync(escaped, 'utf8') : '', '', 'the host ran the planted git');
    const changes = checkpointsOf(a.session.events).flatMap((c) => c.changes.map((x) => path.basename(x.path)));
    assert.ok(changes.includes('made.txt'), `the checkpoints still ran (with the real git): ${changes.join(', ')}`);
  });

  it('a name is looked up outside guarded folders and relative entries (and below a folder where asked); a link into a guarded folder is passed over', () => {
    const base = fs.realpathSync(w.t.dir);
    const mk = (dir: string, name: string) => {
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(dir, name), '#!/bin/sh\n', { mode: 0o755 });
      return path.join(dir, name);
    };
    const name = `prog-${path.basename(base)}`;
    const guarded = path.join(base, 'guarded');
    const planted = mk(path.join(guarded, 'bin'), name);
    const system = mk(path.join(base, 'system'), name);
    const here = mk(path.join(base, 'here', 'bin'), name);
    // A folder outside whose program is a link into the guarded one.
    fs.mkdirSync(path.join(base, 'linked'));
    fs.symlinkSync(planted, path.join(base, 'linked', name));
    const p = [path.join(guarded, 'bin'), 'bin', '', path.join(base, 'here', 'bin'), path.join(base, 'linked'), path.join(base, 'system')].join(':');
    assert.equal(hostProgram(name, p, path.join(base, 'here')), planted, 'before the folder is guarded, PATH’s order');
    guardFolders([guarded]);
    assert.equal(hostProgram(name, p), here, 'guarded, relative and empty entries passed over');
    assert.equal(hostProgram(name, p, path.join(base, 'here')), path.join(base, 'system', name), 'and, where asked, those below a folder');
    assert.equal(hostProgram(name, [path.join(guarded, 'bin'), 'bin'].join(':'), '/'), undefined, 'nothing outside: not found');
    assert.equal(hostPath(p), [path.join(base, 'here', 'bin'), path.join(base, 'linked'), path.join(base, 'system')].join(':'));
    assert.equal(hostProgram(system, p, '/'), system, 'a path is the user’s own choice');
    assert.ok(fs.existsSync(here));
  });

  it('an MCP server named by a program only a workspace folder on PATH has does not start, and says why', async () => {
    const ws = fs.realpathSync(w.t.workspace);
    const marker = path.join(w.t.dir, 'mcp-ran');
    const name = `mcp-${path.basename(w.t.dir)}`;
    fs.mkdirSync(path.join(ws, '.venv/bin'), { recursive: true });
    fs.writeFileSync(path.join(ws, '.venv/bin', name), `#!/bin/sh\ntouch ${marker}\n`, { mode: 0o755 });
    process.env.PATH = `${path.join(ws, '.venv/bin')}:${PATH}`;
    w.t.h.mcp.addServers([{ name: 'planted', source: 'user', transport: { kind: 'stdio', command: name, args: [], env: {} } }]);
    await w.t.h.mcp.whenSettled();
    const st = w.t.h.mcp.states().find((s) => s.name === 'planted');
    assert.equal(st?.phase, 'failed', JSON.stringify(st));
    assert.match(st?.why ?? '', /not found on PATH.*outside the workspace/);
    assert.equal(fs.existsSync(marker), false, 'the planted program ran');
  });

  it('attack: a `node` planted in a workspace folder on PATH is never the interpreter of a `#!/usr/bin/env node` program Arbor starts (an MCP server, a remote agent)', async () => {
    const ws = fs.realpathSync(w.t.workspace);
    const dir = fs.realpathSync(w.t.dir);
    const [planted, ran] = [path.join(dir, 'planted-ran'), path.join(dir, 'real-ran')];
    fs.mkdirSync(path.join(ws, '.venv/bin'), { recursive: true });
    fs.writeFileSync(path.join(ws, '.venv/bin/node'), `#!/bin/sh\ntouch ${planted}\nexec ${process.execPath} "$@"\n`, { mode: 0o755 });
    fs.mkdirSync(path.join(dir, 'tools'));
    const name = `agent-${path.basename(dir)}`;
    fs.writeFileSync(
      path.join(dir, 'tools', name),
      `#!/usr/bin/env node\nrequire('node:fs').writeFileSync(${JSON.stringify(ran)}, process.argv.slice(2).join(' '));\n`,
      {
        mode: 0o755,
      },
    );
    fs.symlinkSync(process.execPath, path.join(dir, 'tools', 'node'));
    process.env.PATH = `${path.join(ws, '.venv/bin')}:${path.join(dir, 'tools')}:${PATH}`;
    const launch = hostLaunch(path.join(dir, 'tools', name), ['a', 'b']);
    assert.deepEqual(launch, { file: path.join(dir, 'tools', 'node'), args: [path.join(dir, 'tools', name), 'a', 'b'] });
    w.t.h.mcp.addServers([{ name: 'scripted', source: 'user', transport: { kind: 'stdio', command: name, args: ['x'], env: {} } }]);
    await w.t.h.mcp.whenSettled();
    await until(() => fs.existsSync(ran), 10_000);
    assert.equal(fs.readFileSync(ran, 'utf8'), 'x', 'the program ran with its arguments');
    assert.equal(fs.existsSync(planted), false, 'the planted node ran on the host');
    // Its interpreter found only in the guarded folder: it does not start, and says so.
    assert.equal(hostLaunch(path.join(dir, 'tools', name), [], `${path.join(ws, '.venv/bin')}:/nonexistent`), undefined);
  });
});
