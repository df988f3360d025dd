// A finished node's worktree on the far side is kept for the next node of the repository
// (`_arbor/sync/release`, decision 0114). Tested as the client uses it (the real link-sync client
// against the real `arbor acp` over stdio) and as the last node's agent would try to leak into the
// next one: files changed with their size and times put back, files added, ignored, deleted, a
// folder's mode changed, git state left in the worktree's own git folder, a `.git` rewritten.
// The next node must find exactly its commit; nothing kept survives the far side's close.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as acp from '@agentclientprotocol/sdk/unstable';
import { repoKey } from '../../src/core/placement/layout';
import { collectOverLink, prepareOverLink, releaseOverLink } from '../../src/core/placement/link-sync';
import { SYNC_METHODS } from '../../src/core/placement/sync-wire';
import { type AcpPeer, startAcp } from '../support/acp-peer';
import { cliWorld } from '../support/cli';

const env = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' };
const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, env, encoding: 'utf8' }).trim();
const dataCode = (e: unknown): string | undefined => ((e as acp.RequestError).data as { code?: string } | undefined)?.code;

/** A repository of two commits (an ignore rule, a few files in folders), and a worktree detached at the second. */
function localRepo(dir: string): { repo: string; worktree: string; first: string; second: string } {
  const repo = path.join(dir, 'proj');
  fs.mkdirSync(path.join(repo, 'src', 'deep'), { recursive: true });
  fs.writeFileSync(path.join(repo, '.gitignore'), 'build/\n*.log\n');
  fs.writeFileSync(path.join(repo, 'src', 'a.ts'), 'export const a = 1;\n');
  fs.writeFileSync(path.join(repo, 'src', 'deep', 'd.ts'), 'export const d = 4;\n');
  fs.writeFileSync(path.join(repo, 'run.sh'), '#!/bin/sh\necho hi\n', { mode: 0o755 });
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-qm', 'first');
  const first = git(repo, 'rev-parse', 'HEAD');
  fs.writeFileSync(path.join(repo, 'src', 'c.ts'), 'export const c = 3;\n');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-qm', 'second');
  const worktree = path.join(dir, 'proj-child');
  git(repo, 'worktree', 'add', '-q', '--detach', worktree);
  return { repo, worktree, first, second: git(repo, 'rev-parse', 'HEAD') };
}

/** Every file under `dir` (not `.git`), with its bytes and executable bit. */
function filesOf(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (d === dir && e.name === '.git') continue;
      if (e.isDirectory()) walk(p);
      else out[path.relative(dir, p)] = `${fs.statSync(p).mode & 0o111 ? 'x ' : ''}${fs.readFileSync(p, 'utf8')}`;
    }
  };
  walk(dir);
  return out;
}

/** The commit's files as git has them (what a fresh checkout writes). */
function filesAt(repo: string, commit: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of git(repo, 'ls-tree', '-r', commit).split('\n')) {
    const [meta, name] = line.split('\t') as [string, string];
    const [mode, , oid] = meta.split(' ') as [string, string, string];
    out[name] = `${mode === '100755' ? 'x ' : ''}${execFileSync('git', ['cat-file', 'blob', oid], { cwd: repo, encoding: 'utf8' })}`;
  }
  return out;
}

/** The released node's folder is moved away by the far side after its answer: waited for, bounded (10 s). */
async function movedAway(folder: string): Promise<void> {
  for (let i = 0; i < 200 && fs.existsSync(folder); i++) await new Promise((r) => setTimeout(r, 50));
  assert.equal(fs.existsSync(folder), false, 'the released node has no folder');
}

