// Decision 0114 (amended in s56): a far process's record of a release it is still finishing is
// never read as a dead process's by another far process on the same root, whatever PID namespace
// each runs in (two `arbor acp` sandboxed each in its own, with its own /proc: pid 2 both).
import * as assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ReleasedNodes } from '../../src/acp/released-nodes';
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
  it("attack: another far process's close between this one's making `.live` and its token's listen leaves its release with a token", async () => {
    const repo = 'repo-0123456789ab';
    const a = new ReleasedNodes(dir);
    await a.mark('n1', repo);
    const b = new ReleasedNodes(dir);
    // b makes `.live` and asks the tokens there (a's among them); a closes meanwhile, its token gone
    // and `.live` empty for that instant.
    const marking = b.mark('n2', repo);
    await a.close();
    await marking;
    try {
      const rec = JSON.parse(fs.readFileSync(path.join(dir, '.released', 'n2'), 'utf8')) as { owner: { live?: string } };
      assert.ok(rec.owner.live, 'the release names its token');
      assert.ok(fs.lstatSync(path.join(dir, '.released', '.live', rec.owner.live)).isSocket(), 'which listens');
      // Without it, a sweeper in its own PID namespace reads the live release as a dead process's.
      assert.ok(!orphans().o.some((x) => x.node === 'n2'), 'the live release is not an orphan for a far process in another namespace');
    } finally {
      await b.close();
    }
  });

  /** `nodes/n1` with a folder `a` holding a read-only mount `a/ro` (a sandbox's view: what no removal can remove). */
  const stuckNode = () => {
    const wt = path.join(dir, 'nodes', 'n1');
    fs.mkdirSync(path.join(wt, 'a', 'ro', 'deep'), { recursive: true });
    fs.writeFileSync(path.join(wt, 'a', 'ro', 'deep', 'f'), 'x');
    return { wt, ro: path.join(wt, 'a', 'ro') };
  };
  const inSandbox = (ro: string, script: string) => {
    const out = spawnSync(
      'bwrap',
      ['--unshare-pid', '--dev-bind', '/', '/', '--ro-bind', ro, ro, '--proc', '/proc', '--die-with-parent', process.execPath, '-e', script],
      { encoding: 'utf8', timeout: 60_000 },
    );
    assert.equal(out.status, 0, out.stderr);
    return JSON.parse(out.stdout);
  };

  it('a released folder that cannot be removed for good (a read-only mount in it) is said once and not tried again by each sweep', () => {
    const { wt, ro } = stuckNode();
    const syncModule = require.resolve('../../src/acp/sync');
    const got = inSandbox(
      ro,
      `const fs = require('fs'), path = require('path');
      const { NodeSync } = require(${JSON.stringify(syncModule)});
      const { ReleasedNodes } = require(${JSON.stringify(module)});
      (async () => {
        const repos = ${JSON.stringify(dir)}, wt = ${JSON.stringify(wt)};
        // A release of this process that is over (its token closed), its folder left.
        const r = new ReleasedNodes(repos);
        await r.mark('n1', 'repo-0123456789ab');
        await r.close();
        let tries = 0;
        // A removal of the node's folder starts by opening the folder it is in (removeTree).
        const open = fs.openSync;
        fs.openSync = (p, ...rest) => { if (p === path.dirname(wt)) tries++; return open(p, ...rest); };
        const warned = [];
        const sync = new NodeSync({ nodes: path.dirname(wt), stores: path.join(repos, 'stores'), repos }, async () => undefined, (l) => warned.push(l));
        await sync.sweep();
        const first = tries;
        for (let i = 0; i < 3; i++) await sync.sweep();
        process.stdout.write(JSON.stringify({ first, later: tries - first, warned, there: fs.existsSync(wt), record: fs.existsSync(path.join(repos, '.released', 'n1')) }));
      })();`,
    ) as { first: number; later: number; warned: string[]; there: boolean; record: boolean };
    assert.ok(got.first > 0, 'the first sweep tried');
    assert.equal(got.there, true, 'the folder stays (read-only below)');
    assert.equal(got.later, 0, 'later sweeps did not try again (each paid a removal, a walk, the repository lock and two gits before)');
    assert.equal(got.warned.length, 1, JSON.stringify(got.warned));
    assert.match(got.warned[0], /released node n1: its folder .*nodes\/n1 cannot be removed \((EBUSY|EROFS): .*will not try again: remove it by hand/);
    assert.equal(got.record, true, 'its record stays (the next far process tries once)');
  });

  it('attack: a folder swapped for a link while the removal makes folders writable is not followed out of the node', () => {
    const { wt, ro } = stuckNode();
    const outside = path.join(dir, 'outside');
    fs.mkdirSync(path.join(outside, 'secret'), { recursive: true, mode: 0o700 });
    fs.chmodSync(path.join(outside, 'secret'), 0o500);
    // The node's agent, still running (its close failed), renames a folder and puts a link in its
    // place at the instant the walk has opened it and given it its mode, before it lists it.
    const got = inSandbox(
      ro,
      `const fs = require('fs'), path = require('path');
      const { removeNodeFolder } = require(${JSON.stringify(module)});
      const a = path.join(${JSON.stringify(wt)}, 'a');
      const ino = fs.statSync(a).ino;
      const chmod = fs.fchmodSync;
      let swapped = false;
      fs.fchmodSync = (fd, mode) => {
        chmod(fd, mode);
        if (!swapped && fs.fstatSync(fd).ino === ino) { swapped = true; fs.renameSync(a, a + '.moved'); fs.symlinkSync(${JSON.stringify(outside)}, a); }
      };
      const err = removeNodeFolder(${JSON.stringify(wt)});
      process.stdout.write(JSON.stringify({ swapped, failed: !!err }));`,
    ) as { swapped: boolean; failed: boolean };
    assert.ok(got.swapped, 'the swap happened mid-walk (the scenario)');
    assert.equal(fs.statSync(path.join(outside, 'secret')).mode & 0o777, 0o500, 'the folder out there kept its mode');
    assert.ok(fs.existsSync(path.join(outside, 'secret')), 'and is there');
  });
});
