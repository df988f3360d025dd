// The mount-table check (mount-check.ts): no writable, visible mount of a sandbox reaches a host
// folder outside the workspace. Tables are real: bubblewrap's own, for a clean line and for the
// line a race makes (the pinned folder's bind landing on the folder a link named, outside). The
// host-side check (a resident's) and the shell one (a bubblewrap of its own) must agree.
import * as assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CommandSandbox } from '../../../src/core/tools/sandbox/command-sandbox';
import { sandboxStatus } from '../../../src/core/tools/sandbox/detect';
import { shellCheck, writableOutside, writableRule } from '../../../src/core/tools/sandbox/mount-check';

describe('the mount-table check (mount-check.ts)', () => {
  let base: string;
  let ws: string;
  let outside: string;
  before(async () => {
    const status = await sandboxStatus();
    if (!status.available) throw new Error(`These tests need bubblewrap, and ${status.reason}. Run "npm run setup:e2e" (it installs bubblewrap).`);
  });
  beforeEach(() => {
    base = fs.mkdtempSync('/var/tmp/arbor-mount-check-');
    ws = path.join(base, 'ws');
    outside = path.join(base, 'out side'); // a space: mountinfo escapes it (\040)
    fs.mkdirSync(path.join(ws, 'pkg', 'sub', '.git'), { recursive: true });
    fs.mkdirSync(outside);
  });
  afterEach(() => fs.rmSync(base, { recursive: true, force: true }));

  /** A sandbox's own table with `extra` mounts after the workspace's, and what the shell check says in it. */
  const sandbox = (extra: string[]): { table: string; check: ReturnType<typeof spawnSync> } => {
    const pkg = path.join(ws, 'pkg');
    const line = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp', '--bind', ws, ws, '--bind', pkg, pkg];
    line.push('--ro-bind', path.join(pkg, 'sub', '.git'), path.join(pkg, 'sub', '.git'), ...extra, '--unshare-all', '--die-with-parent', '--cap-drop', 'ALL');
    const table = execFileSync('bwrap', [...line, '--', 'cat', '/proc/self/mountinfo'], { encoding: 'utf8' });
    const check = spawnSync('bwrap', [...line, '--', '/bin/sh', '-c', shellCheck(writableRule([ws])), 'arbor-mount-check', 'echo', 'ran'], {
      encoding: 'utf8',
    });
    return { table, check };
  };

  it('a clean line passes both: the workspace binds, /tmp, /proc, /dev and its device nodes, the host /dev/shm covered by /dev', () => {
    const { table, check } = sandbox([]);
    assert.equal(writableOutside(table, writableRule([ws])), undefined);
    assert.equal(check.status, 0, String(check.stderr));
    assert.equal(check.stdout, 'ran\n');
  });

  it('a writable bind of a folder outside the workspace (what a raced --bind pkg pkg makes) fails both, naming it; the command does not run', () => {
    const { table, check } = sandbox(['--bind', outside, outside]);
    assert.match(writableOutside(table, writableRule([ws])) ?? '', /out side is the host's .*out side .*writable, outside the workspace/);
    assert.equal(check.status, 126);
    assert.equal(check.stdout, '', 'the command did not run');
    assert.match(String(check.stderr), /out side is a folder of the host outside the workspace, writable .*the command did not run/);
  });

  it('the same folder read-only, or covered by a later mount at or above it, passes', () => {
    const ro = sandbox(['--ro-bind', outside, outside]);
    assert.equal(writableOutside(ro.table, writableRule([ws])), undefined);
    assert.equal(ro.check.status, 0, String(ro.check.stderr));
    const covered = sandbox(['--bind', outside, outside, '--tmpfs', outside]);
    assert.equal(writableOutside(covered.table, writableRule([ws])), undefined);
    assert.equal(covered.check.status, 0, String(covered.check.stderr));
  });

  it('a folder of the workspace reached under another name (a bind inside a root) passes; a root the rule does not name fails', () => {
    const { table } = sandbox([]);
    assert.equal(writableOutside(table, writableRule([ws])), undefined);
    assert.match(writableOutside(table, writableRule([path.join(ws, 'pkg')])) ?? '', /ws is the host's .*ws /);
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
