// Decision 0114 (amended in s56): a far process's record of a release it is still finishing is
// never read as a dead process's by another far process on the same root, whatever PID namespace
// each runs in (two `arbor acp` sandboxed each in its own, with its own /proc: pid 2 both).
import * as assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { sandboxStatus } from '../../src/core/tools/sandbox/detect';

describe('far release records across PID namespaces (amended 0114)', () => {
  let dir: string;
  let holder: ChildProcess | undefined;
  const module = require.resolve('../../src/acp/released-nodes');
  // Its own PID namespace and its own /proc, as a sandbox or a container gives it.
  const sandboxed = (script: string) => ['--unshare-pid', '--dev-bind', '/', '/', '--proc', '/proc', '--die-with-parent', process.execPath, '-e', script];
  const orphans = () => {
    const out = spawnSync(
      'bwrap',
      sandboxed(`
        const { ReleasedNodes } = require(${JSON.stringify(module)});
        new ReleasedNodes(${JSON.stringify(dir)}).orphans(() => false).then((o) => process.stdout.write(JSON.stringify({ pid: process.pid, o })));`),
      { encoding: 'utf8', timeout: 30_000 },
    );
    assert.equal(out.status, 0, out.stderr);
    return JSON.parse(out.stdout) as { pid: number; o: { node: string }[] };
  };

  before(async () => {
    const status = await sandboxStatus();
    if (!status.available) throw new Error(`These tests need bubblewrap, and ${status.reason}. Run "npm run setup:e2e" (it installs bubblewrap).`);
  });
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-released-'));
  });
  afterEach(() => {
    holder?.kill('SIGKILL');
    holder = undefined;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a live release in a sibling namespace is not an orphan (its token answers); once that process is gone, it is', async () => {
    holder = spawn(
      'bwrap',
      sandboxed(`
        const { ReleasedNodes } = require(${JSON.stringify(module)});
        const r = new ReleasedNodes(${JSON.stringify(dir)});
        Promise.resolve(r.mark('n1', 'repo-0123456789ab')).then(() => process.stdout.write('pid ' + process.pid + '\\n'));
        setInterval(() => undefined, 1000);`),
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const said = await new Promise<string>((resolve, reject) => {
      holder?.stdout?.once('data', (d: Buffer) => resolve(d.toString()));
      holder?.once('exit', (code) => reject(new Error(`the releasing process ended (${code}) before its record was written`)));
    });
    const b = orphans();
    // (The same pid in both namespaces is what made the pid alone read as "a leftover of ours".)
    assert.match(said, /^pid \d+/);
    assert.deepEqual(b.o, [], `the sweeper (pid ${b.pid} in its namespace) left the live release of the far process that says "${said.trim()}" alone`);
    const gone = new Promise((resolve) => holder?.once('exit', resolve));
    holder.kill('SIGKILL');
    await gone;
    assert.deepEqual(
      orphans().o.map((x) => x.node),
      ['n1'],
      'a killed process’s release is swept',
    );
  });
});
