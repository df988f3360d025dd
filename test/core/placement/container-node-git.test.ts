// A container node's folder is the container's to write (it is mounted there, decision 0071),
// and collect and cleanup run git on it HERE, outside the container: a node whose agent swapped
// the folder's `.git` for a repository of its own (whose config runs a command: core.fsmonitor)
// must not get that command run on this machine. No engine is needed: what the container would
// write through its mount is written here directly.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { workspaceCommit } from '../../../src/core/placement/base';
import { ContainerTransport } from '../../../src/core/placement/container';
import { PlacementError } from '../../../src/core/placement/types';
import { DEFAULT_BWRAP } from '../../../src/core/tools/sandbox/detect';
import { gitIn, makeRepo } from './sync-fixture';

describe('placement: a container node that swapped its .git', function () {
  this.timeout(60_000);
  let dir: string;
  beforeEach(() => {
    dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-ct-nodegit-')));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const transport = () =>
    new ContainerTransport(
      { name: 'pod', kind: 'container', image: 'localhost/none:0', engine: 'podman' },
      { version: '0', workDir: path.join(dir, 'placed') },
    );

  /** A repository of the node's own making at `gitDir`, whose config runs a command that leaves `marker`. */
  const hostileRepo = (gitDir: string, marker: string) => {
    fs.mkdirSync(path.join(gitDir, 'objects'), { recursive: true });
    fs.mkdirSync(path.join(gitDir, 'refs', 'heads'), { recursive: true });
    fs.writeFileSync(path.join(gitDir, 'HEAD'), 'ref: refs/heads/main\n');
    fs.writeFileSync(path.join(gitDir, 'config'), `[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfsmonitor = "touch ${marker}; false"\n`);
  };

  for (const how of ['a .git folder of its own', 'a .git file naming a folder of its own'] as const) {
    it(`${how}: collect refuses it and runs nothing of it here; cleanup still removes the node`, async () => {
      const ws = makeRepo(dir);
      const { repo, commit } = await workspaceCommit(ws, [path.join(ws, '.arbor', 'store')], 'ct', DEFAULT_BWRAP);
      const t = transport();
      const placed = await t.prepare({ nodeId: 's-ct.1', repo, commit });
      const marker = path.join(dir, 'RAN-ON-THE-HOST');
      // What the node writes inside the container, through its mount.
      fs.writeFileSync(path.join(placed.cwd, 'work.txt'), 'done\n');
      if (how === 'a .git folder of its own') {
        fs.rmSync(path.join(placed.cwd, '.git'));
        hostileRepo(path.join(placed.cwd, '.git'), marker);
      } else {
        hostileRepo(path.join(placed.cwd, '.own'), marker);
        fs.writeFileSync(path.join(placed.cwd, '.git'), `gitdir: ${path.join(placed.cwd, '.own')}\n`);
      }
      const err = await t.collect(placed, repo).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.equal(fs.existsSync(marker), false, 'the node’s repository config ran a command on this machine');
      assert.ok(err instanceof PlacementError && err.code === 'SYNC_FAILED', `refused: ${String(err)}`);
      assert.match(err.message, /\.git/);
      assert.throws(() => gitIn(repo, 'rev-parse', '--verify', '--quiet', 'refs/arbor/placed/s-ct.1'), 'no ref names anything');
      await t.cleanup(placed);
      assert.equal(fs.existsSync(marker), false, 'cleanup ran nothing of it either');
      assert.equal(fs.existsSync(placed.cwd), false, 'the node folder is gone');
      assert.doesNotMatch(gitIn(repo, 'worktree', 'list', '--porcelain'), /s-ct/, 'and git’s record of it');
    });
  }

  it('an untouched node is collected as before (its own .git, git told the folder)', async () => {
    const ws = makeRepo(dir);
    const { repo, commit } = await workspaceCommit(ws, [path.join(ws, '.arbor', 'store')], 'ct', DEFAULT_BWRAP);
    const t = transport();
    const placed = await t.prepare({ nodeId: 's-ct.2', repo, commit });
    fs.writeFileSync(path.join(placed.cwd, 'work.txt'), 'done\n');
    const { commit: back } = await t.collect(placed, repo);
    assert.equal(gitIn(repo, 'show', `${back}:work.txt`), 'done\n');
    assert.equal(gitIn(repo, 'rev-parse', `${back}^`).trim(), commit);
    assert.equal((await t.collect(placed, repo)).commit, back, 'a repeated collect makes no new commit');
    await t.cleanup(placed);
    assert.equal(fs.existsSync(placed.cwd), false);
  });
});
