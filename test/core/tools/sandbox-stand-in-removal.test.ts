// A command's stand-ins are removed together, in parallel on libuv's thread pool, and the release
// resolves once they are gone (`sandbox/shadows.ts`): an rmdir on a disk mounted with `discard`
// waits for the device, and seven of them one after another were most of what a confined command
// cost over a bare one. While a removal runs, the event loop runs other commands. These tests hold
// the removal open (every thread of the pool blocked on a FIFO) and start the next command in that
// window: it must see a stand-in there, not a folder of the workspace to mount read-only that the
// removal then deletes under it, and its registration must not be lost behind the removal's lock.
// Real bubblewrap, a real resident, a real second Node process.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import type { GroupChild } from '../../../src/core/process/spawner';
import { createRunCommandTool } from '../../../src/core/tools/run-command';
import { CommandSandbox, type Confinement } from '../../../src/core/tools/sandbox/command-sandbox';
import { ResidentPool } from '../../../src/core/tools/sandbox/residents';
import { zygotePath } from '../../../src/core/tools/sandbox/zygote-path';
import { call, makeWorkspace, otherProcess, skipWithoutSandbox, type Workspace, waitUntil } from './fixture';

/** Every thread of libuv's pool blocked (each opening a FIFO no one writes to yet); the result lets them go. */
async function poolBlocked(dir: string): Promise<() => Promise<void>> {
  const n = Number(process.env.UV_THREADPOOL_SIZE ?? 4);
  const fifos = Array.from({ length: n }, (_, i) => path.join(dir, `fifo-${i}`));
  for (const f of fifos) execFileSync('mkfifo', [f]);
  const readers = fifos.map((f) => fsp.open(f, 'r'));
  // Until each open sleeps on a thread of the pool (where /proc cannot say, the tests' own check of the window stands).
  await waitUntil(() => threadsOpeningFifos() >= n, 2000);
  return async () => {
    for (const f of fifos) fs.closeSync(fs.openSync(f, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK));
    for (const h of await Promise.all(readers)) await h.close();
  };
}

/** Threads of this process asleep in open() of a FIFO, waiting for a writer. */
function threadsOpeningFifos(): number {
  let n = 0;
  for (const t of fs.readdirSync('/proc/self/task')) {
    try {
      if (fs.readFileSync(`/proc/self/task/${t}/wchan`, 'utf8') === 'wait_for_partner') n++;
    } catch {
      // the thread ended
    }
  }
  return n;
}

/** Runs `command` in the resident `c` leads to; its exit code and output. */
async function runIn(c: Confinement, root: string, command: string): Promise<{ code: number | null; out: string }> {
  assert.ok(c.start, 'a resident takes the command');
  const child: GroupChild = c.start(['/bin/sh', '-c', command], root, { PATH: process.env.PATH });
  const out: Buffer[] = [];
  child.stdout.on('data', (d: Buffer) => out.push(d));
  child.stderr.on('data', (d: Buffer) => out.push(d));
  let code: number | null = null;
  child.on('exit', (c: number | null) => (code = c));
  await new Promise<void>((resolve) => child.on('close', () => resolve()));
  return { code, out: Buffer.concat(out).toString() };
}