describe('acp: a finished node’s far worktree is kept for the next node, exactly reset (_arbor/sync/release)', function () {
  this.timeout(120_000);
  const w = cliWorld('arbor-acp-reuse-', { realDir: true });
  let peer: AcpPeer | undefined;
  let nodes: string;
  let stores: string;
  let repos: string;
  const call = (method: string, params: unknown) => peer!.agent.request(method, params);
  const open = (node: string) => peer!.agent.request(acp.methods.agent.session.new, { cwd: path.join(nodes, node), mcpServers: [] });
  const worktrees = (farRepo: string) =>
    git(farRepo, 'worktree', 'list', '--porcelain')
      .split('\n')
      .filter((l) => l.startsWith('worktree '))
      .map((l) => l.slice('worktree '.length));

  beforeEach(async () => {
    nodes = path.join(w.dir, 'far', 'nodes');
    stores = path.join(w.dir, 'far', 'stores');
    repos = path.join(w.dir, 'far', 'repos');
    fs.rmSync(path.join(w.dir, 'far'), { recursive: true, force: true });
    fs.rmSync(path.join(w.dir, 'proj'), { recursive: true, force: true });
    fs.rmSync(path.join(w.dir, 'proj-child'), { recursive: true, force: true });
    peer = await startAcp(['--nodes', nodes, '--node-stores', stores, '--node-repos', repos, '--base-url', w.server.baseURL, '--model', 'test-model']);
    await peer.agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
  });
  afterEach(async () => {
    if (peer && peer.child.exitCode === null) await peer.close();
    peer = undefined;
  });

  it('the next node gets the released worktree (no checkout) and finds exactly its own commit, nothing of the last node', async () => {
    const l = localRepo(w.dir);
    // Node n1 at the first commit (what the second adds must appear), its agent's leftovers of every kind.
    const n1 = await prepareOverLink(call, { nodeId: 'n1', repo: l.repo, commit: l.first, worktree: l.worktree });
    await open('n1');
    const folder = fs.statSync(n1.cwd).ino;
    const a = path.join(n1.cwd, 'src', 'a.ts');
    const before = fs.statSync(a);
    fs.writeFileSync(a, 'export const a = 9;\n'); // the same size, its times put back
    fs.utimesSync(a, before.atime, before.mtime);
    fs.writeFileSync(path.join(n1.cwd, 'src', 'new.ts'), 'secret of n1\n');
    fs.mkdirSync(path.join(n1.cwd, 'build', 'out'), { recursive: true });
    fs.writeFileSync(path.join(n1.cwd, 'build', 'out', 'x.js'), 'ignored, of n1\n');
    fs.writeFileSync(path.join(n1.cwd, 'debug.log'), 'ignored, of n1\n');
    fs.rmSync(path.join(n1.cwd, 'src', 'deep', 'd.ts'));
    fs.chmodSync(path.join(n1.cwd, 'run.sh'), 0o644);
    const back = await collectOverLink(call, n1, l.repo, 'n1');
    assert.notEqual(back.commit, l.first);
    // Changed after its collect too (its last command's output), and git state left in its own git folder.
    fs.writeFileSync(path.join(n1.cwd, 'src', 'late.ts'), 'after collect\n');
    fs.writeFileSync(path.join(n1.cwd, 'src', 'a.ts'), 'export const a = 7;\n');
    const farRepo = path.join(repos, `${repoKey(l.repo)}.git`);
    const n1Git = path.join(farRepo, 'worktrees', 'n1');
    fs.mkdirSync(path.join(n1Git, 'rebase-merge'));
    fs.writeFileSync(path.join(n1Git, 'ORIG_HEAD'), `${back.commit}\n`);

    assert.equal(await releaseOverLink(call, n1, l.repo), true);
    // The answer comes before the close and the move (the child's result does not wait for them).
    await movedAway(n1.cwd);
    assert.equal(git(farRepo, 'for-each-ref', 'refs/arbor/base/n1'), '', 'its base ref is gone');

    const n2 = await prepareOverLink(call, { nodeId: 'n2', repo: l.repo, commit: l.second, worktree: l.worktree });
    assert.equal(fs.statSync(n2.cwd).ino, folder, 'the same folder, moved: no new checkout');
    assert.deepEqual(filesOf(n2.cwd), filesAt(l.repo, l.second), 'exactly the commit’s files: none of n1’s');
    const n2Git = git(n2.cwd, 'rev-parse', '--absolute-git-dir');
    assert.deepEqual(fs.readdirSync(n2Git).sort(), ['HEAD', 'commondir', 'gitdir', 'index'], 'no git state of n1');
    assert.equal(git(n2.cwd, 'rev-parse', 'HEAD'), l.second);
    assert.equal(git(n2.cwd, 'status', '--porcelain', '--ignored'), '', 'nothing untracked, ignored or changed');
    // Its changes come back as its own: the base is the second commit, and nothing of n1 rides along.
    await open('n2');
    fs.writeFileSync(path.join(n2.cwd, 'src', 'n2.ts'), 'of n2\n');
    const b2 = await collectOverLink(call, n2, l.repo, 'n2');
    assert.equal(git(l.repo, 'rev-parse', `${b2.commit}^`), l.second);
    assert.deepEqual(git(l.repo, 'diff', '--name-status', l.second, b2.commit).split('\n'), ['A\tsrc/n2.ts']);
    assert.deepEqual(worktrees(farRepo), [fs.realpathSync(farRepo), fs.realpathSync(n2.cwd)], 'no stray worktree');
  });

  it('a released node’s sessions end there: a prompt to one is refused, nothing of it runs on in the next node’s folder', async () => {
    const l = localRepo(w.dir);
    const n1 = await prepareOverLink(call, { nodeId: 'n1', repo: l.repo, commit: l.second, worktree: l.worktree });
    const { sessionId } = (await open('n1')) as { sessionId: string };
    assert.equal(await releaseOverLink(call, n1, l.repo), true);
    await assert.rejects(peer!.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'still there?' }] }));
    const n2 = await prepareOverLink(call, { nodeId: 'n2', repo: l.repo, commit: l.second, worktree: l.worktree });
    assert.equal(git(n2.cwd, 'status', '--porcelain', '--ignored'), '');
  });

  it('a worktree whose folders’ modes its agent changed is removed, not kept: the next node gets a new checkout', async () => {
    const l = localRepo(w.dir);
    const n1 = await prepareOverLink(call, { nodeId: 'n1', repo: l.repo, commit: l.second, worktree: l.worktree });
    await open('n1');
    // Held open: a removed folder's inode number is not handed to the new checkout while the test looks.
    const held = fs.openSync(n1.cwd, 'r');
    const folder = fs.fstatSync(held).ino;
    fs.chmodSync(path.join(n1.cwd, 'src', 'deep'), 0o555); // the next node could not write there
    assert.equal(await releaseOverLink(call, n1, l.repo), true);
    await movedAway(n1.cwd);
    const n2 = await prepareOverLink(call, { nodeId: 'n2', repo: l.repo, commit: l.second, worktree: l.worktree });
    assert.notEqual(fs.statSync(n2.cwd).ino, folder);
    fs.closeSync(held);
    assert.equal(fs.statSync(path.join(n2.cwd, 'src', 'deep')).mode & 0o200, 0o200);
    const farRepo = path.join(repos, `${repoKey(l.repo)}.git`);
    assert.deepEqual(worktrees(farRepo), [fs.realpathSync(farRepo), fs.realpathSync(n2.cwd)]);
  });

  it('a node whose .git its agent rewrote is refused (UNSAFE_NODE) and left for cleanup; a node never prepared is UNKNOWN_NODE', async () => {
    const l = localRepo(w.dir);
    const n1 = await prepareOverLink(call, { nodeId: 'n1', repo: l.repo, commit: l.second, worktree: l.worktree });
    const n2 = await prepareOverLink(call, { nodeId: 'n2', repo: l.repo, commit: l.second, worktree: l.worktree });
    // n1's agent points its .git at n2's git folder: releasing n1 must not hand n2's entry to the next node.
    fs.writeFileSync(path.join(n1.cwd, '.git'), fs.readFileSync(path.join(n2.cwd, '.git')));
    await assert.rejects(call(SYNC_METHODS.release, { repo: repoKey(l.repo), node: 'n1' }), (e) => dataCode(e) === 'UNSAFE_NODE');
    assert.equal(fs.existsSync(n1.cwd), true);
    assert.equal(fs.existsSync(path.join(repos, '.spare')), false, 'nothing was kept');
    await assert.rejects(call(SYNC_METHODS.release, { repo: repoKey(l.repo), node: 'nobody' }), (e) => dataCode(e) === 'UNKNOWN_NODE');
    await assert.rejects(call(SYNC_METHODS.release, { repo: repoKey(l.repo), node: '../n2' }), (e) => dataCode(e) === 'BAD_SYNC_NAME');
    assert.equal(fs.existsSync(n2.cwd), true);
  });

  it('attack: a repository planted in a tracked folder is not handed to the next node (a new checkout instead)', async () => {
    const l = localRepo(w.dir);
    const n1 = await prepareOverLink(call, { nodeId: 'n1', repo: l.repo, commit: l.second, worktree: l.worktree });
    await open('n1');
    const held = fs.openSync(n1.cwd, 'r'); // (its inode number not reused meanwhile)
    const folder = fs.fstatSync(held).ino;
    // `clean -ffdx` leaves an entry named .git in a tracked folder: its config would run in the next node's git.
    fs.mkdirSync(path.join(n1.cwd, 'src', '.git'));
    fs.writeFileSync(path.join(n1.cwd, 'src', '.git', 'config'), '[core]\n\tfsmonitor = touch /tmp/arbor-pwned\n');
    assert.equal(await releaseOverLink(call, n1, l.repo), true);
    await movedAway(n1.cwd);
    const n2 = await prepareOverLink(call, { nodeId: 'n2', repo: l.repo, commit: l.second, worktree: l.worktree });
    assert.notEqual(fs.statSync(n2.cwd).ino, folder, 'not the planted worktree: a new checkout');
    fs.closeSync(held);
    assert.equal(fs.existsSync(path.join(n2.cwd, 'src', '.git')), false, 'nothing planted');
    assert.equal(git(n2.cwd, 'status', '--porcelain', '--ignored'), '');
  });

  it('what is kept is removed when the far side closes: no worktree stays behind', async () => {
    const l = localRepo(w.dir);
    const ws = await Promise.all(['n1', 'n2', 'n3'].map((n) => prepareOverLink(call, { nodeId: n, repo: l.repo, commit: l.second, worktree: l.worktree })));
    for (const n of ws) assert.equal(await releaseOverLink(call, n, l.repo), true);
    for (const n of ws) await movedAway(n.cwd);
    const farRepo = path.join(repos, `${repoKey(l.repo)}.git`);
    const spares = path.join(repos, '.spare', repoKey(l.repo));
    assert.equal(fs.readdirSync(spares).length, 3, 'three kept');
    assert.equal(worktrees(farRepo).length, 4, 'three kept, beside the repository');
    assert.equal(await peer!.close(), 0);
    assert.deepEqual(worktrees(farRepo), [fs.realpathSync(farRepo)]);
    assert.deepEqual(fs.existsSync(path.join(repos, '.spare')) ? fs.readdirSync(path.join(repos, '.spare')) : [], []);
  });
});
