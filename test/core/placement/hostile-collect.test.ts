// A hostile or broken far side answering `_arbor/sync/collect` (decision 0081): what it says is
// the commit, and the bundle it sends, are taken as data and checked — never as words for git's
// command line, never as objects git itself would refuse to check out, never read without end.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { bundleOfPack } from '../../../src/core/placement/bundle';
import { CHANGE_BOUNDS, childChanges } from '../../../src/core/placement/change-bounds';
import { collectOverLink } from '../../../src/core/placement/link-sync';
import { collectOverGit, moveLocal } from '../../../src/core/placement/placed-provider';
import { CHUNK_BYTES } from '../../../src/core/placement/sync-wire';
import type { PlacementTransport } from '../../../src/core/placement/types';
import type { LinkCall } from '../../../src/core/remote/acp';
import { DEFAULT_BWRAP } from '../../../src/core/tools/sandbox/detect';
import { mergeIntoWorkingTree } from '../../../src/core/worktree/merge';
import { RepoStateCache } from '../../../src/core/worktree/repo-state';
import { gitIn, worktreeIn } from '../worktree/fixture';

const git = (cwd: string, args: string[], input?: string) =>
  execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    ...(input !== undefined ? { input } : {}),
    env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' },
  }).trim();

/** A far side that answers collect with `answer`, and each read with `read(n)`. */
const farSide =
  (answer: unknown, read?: (n: number) => unknown): LinkCall =>
  async (method) => {
    if (method === '_arbor/sync/collect') return answer;
    if (method === '_arbor/sync/read' && read) return read(reads++);
    throw new Error(`unexpected ${method}`);
  };
let reads = 0;

