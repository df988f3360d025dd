// The mount-table check (mount-check.ts): no writable mount of a sandbox reaches a host folder
// outside the workspace. Tables are real, bubblewrap's own: a clean line, the line a race makes
// (the pinned folder's bind landing on the folder a link named, outside), ones a race can leave
// that its first version passed (found by review), and ones of legitimate hosts it refused. Each runs the host-side check
// (`writableOutside`, a resident's) and the shell one (`shellCheck`, a bubblewrap of its own,
// under dash and bash) on the same table and asserts they agree.
import * as assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CommandSandbox } from '../../../src/core/tools/sandbox/command-sandbox';
import { sandboxStatus } from '../../../src/core/tools/sandbox/detect';
import { shellCheck, type WritableRule, writableOutside, writableRule } from '../../../src/core/tools/sandbox/mount-check';

const SHELLS = ['/bin/sh', '/bin/dash', '/bin/bash'].filter((s) => fs.existsSync(s));

/** The shell check's verdict on `table` (a file in place of /proc/self/mountinfo): true when it would run the command. */
function shellPasses(table: string, rule: WritableRule, shell: string): boolean {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-mc-'));
  try {
    const file = path.join(dir, 'mountinfo');
    fs.writeFileSync(file, table);
    const script = shellCheck(rule).replace('f=/proc/self/mountinfo', `f='${file}'`);
    const r = spawnSync(shell, ['-c', script, 'arbor-mount-check', 'true'], { encoding: 'utf8' });
    assert.ok(r.status === 0 || r.status === 126, `${shell}: ${r.status} ${r.stderr}`);
    return r.status === 0;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Both checks on one table: they must agree; returns whether it passes. */
function bothPass(table: string, rule: WritableRule): boolean {
  const host = writableOutside(table, rule) === undefined;
  for (const sh of SHELLS) assert.equal(shellPasses(table, rule, sh), host, `${sh} and writableOutside disagree on:\n${table}`);
  return host;
}

describe('the mount-table check (mount-check.ts)', () => {
  let base: string;
  let ws: string;
  let outside: string;
  before(async () => {
    const status = await sandboxStatus();
    if (!status.available) throw new Error(`These tests need bubblewrap, and ${status.reason}. Run "npm run setup:e2e" (it installs bubblewrap).`);
  });
  beforeEach(() => {
    base = fs.mkdtempSync('/var/tmp/arbor-mount-review-');
    ws = path.join(base, 'ws');
    outside = path.join(base, 'out side');
    fs.mkdirSync(path.join(ws, 'zz', '.git'), { recursive: true });
    fs.mkdirSync(path.join(ws, 'pkg', 'sub', '.git'), { recursive: true });
    fs.mkdirSync(outside);
  });
  afterEach(() => fs.rmSync(base, { recursive: true, force: true }));

  const line = (extra: string[]): string[] => [
    '--ro-bind',
    '/',
    '/',
    '--dev',
    '/dev',
    '--proc',
    '/proc',
    '--tmpfs',
    '/tmp',
    '--bind',
    ws,
    ws,
    ...extra,
    '--unshare-all',
    '--die-with-parent',
    '--cap-drop',
    'ALL',
  ];
  const tableOf = (extra: string[]): string => execFileSync('bwrap', [...line(extra), '--', 'cat', '/proc/self/mountinfo'], { encoding: 'utf8' });

  it('a protected path bound read-only as itself passes both; a decoy a link named bound in its stead (the real one writable) fails both (session 48)', () => {
    const git = path.join(ws, 'pkg', 'sub', '.git');
    const decoy = path.join(ws, 'decoy');
    fs.mkdirSync(decoy);
    const planned = ['--bind', path.join(ws, 'pkg'), path.join(ws, 'pkg'), '--ro-bind', git, git];
    const rule = writableRule([ws], line(planned));
    assert.deepEqual(
      rule.protected.map((p) => p.mountPoint),
      [git],
    );
    assert.equal(bothPass(tableOf(planned), rule), true);
    // What bubblewrap made when `.git` was a link to ../../decoy as it bound it: the decoy, read-only, at the decoy.
    assert.equal(bothPass(tableOf(['--bind', path.join(ws, 'pkg'), path.join(ws, 'pkg'), '--ro-bind', decoy, decoy]), rule), false);
    // Bound there, but writable, or another folder read-only at its name.
    assert.equal(bothPass(tableOf(['--bind', path.join(ws, 'pkg'), path.join(ws, 'pkg'), '--bind', git, git]), rule), false);
    assert.equal(bothPass(tableOf(['--bind', path.join(ws, 'pkg'), path.join(ws, 'pkg'), '--ro-bind', decoy, git]), rule), false);
    // The protected folders at a root's top are on every sandbox's plan: not checked (nothing can swap them).
    assert.deepEqual(writableRule([ws], line(['--ro-bind', path.join(ws, '.git'), path.join(ws, '.git')])).protected, []);
  });

  it('a clean line passes both', () => {
    const extra = ['--bind', path.join(ws, 'zz'), path.join(ws, 'zz')];
    assert.equal(bothPass(tableOf(extra), writableRule([ws], line(extra))), true);
  });

  it('an outside folder bound writable on a workspace folder under a later mount (not stacked on it) fails both: a rename from another sandbox uncovers it', async function () {
    // What a raced `--bind pkg pkg` leaves when the source followed a link to the outside folder
    // and the destination a link into zz/pkg (zz: pinned or protected, mounted later).
    this.timeout(20_000);
    fs.mkdirSync(path.join(ws, 'zz', 'pkg'));
    const extra = ['--bind', outside, path.join(ws, 'zz', 'pkg'), '--bind', path.join(ws, 'zz'), path.join(ws, 'zz')];
    const rule = writableRule([ws], line(extra));
    assert.equal(bothPass(tableOf(extra), rule), false, 'the covered-by-an-ancestor mount is refused');
    // Why: the same line, its table passed by the old check, and the command then writes outside
    // once zz/pkg is renamed on the host (as a command in a sandbox without zz pinned can).
    const moved = path.join(ws, 'pkg2');
    const child = spawn('bwrap', [
      ...line(extra),
      '--',
      '/bin/sh',
      '-c',
      `for i in $(seq 100); do [ -d '${moved}' ] && { echo pwned > '${moved}/pwned'; exit 0; }; sleep 0.05; done; exit 1`,
    ]);
    await new Promise((r) => setTimeout(r, 500));
    fs.renameSync(path.join(ws, 'zz', 'pkg'), moved);
    const code = await new Promise<number | null>((r) => child.on('exit', r));
    assert.equal(code, 0);
    assert.equal(fs.readFileSync(path.join(outside, 'pwned'), 'utf8'), 'pwned\n', 'the uncovered mount was the outside folder, writable');
  });

  it('the same folder with a mount stacked on it (on its own root) passes both', () => {
    const extra = ['--bind', outside, outside, '--tmpfs', outside];
    assert.equal(bothPass(tableOf(extra), writableRule([ws], line(extra))), true);
  });

  it("a filesystem of no host mount, writable where the line makes none (another namespace's /tmp reached through /proc/<pid>/root by a raced link) fails both", () => {
    // The table has a fresh tmpfs at the outside folder; the line the rule was made for made none there.
    assert.equal(bothPass(tableOf(['--tmpfs', outside]), writableRule([ws], line([]))), false);
    assert.equal(bothPass(tableOf(['--tmpfs', outside]), writableRule([ws], line(['--tmpfs', outside]))), true, 'where the line makes it, it passes');
  });

  it('a host file bound writable on /dev/null (a raced bind whose destination followed a link to ../dev/null) fails both', () => {
    const file = path.join(outside, 'bashrc');
    fs.writeFileSync(file, 'x\n');
    assert.equal(bothPass(tableOf(['--bind', file, '/dev/null']), writableRule([ws], line([]))), false);
    // Another device node of the host's /dev on /dev/null (nodev here, but not the node --dev binds).
    if (fs.existsSync('/dev/loop0')) assert.equal(bothPass(tableOf(['--bind', '/dev/loop0', '/dev/null']), writableRule([ws], line([]))), false);
  });

  it('a host mount inside a root (a tmpfs, a volume) comes in with the root, writable: both pass', () => {
    // The sandbox's tmpfs at ws/sub stands for the host's: the host's table gets the same mount.
    fs.mkdirSync(path.join(ws, 'sub'));
    const extra = ['--tmpfs', path.join(ws, 'sub')];
    const table = tableOf(extra);
    const sub = table.split('\n').find((l) => l.split(' ')[4] === path.join(ws, 'sub').replace(/ /g, '\\040'));
    assert.ok(sub);
    const host = `${fs.readFileSync('/proc/self/mountinfo', 'utf8')}9999 1 ${sub.split(' ')[2]} / ${path.join(ws, 'sub').replace(/ /g, '\\040')} rw,relatime - tmpfs tmpfs rw\n`;
    assert.equal(bothPass(table, writableRule([ws], line(extra), host)), true);
  });

  it('a host whose /dev is a tmpfs (a container), not devtmpfs: the device nodes --dev binds pass both', () => {
    const table = tableOf([]);
    const hostText = fs.readFileSync('/proc/self/mountinfo', 'utf8');
    const devLine = hostText.split('\n').find((l) => l.split(' ')[4] === '/dev');
    assert.ok(devLine);
    const devDev = devLine.split(' ')[2];
    // The same tables, with the host's /dev (and the nodes bound from it) a tmpfs of device 0:9999.
    const asTmpfs = (t: string) =>
      t
        .split('\n')
        .map((l) => (l.split(' ')[2] === devDev ? l.replace(` ${devDev} `, ' 0:9999 ').replace(/ - devtmpfs devtmpfs /, ' - tmpfs tmpfs ') : l))
        .join('\n');
    assert.equal(bothPass(asTmpfs(table), writableRule([ws], line([]), asTmpfs(hostText))), true);
  });

  /** A sandbox's own table with `extra` mounts after the workspace's, and what the shell check says in it. */
  const sandbox = (extra: string[]): { table: string; check: ReturnType<typeof spawnSync>; rule: WritableRule } => {
    const pkg = path.join(ws, 'pkg');
    const line = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp', '--bind', ws, ws, '--bind', pkg, pkg];
    line.push('--ro-bind', path.join(pkg, 'sub', '.git'), path.join(pkg, 'sub', '.git'), ...extra, '--unshare-all', '--die-with-parent', '--cap-drop', 'ALL');
    const table = execFileSync('bwrap', [...line, '--', 'cat', '/proc/self/mountinfo'], { encoding: 'utf8' });
    const check = spawnSync('bwrap', [...line, '--', '/bin/sh', '-c', shellCheck(writableRule([ws], line)), 'arbor-mount-check', 'echo', 'ran'], {
      encoding: 'utf8',
    });
    return { table, check, rule: writableRule([ws], line) };
  };

  it('a clean line passes both: the workspace binds, /tmp, /proc, /dev and its device nodes, the host /dev/shm covered by /dev', () => {
    const { table, check, rule } = sandbox([]);
    assert.equal(writableOutside(table, rule), undefined);
    assert.equal(check.status, 0, String(check.stderr));
    assert.equal(check.stdout, 'ran\n');
  });

  it('a writable bind of a folder outside the workspace (what a raced --bind pkg pkg makes) fails both, naming it; the command does not run', () => {
    const { table, check, rule } = sandbox(['--bind', outside, outside]);
    assert.match(writableOutside(table, rule) ?? '', /out side is the host's .*out side .*writable, outside the workspace/);
    assert.equal(check.status, 126);
    assert.equal(check.stdout, '', 'the command did not run');
    assert.match(String(check.stderr), /out side is a folder of the host outside the workspace, writable .*the command did not run/);
  });

  it('the same folder read-only, or covered by a later mount at or above it, passes', () => {
    const ro = sandbox(['--ro-bind', outside, outside]);
    assert.equal(writableOutside(ro.table, ro.rule), undefined);
    assert.equal(ro.check.status, 0, String(ro.check.stderr));
    const covered = sandbox(['--bind', outside, outside, '--tmpfs', outside]);
    assert.equal(writableOutside(covered.table, covered.rule), undefined);
    assert.equal(covered.check.status, 0, String(covered.check.stderr));
  });

  it('a folder of the workspace reached under another name (a bind inside a root) passes; a root the rule does not name fails', () => {
    const { table, rule } = sandbox([]);
    assert.equal(writableOutside(table, rule), undefined);
    assert.match(writableOutside(table, { ...rule, ...writableRule([path.join(ws, 'pkg')], []), fresh: rule.fresh }) ?? '', /ws is the host's .*ws /);
  });

  it('a bubblewrap of its own gets the check where a folder is bound writable onto itself (pinned, or a root inside another), and only there', async () => {
    const own = new CommandSandbox({ residents: false });
    const plain = path.join(base, 'plain');
    fs.mkdirSync(plain);
    const none = await own.confine('workspace-write', [plain], plain);
    assert.equal(none?.before, undefined, 'nothing to race: no check');
    none?.release();
    const pinned = await own.confine('workspace-write', [ws], ws); // pkg/sub/.git: pkg and pkg/sub pinned
    assert.deepEqual(pinned?.before?.slice(0, 2), ['/bin/sh', '-c']);
    pinned?.release();
    const inner = path.join(plain, 'inner');
    fs.mkdirSync(inner);
    const nested = await own.confine('workspace-write', [plain, inner], plain);
    assert.deepEqual(nested?.before?.slice(0, 2), ['/bin/sh', '-c']);
    nested?.release();
    const ro = await own.confine('read-only', [ws], ws);
    assert.equal(ro?.before, undefined, 'read-only binds nothing writable');
    ro?.release();
  });
});