describe('stand-ins removed in parallel, with the next command starting meanwhile (sandbox/shadows.ts)', function () {
  this.timeout(60_000);
  let ws: Workspace;
  let pool: ResidentPool | undefined;

  before(async function () {
    await skipWithoutSandbox(this);
    if (!zygotePath()) this.skip();
  });
  beforeEach(() => {
    ws = makeWorkspace();
    execFileSync('git', ['init', '-q', ws.root]);
    pool = new ResidentPool({ zygote: zygotePath() as string });
  });
  afterEach(() => {
    pool?.closeAll();
    pool = undefined;
    ws.cleanup();
  });

  it('attack: a command confined while the last command’s stand-ins are still being removed gets them as stand-ins, and cannot make them', async () => {
    const sandbox = new CommandSandbox({ residents: pool });
    const first = await sandbox.confine('workspace-write', [ws.root], ws.root);
    assert.ok(first);
    assert.equal((await runIn(first, ws.root, 'test -d .vscode && echo stood')).out.trim(), 'stood');
    assert.ok(fs.existsSync(ws.at('.vscode')), 'the stand-in is on the host while its command holds it');
    const letGo = await poolBlocked(ws.base);
    // The first command's release: its removal cannot finish while the pool is blocked.
    const removed = first.release();
    const next = sandbox.confine('workspace-write', [ws.root], ws.root);
    await new Promise((r) => setTimeout(r, 100));
    assert.ok(fs.existsSync(ws.at('.vscode')), 'the removal finished before the next command was confined (the window was not held open)');
    await letGo();
    await removed;
    const second = await next;
    assert.ok(second);
    try {
      const r = await runIn(
        second,
        ws.root,
        'i=0; while [ -d .vscode ] && [ $i -lt 40 ]; do sleep 0.05; i=$((i+1)); done; ' +
          'mkdir -p .vscode 2>/dev/null; echo \'{"tasks":[{"runOptions":{"runOn":"folderOpen"}}]}\' > .vscode/tasks.json 2>/dev/null && echo PLANTED; echo done',
      );
      assert.match(r.out, /done/, r.out);
      assert.doesNotMatch(r.out, /PLANTED/, r.out);
      assert.equal(fs.existsSync(ws.at('.vscode/tasks.json')), false, 'a command made .vscode/tasks.json on the host');
      // Its walk saw the folder being removed: a stand-in (an empty read-only tmpfs), never a read-only bind of that folder.
      const at = second.args.indexOf(ws.at('.vscode'));
      assert.ok(at > 0, `no mount at .vscode: ${second.args.join(' ')}`);
      assert.equal(second.args[at - 1], '--tmpfs', `.vscode is not a stand-in: ${second.args.slice(at - 1, at + 3).join(' ')}`);
    } finally {
      await second.release();
    }
    assert.equal(fs.existsSync(ws.at('.vscode')), false, 'the stand-in is left on the host');
  });

  it('attack: a command whose stand-ins are registered while another workspace’s are being removed still holds them against another process’s command ending', async () => {
    const sandbox = new CommandSandbox({ residents: pool });
    const first = await sandbox.confine('workspace-write', [ws.root], ws.root);
    assert.ok(first);
    await runIn(first, ws.root, 'true');
    const ws2 = makeWorkspace();
    try {
      execFileSync('git', ['init', '-q', ws2.root]);
      const letGo = await poolBlocked(ws.base);
      // The removal holds the registry's lock while the pool is blocked; the next command, on another
      // workspace, registers its own stand-ins meanwhile: after the removal, not lost to the lock's wait.
      const removed = first.release();
      const next = sandbox.confine('workspace-write', [ws2.root], ws2.root);
      await new Promise((r) => setTimeout(r, 100));
      await letGo();
      await removed;
      const second = await next;
      assert.ok(second);
      const running = runIn(
        second,
        ws2.root,
        'i=0; while [ ! -f go ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done; ' +
          'i=0; while [ -d .vscode ] && [ $i -lt 40 ]; do sleep 0.05; i=$((i+1)); done; ' +
          'mkdir -p .vscode 2>/dev/null; echo \'{"tasks":[{"runOptions":{"runOn":"folderOpen"}}]}\' > .vscode/tasks.json 2>/dev/null && echo PLANTED; echo done',
      );
      try {
        // Another Arbor process runs a command on the same workspace, standing on the same .vscode, and ends.
        const other = otherProcess(ws2.root, 'true');
        await new Promise<void>((resolve) => other.on('exit', () => resolve()));
        fs.writeFileSync(ws2.at('go'), '');
        const r = await running;
        assert.match(r.out, /done/, r.out);
        assert.doesNotMatch(r.out, /PLANTED/, r.out);
        assert.equal(fs.existsSync(ws2.at('.vscode/tasks.json')), false, 'a command made .vscode/tasks.json on the host');
      } finally {
        await second.release();
      }
      assert.equal(fs.existsSync(ws2.at('.vscode')), false, 'the stand-in is left on the host');
    } finally {
      ws2.cleanup();
    }
  });

  for (const residents of [true, false]) {
    it(`commands one after another (${residents ? 'in a resident' : 'in a bubblewrap of their own'}): each result comes after its stand-ins are gone`, async () => {
      const tool = createRunCommandTool({ killGraceMs: 300, lingerMs: 300, sandbox: new CommandSandbox({ residents: residents ? pool : false }) });
      for (let i = 0; i < 5; i++) {
        const r = await call(tool, { command: 'ls -A' }, ws.ctx());
        assert.equal(r.isError, false, r.content);
        assert.match(r.content, /\.vscode/, 'the command stood on the stand-in');
        for (const name of ['.vscode', '.arbor', '.claude', '.mcp.json']) assert.equal(fs.existsSync(ws.at(name)), false, `${name} is left on the host`);
      }
    });
  }
});