describe('placement: a hostile far side’s collect answer', function () {
  this.timeout(60_000);
  let dir: string;
  let ws: string;
  let wt: { path: string; base: string };
  beforeEach(async () => {
    reads = 0;
    dir = fs.realpathSync(fs.mkdtempSync('/var/tmp/arbor-hostile-collect-'));
    ws = path.join(dir, 'ws');
    fs.mkdirSync(ws);
    gitIn(ws, 'init', '-q', '-b', 'main');
    fs.writeFileSync(path.join(ws, 'a.txt'), 'one\n');
    gitIn(ws, 'add', '-A');
    gitIn(ws, 'commit', '-qm', 'first');
    const place = await worktreeIn(ws, path.join(dir, 'worktrees'), 'c1', { filesLater: true, repos: new RepoStateCache() });
    assert.deepEqual(fs.readdirSync(place.path), ['.git'], 'made without its files, as a placed child’s (decision 0093)');
    wt = { path: place.path, base: place.base };
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** A refused answer: no ref names its commit here, and the worktree did not move. */
  const refusedLeavesNothing = () => {
    assert.throws(() => gitIn(ws, 'rev-parse', '--verify', '--quiet', 'refs/arbor/placed/c1'), 'no ref names it');
    assert.equal(gitIn(wt.path, 'rev-parse', 'HEAD').trim(), wt.base, 'the worktree did not move');
  };
  const collect = (call: LinkCall, bounds = CHANGE_BOUNDS) =>
    collectOverLink(
      call,
      { nodeId: 'c1', base: wt.base, cwd: '/far/nodes/c1' },
      ws,
      'arbor: changes',
      undefined,
      {
        path: wt.path,
        head: wt.base,
        // As the placed provider moves it: the node's ref named in the branch's own step, no second look where the collect saw every object.
        moveTo: (commit, also) => moveLocal({ path: wt.path, head: wt.base }, commit, also),
      },
      bounds,
    );
  /** Bounds a test can pass without writing a GiB: the real ones work the same way (CHANGE_BOUNDS is 1 GiB, 100,000 files). */
  const SMALL = { bytes: 8 * 1024 * 1024, files: 50 };

  /** A bundle (base64) of `commit` on the base, made in a far copy of the workspace's repository. */
  const bundleOf = (far: string, commit: string): string => {
    git(far, ['update-ref', 'refs/heads/out', commit]);
    const file = path.join(dir, `b-${Math.random().toString(36).slice(2)}.bundle`);
    git(far, ['bundle', 'create', '--quiet', file, 'refs/heads/out', `^${wt.base}`]);
    return fs.readFileSync(file).toString('base64');
  };
  const farCopy = (): string => {
    const far = path.join(dir, 'far');
    git(dir, ['clone', '-q', '--no-local', ws, far]);
    git(far, ['fetch', '-q', ws, wt.base]);
    return far;
  };

  it('a "commit" that is a git option (--output=<file>) is refused and truncates nothing here', async () => {
    const victim = path.join(dir, 'victim.txt');
    fs.writeFileSync(victim, 'precious\n');
    const err = await collect(farSide({ commit: `--output=${victim}` })).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.equal(fs.readFileSync(victim, 'utf8'), 'precious\n', 'the file named by the far side is untouched');
    assert.match(String(err), /SYNC_FAILED/);
    assert.equal(gitIn(wt.path, 'rev-parse', 'HEAD').trim(), wt.base, 'the worktree did not move');
  });

  it('a commit that is not on the base (one with no parent, already here) is refused; no ref names it', async () => {
    const orphan = git(ws, ['commit-tree', `${wt.base}^{tree}`, '-m', 'not on the base']);
    await assert.rejects(collect(farSide({ commit: orphan })), /SYNC_FAILED: .*not .*on .*base/);
    refusedLeavesNothing();
  });

  /** A commit on the base whose tree also holds `entry` (a line of `git mktree`), made in a far copy. */
  const commitOnBase = (far: string, entry: string): string => {
    const entries = git(far, ['ls-tree', `${wt.base}^{tree}`]);
    const tree = git(far, ['mktree'], `${entries}\n${entry}\n`);
    return git(far, ['commit-tree', tree, '-p', wt.base, '-m', 'changes']);
  };

  /** A commit on the base whose tree also holds `.git/hooks/pre-commit` (executable), made in a far copy. */
  const hookCommit = (far: string): string => {
    const hook = git(far, ['hash-object', '-w', '--stdin'], 'echo pwned > /tmp/arbor-pwned\n');
    const hooks = git(far, ['mktree'], `100755 blob ${hook}\tpre-commit\n`);
    const dotgit = git(far, ['mktree'], `040000 tree ${hooks}\thooks\n`);
    return commitOnBase(far, `040000 tree ${dotgit}\t.git`);
  };

  it('a bundle whose tree writes into .git (a hook) is refused when it arrives: no ref names it, the worktree does not move', async () => {
    const far = farCopy();
    const evil = hookCommit(far);
    await assert.rejects(collect(farSide({ commit: evil, data: bundleOf(far, evil) })), /SYNC_FAILED/);
    refusedLeavesNothing();
  });

  it('apply never writes under .git, whatever commit it is given (git’s own checkout refuses such a path too)', async () => {
    const far = farCopy();
    const evil = hookCommit(far);
    git(ws, ['fetch', '-q', far, evil]);
    const r = await mergeIntoWorkingTree(ws, wt.base, evil, [], DEFAULT_BWRAP);
    assert.ok(!fs.existsSync(path.join(ws, '.git', 'hooks', 'pre-commit')), 'no hook written into the repository');
    assert.equal(r.ok, false);
    assert.match(JSON.stringify(r), /\.git\/hooks\/pre-commit/);
  });

  it('apply never writes into Arbor’s own folders (the store, the worktrees folder), whatever commit it is given', async () => {
    const store = path.join(ws, '.arbor', 'store');
    const worktrees = path.join(ws, '.arbor', 'worktrees');
    fs.mkdirSync(path.join(worktrees, 'other-child'), { recursive: true });
    fs.mkdirSync(store, { recursive: true });
    const far = farCopy();
    const idx = path.join(dir, 'far-index');
    const env = { ...process.env, GIT_INDEX_FILE: idx };
    execFileSync('git', ['read-tree', wt.base], { cwd: far, env });
    for (const [file, text] of [
      ['.arbor/store/forged-session.jsonl', '{"forged":true}\n'],
      ['.arbor/worktrees/other-child/planted.txt', 'into a sibling\n'],
    ]) {
      const blob = git(far, ['hash-object', '-w', '--stdin'], text);
      execFileSync('git', ['update-index', '--add', '--cacheinfo', `100644,${blob},${file}`], { cwd: far, env });
    }
    const tree = execFileSync('git', ['write-tree'], { cwd: far, env, encoding: 'utf8' }).trim();
    const commit = git(far, ['commit-tree', tree, '-p', wt.base, '-m', 'changes']);
    git(ws, ['fetch', '-q', far, commit]);
    const r = await mergeIntoWorkingTree(ws, wt.base, commit, [store, worktrees], DEFAULT_BWRAP);
    assert.ok(!fs.existsSync(path.join(store, 'forged-session.jsonl')), 'nothing written into the store');
    assert.ok(!fs.existsSync(path.join(worktrees, 'other-child', 'planted.txt')), 'nothing written into another child’s worktree');
    assert.equal(r.ok, false);
  });

  it('an honest bundle past one chunk, read back in chunks of the size it announced, still comes back whole', async () => {
    const far = farCopy();
    fs.writeFileSync(path.join(far, 'big.bin'), randomBytes(CHUNK_BYTES + 1024 * 1024));
    git(far, ['checkout', '-q', '--detach', wt.base]);
    git(far, ['add', 'big.bin']);
    git(far, ['commit', '-qm', 'changes']);
    const commit = git(far, ['rev-parse', 'HEAD']);
    const bytes = Buffer.from(bundleOf(far, commit), 'base64');
    assert.ok(bytes.length > CHUNK_BYTES, 'the bundle takes more than one chunk');
    const call = farSide({ commit, bundle: { transfer: 'abcdefgh12', size: bytes.length } }, () => {
      throw new Error('read by offset below');
    });
    const byOffset: LinkCall = async (method, params) => {
      if (method !== '_arbor/sync/read') return call(method, params);
      const { offset } = params as { offset: number };
      const data = bytes.subarray(offset, offset + CHUNK_BYTES);
      return { data: data.toString('base64'), eof: offset + data.length >= bytes.length };
    };
    assert.deepEqual(await collect(byOffset), { commit, moved: true });
    assert.equal(gitIn(ws, 'rev-parse', 'refs/arbor/placed/c1').trim(), commit);
  });

  it('a bundle read back that never ends (eof never said, past its announced size) is cut off, not buffered without end', async () => {
    const chunk = Buffer.alloc(64 * 1024, 1).toString('base64');
    const call = farSide({ commit: 'a'.repeat(40), bundle: { transfer: 'abcdefgh12', size: 1024 } }, (n) => {
      if (n > 64) throw new Error('still reading past 4 MiB of a bundle announced as 1 KiB');
      return { data: chunk, eof: false };
    });
    await assert.rejects(collect(call), /SYNC_FAILED: .*(size|bytes)/);
    assert.ok(reads <= 2, `stopped reading at once (${reads} reads)`);
  });

  it('a bundle announced past the most the link carries is refused before any read', async () => {
    const call = farSide({ commit: 'a'.repeat(40), bundle: { transfer: 'abcdefgh12', size: 10 * 1024 * 1024 * 1024 } }, () => ({ data: '', eof: true }));
    await assert.rejects(collect(call), /SYNC_FAILED: .*(size|bytes)/);
    assert.equal(reads, 0);
  });

  /** A commit on the base adding a file of zeros past SMALL's bytes: a bundle of a few KiB (zeros compress ~1000×). */
  const zeroBomb = (far: string): string => {
    const size = SMALL.bytes + 1024 * 1024;
    const blob = execFileSync('sh', ['-c', `head -c ${size} /dev/zero | git hash-object -w --stdin`], { cwd: far, encoding: 'utf8' }).trim();
    return commitOnBase(far, `100644 blob ${blob}\tzeros.bin`);
  };

  it('a small bundle holding a blob past what a child may write (a zip bomb) is refused: no ref names it, the worktree does not move, nothing is written', async () => {
    const far = farCopy();
    const bomb = zeroBomb(far);
    const data = bundleOf(far, bomb);
    assert.ok(Buffer.byteLength(data, 'base64') < 64 * 1024, 'the bundle itself is tiny');
    await assert.rejects(
      collect(farSide({ commit: bomb, data }), SMALL),
      /SYNC_FAILED: the changes of c1 that came back would write 9\.0 MiB in 1 files \(the largest, zeros\.bin/,
    );
    refusedLeavesNothing();
    assert.ok(!fs.existsSync(path.join(wt.path, 'zeros.bin')), 'nothing was written');
  });

  it('the same over git (a fetch, as ssh and containers collect): the ref goes back to what it named before', async () => {
    const far = farCopy();
    fs.writeFileSync(path.join(far, 'small.txt'), 'honest\n');
    git(far, ['checkout', '-q', '--detach', wt.base]);
    git(far, ['add', 'small.txt']);
    git(far, ['commit', '-qm', 'first collect']);
    const honest = git(far, ['rev-parse', 'HEAD']);
    let next = honest;
    const transport = {
      collect: async () => {
        git(ws, ['fetch', '-q', '--no-tags', far, `+${next}:refs/arbor/placed/c1`]);
        return { commit: next };
      },
    } as unknown as PlacementTransport;
    const node = { nodeId: 'c1', base: wt.base, cwd: '/far/nodes/c1' };
    assert.deepEqual(await collectOverGit(transport, node, ws, SMALL), { commit: honest });
    next = zeroBomb(far);
    await assert.rejects(collectOverGit(transport, node, ws, SMALL), /SYNC_FAILED: the changes of c1 that came back would write/);
    assert.equal(gitIn(ws, 'rev-parse', 'refs/arbor/placed/c1').trim(), honest, 'the ref names the last honest collect again');
  });

  it('many small files past the count are refused too, before any is measured', async () => {
    const far = farCopy();
    git(far, ['checkout', '-q', '--detach', wt.base]);
    for (let i = 0; i < SMALL.files + 1; i++) fs.writeFileSync(path.join(far, `f${i}.txt`), `${i}\n`);
    git(far, ['add', '-A']);
    git(far, ['commit', '-qm', 'changes']);
    const commit = git(far, ['rev-parse', 'HEAD']);
    await assert.rejects(collect(farSide({ commit, data: bundleOf(far, commit) }), SMALL), /SYNC_FAILED: .*touch more than 50 files/);
    assert.throws(() => gitIn(ws, 'rev-parse', '--verify', '--quiet', 'refs/arbor/placed/c1'), 'no ref names it');
  });

  /** A bundle holding exactly `objects` (a torn send: what the commit names may be missing from it), of `tip` on the base. */
  const tornBundle = (far: string, tip: string, objects: string[]): string => {
    const pack = execFileSync('git', ['pack-objects', '--stdout', '-q'], { cwd: far, input: `${objects.join('\n')}\n` });
    return bundleOfPack(pack, wt.base, tip, 'refs/heads/out').toString('base64');
  };
  const treeOf = (far: string, commit: string) => git(far, ['rev-parse', `${commit}^{tree}`]);

  it('a torn bundle (a blob its commit names never came) is refused: no ref names it, the worktree does not move', async () => {
    const far = farCopy();
    const blob = git(far, ['hash-object', '-w', '--stdin'], 'never sent\n');
    const commit = commitOnBase(far, `100644 blob ${blob}\tlost.txt`);
    await assert.rejects(
      collect(farSide({ commit, data: tornBundle(far, commit, [commit, treeOf(far, commit)]) })),
      /SYNC_FAILED: .*(did not receive expected object|does not hold)/,
    );
    refusedLeavesNothing();
  });

  it('a commit on the base through one of its own whose tree never came is refused (the long way looks at every object)', async () => {
    const far = farCopy();
    const lostBlob = git(far, ['hash-object', '-w', '--stdin'], 'between\n');
    const between = commitOnBase(far, `100644 blob ${lostBlob}\tbetween.txt`);
    const commit = git(far, ['commit-tree', `${wt.base}^{tree}`, '-p', between, '-m', 'back to the base tree']);
    // The tip and the commit between, but not the tree between names (nor its blob).
    await assert.rejects(collect(farSide({ commit, data: tornBundle(far, commit, [commit, between]) })), /SYNC_FAILED|missing/);
    refusedLeavesNothing();
  });

  it('an honest collect names the node’s ref and moves the branch together; a child of the base is listed by one git with its parent', async () => {
    const far = farCopy();
    const blob = git(far, ['hash-object', '-w', '--stdin'], 'honest\n');
    const commit = commitOnBase(far, `100644 blob ${blob}\tnew.txt`);
    const r = await collect(farSide({ commit, data: bundleOf(far, commit) }));
    assert.deepEqual(r, { commit, moved: true });
    assert.equal(gitIn(ws, 'rev-parse', 'refs/arbor/placed/c1').trim(), commit);
    assert.equal(gitIn(wt.path, 'rev-parse', 'HEAD').trim(), commit);
    assert.equal(gitIn(ws, 'rev-parse', 'refs/heads/arbor/c1').trim(), commit, 'the branch moved (HEAD followed as a symbolic ref)');
    assert.ok(!fs.existsSync(path.join(wt.path, 'new.txt')), 'nothing written: the branch alone moved (decision 0093)');
    // The listing is diff-tree's from the base, exactly; anything not a child of the base is asked the long way.
    assert.equal(await childChanges(ws, wt.base, commit), git(ws, ['diff-tree', '-r', '-z', '--no-renames', wt.base, commit]));
    assert.equal(await childChanges(ws, wt.base, wt.base), undefined, 'the base is no child of itself');
    const orphan = git(ws, ['commit-tree', `${wt.base}^{tree}`, '-m', 'no parent']);
    assert.equal(await childChanges(ws, wt.base, orphan), undefined);
    const grandchild = git(ws, ['commit-tree', `${commit}^{tree}`, '-p', commit, '-m', 'two steps']);
    assert.equal(await childChanges(ws, wt.base, grandchild), undefined);
    const merge = git(ws, ['commit-tree', `${commit}^{tree}`, '-p', wt.base, '-p', orphan, '-m', 'merge']);
    assert.equal(await childChanges(ws, wt.base, merge), undefined);
    assert.equal(await childChanges(ws, wt.base, 'f'.repeat(40)), undefined, 'not here');
    const empty = git(ws, ['commit-tree', `${wt.base}^{tree}`, '-p', wt.base, '-m', 'nothing']);
    assert.equal(await childChanges(ws, wt.base, empty), '', 'a child changing nothing lists nothing');
  });
});
