// The programs that make the sandbox, where a confined command can write them (decision 0005,
// amended in session 48). bubblewrap named without a folder was looked up on PATH at every
// sandbox start, so a PATH with a folder of the workspace in it (an activated `.venv/bin`, direnv's
// `PATH_add bin`, `./node_modules/.bin`) let a command put its own `bwrap` there, which the host
// then ran, unconfined, to start the next command. And `arbor-zygote` inside the workspace (Arbor
// working on its own checkout: `dist/arbor-zygote`) could be replaced by a command; the resident
// runs it with the host's /proc in sight (every host process's command line), and it starts every
// command of the resident: their namespaces of their own were its to give.
import * as assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { guardFolders } from '../../../src/core/process/host-program';
import { createRunCommandTool } from '../../../src/core/tools/run-command';
import { CommandSandbox } from '../../../src/core/tools/sandbox/command-sandbox';
import { resolveProgram, sandboxStatus } from '../../../src/core/tools/sandbox/detect';
import { ResidentPool } from '../../../src/core/tools/sandbox/residents';
import { zygotePath } from '../../../src/core/tools/sandbox/zygote-path';
import { call, makeWorkspace, skipWithoutSandbox, type Workspace } from './fixture';

describe('the sandbox’s own programs, where commands can write (decision 0005, amended)', function () {
  this.timeout(60_000);
  let ws: Workspace;
  let PATH: string | undefined;
  const pools: ResidentPool[] = [];

  before(async function () {
    await skipWithoutSandbox(this);
  });
  beforeEach(() => {
    ws = makeWorkspace();
    PATH = process.env.PATH;
  });
  afterEach(() => {
    process.env.PATH = PATH;
    for (const p of pools.splice(0)) p.closeAll();
    ws.cleanup();
  });

  for (const residents of [false, true]) {
    it(`a bwrap a command put in a folder of the workspace on PATH is never run by the host (${residents ? 'residents' : 'a bubblewrap each'})`, async () => {
      // The user's shell had the project's bin folder first on PATH (an activated venv, direnv).
      fs.mkdirSync(ws.at('bin'));
      process.env.PATH = `${ws.at('bin')}:${PATH}`;
      const zygote = zygotePath();
      const pool = residents && zygote ? new ResidentPool({ zygote }) : undefined;
      if (pool) pools.push(pool);
      const tool = createRunCommandTool({ killGraceMs: 300, lingerMs: 300, sandbox: new CommandSandbox({ residents: pool ?? false }) });
      const escaped = path.join(ws.outside, 'escaped');
      const real = execFileSync('sh', ['-c', 'command -v bwrap'], { encoding: 'utf8', env: { PATH } }).trim();
      const plant = `printf '#!/bin/sh\\necho unconfined > ${escaped}\\nexec ${real} "$@"\\n' > bin/bwrap && chmod +x bin/bwrap && echo planted`;
      const first = await call(tool, { command: plant }, ws.ctx());
      assert.match(first.content, /planted/, first.content);
      // Another state (a new resident starts) and a command of its own.
      fs.mkdirSync(ws.at('sub/.git'), { recursive: true });
      const second = await call(tool, { command: 'echo second' }, ws.ctx());
      assert.match(second.content, /second/, second.content);
      assert.equal(fs.existsSync(escaped), false, 'the host ran the bwrap a command planted, unconfined');
    });
  }

  it('bubblewrap named without a folder is found in PATH’s absolute folders, none at or below the current folder (a CLI’s workspace)', () => {
    const real = fs.realpathSync(execFileSync('sh', ['-c', 'command -v bwrap'], { encoding: 'utf8', env: { PATH } }).trim());
    fs.mkdirSync(ws.at('bin'));
    fs.writeFileSync(ws.at('bin/bwrap'), '#!/bin/sh\n', { mode: 0o755 });
    const system = path.dirname(real);
    assert.equal(resolveProgram('bwrap', `bin:.::${ws.at('bin')}:${system}`, ws.root), real, 'relative, empty and workspace entries skipped');
    assert.equal(resolveProgram('bwrap', `${ws.at('bin')}:${system}`, '/'), ws.at('bin/bwrap'), 'elsewhere, PATH’s order (the roots are checked per command)');
    assert.equal(resolveProgram('no-such-bwrap-here', system, '/'), 'no-such-bwrap-here');
  });

  it('a bwrap found inside a workspace folder is refused: no command runs with it', async () => {
    // Planted before Arbor looked for it (an earlier session's command): a name only it has.
    fs.mkdirSync(ws.at('bin'));
    const real = execFileSync('sh', ['-c', 'command -v bwrap'], { encoding: 'utf8' }).trim();
    const name = `bwrap-${path.basename(ws.base)}`;
    fs.writeFileSync(ws.at(`bin/${name}`), `#!/bin/sh\necho unconfined > ${path.join(ws.outside, 'escaped')}\nexec ${real} "$@"\n`, { mode: 0o755 });
    process.env.PATH = `${ws.at('bin')}:${PATH}`;
    const tool = createRunCommandTool({ killGraceMs: 300, lingerMs: 300, sandbox: new CommandSandbox({ bwrapPath: name, residents: false }) });
    const r = await call(tool, { command: 'echo ran' }, ws.ctx());
    assert.equal(r.isError, true, r.content);
    assert.match(r.content, /inside the workspace/, r.content);
    assert.doesNotMatch(r.content, /--- stdout ---\nran/, r.content);
    // The probe itself ran it once (as it runs any bwrap it is given); no command did.
    fs.rmSync(path.join(ws.outside, 'escaped'), { force: true });
    await call(tool, { command: 'echo again' }, ws.ctx());
    assert.equal(fs.existsSync(path.join(ws.outside, 'escaped')), false, 'a command was started with the workspace’s bwrap');
  });

  it('a bwrap found only in a folder a harness guards is not installed: the probe never leaves the name to the spawn, whose own lookup would run it', async () => {
    fs.mkdirSync(ws.at('bin'));
    const real = execFileSync('sh', ['-c', 'command -v bwrap'], { encoding: 'utf8' }).trim();
    const name = `bwrap-guarded-${path.basename(ws.base)}`;
    const escaped = path.join(ws.outside, 'escaped');
    fs.writeFileSync(ws.at(`bin/${name}`), `#!/bin/sh\necho unconfined >> ${escaped}\nexec ${real} "$@"\n`, { mode: 0o755 });
    guardFolders([ws.root]);
    process.env.PATH = `${ws.at('bin')}:${PATH}`;
    const st = await sandboxStatus(name);
    assert.equal(st.available, false);
    assert.match(
      st.available ? '' : st.reason,
      /is not installed \(Arbor looks for the programs it runs itself in PATH's absolute folders outside the workspace/,
    );
    const tool = createRunCommandTool({ killGraceMs: 300, lingerMs: 300, sandbox: new CommandSandbox({ bwrapPath: name, residents: false }) });
    await call(tool, { command: 'echo ran' }, ws.ctx());
    assert.equal(fs.existsSync(escaped), false, 'the host ran the bwrap of a guarded folder');
  });

  it('an arbor-zygote inside a workspace folder (Arbor on its own checkout) is not run: commands get a bubblewrap each', async function () {
    if (!zygotePath()) this.skip();
    // A command replaced the workspace's build of the zygote with its own program. The resident
    // runs it with the host's /proc at /proc (for the kernel's check of each command's new one):
    // every host process and its command line is in sight there (a token passed as an argument).
    const host = spawn('sleep', ['30'], { argv0: 'sk-host-secret-value', stdio: 'ignore' });
    const leak = ws.at('leak');
    const fake = ws.write('dist/arbor-zygote', `#!/bin/sh\ncat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' '\\n' | grep sk-host > ${leak}\n`);
    fs.chmodSync(fake, 0o755);
    try {
      const pool = new ResidentPool({ zygote: fake });
      pools.push(pool);
      const tool = createRunCommandTool({ killGraceMs: 300, lingerMs: 300, sandbox: new CommandSandbox({ residents: pool }) });
      const r = await call(tool, { command: 'echo ran' }, ws.ctx());
      assert.match(r.content, /--- stdout ---\nran/, r.content);
      const leaked = fs.existsSync(leak) ? fs.readFileSync(leak, 'utf8') : '';
      assert.doesNotMatch(leaked, /sk-host-secret-value/, 'the zygote from the workspace read a host process’s command line');
      assert.equal(fs.existsSync(leak), false, 'the zygote from the workspace ran');
    } finally {
      host.kill('SIGKILL');
    }
  });
});
