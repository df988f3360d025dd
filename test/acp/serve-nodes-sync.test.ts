// `arbor acp --nodes … --node-stores … --node-repos …` carries a placement's workspace (decision
// 0081): `_arbor/sync/have|chunk|prepare|collect|read`. Tested as the client uses it (the real
// `prepareOverLink` / `collectOverLink` against the real server over stdio) and as an attacker
// would try it: a client naming paths instead of names, a node whose agent swapped its folder
// for a symlink or rewrote its `.git` to reach another node or repository, transfers named to
// escape their folder. Every refusal carries its code and leaves the other nodes untouched.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as acp from '@agentclientprotocol/sdk/unstable';
import { repoKey } from '../../src/core/placement/layout';
import { collectOverLink, FarCommits, prepareOverLink, UseGitInstead } from '../../src/core/placement/link-sync';
import { SYNC_METHODS } from '../../src/core/placement/sync-wire';
import { PlacementError } from '../../src/core/placement/types';
import { type AcpPeer, assertJsonRpcOnly, startAcp } from '../support/acp-peer';
import { cliWorld } from '../support/cli';

const env = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' };
const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, env, encoding: 'utf8' }).trim();
const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));
const dataCode = (e: unknown): string | undefined => ((e as acp.RequestError).data as { code?: string } | undefined)?.code;

/** A repository with one commit, and a worktree of it detached at that commit (what a placed child's local worktree is). */
function localRepo(dir: string, name: string): { repo: string; worktree: string; commit: string } {
  const repo = path.join(dir, name);
  fs.mkdirSync(path.join(repo, 'src'), { recursive: true });
  fs.writeFileSync(path.join(repo, 'src', 'a.ts'), 'export const a = 1;\n');
  fs.writeFileSync(path.join(repo, 'run.sh'), '#!/bin/sh\necho hi\n', { mode: 0o755 });
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-qm', 'first');
  const worktree = path.join(dir, `${name}-child`);
  git(repo, 'worktree', 'add', '-q', '--detach', worktree);
  return { repo, worktree, commit: git(repo, 'rev-parse', 'HEAD') };
}

describe('acp: arbor acp --node-repos carries a placement’s workspace over the connection (_arbor/sync)', function () {
  this.timeout(120_000);
  const w = cliWorld('arbor-acp-sync-', { realDir: true });
  let peer: AcpPeer | undefined;
  let nodes: string;
  let stores: string;
  let repos: string;
  const calls: string[] = [];
  const call = (method: string, params: unknown) => {
    calls.push(method);
    return peer!.agent.request(method, params);
  };
  const open = async (node: string) => {
    // A session of the node: its store is made, as a placed child's first turn makes it.
    await peer!.agent.request(acp.methods.agent.session.new, { cwd: path.join(nodes, node), mcpServers: [] });
  };
  const refused = async (p: Promise<unknown>, code: string, what: string) =>
    assert.rejects(p, (e: acp.RequestError) => dataCode(e) === code || assert.fail(`${what}: expected ${code}, got ${dataCode(e)} (${e.message})`), what);

  beforeEach(async () => {
    calls.length = 0;
    nodes = path.join(w.dir, 'far', 'nodes');
    stores = path.join(w.dir, 'far', 'stores');
    repos = path.join(w.dir, 'far', 'repos');
    peer = await startAcp(['--nodes', nodes, '--node-stores', stores, '--node-repos', repos, '--base-url', w.server.baseURL, '--model', 'test-model']);
    await peer.agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
  });
  afterEach(async () => {
    if (peer && peer.child.exitCode === null) await peer.close();
    peer = undefined;
  });

  it('there and back: only what the far side lacks is sent, the node’s changes come back as one commit on its base, a repeated collect makes none', async () => {
    const l = localRepo(w.dir, 'proj');
    const ws = await prepareOverLink(call, { nodeId: 'n1', repo: l.repo, commit: l.commit, worktree: l.worktree });
    assert.equal(ws.cwd, path.join(fs.realpathSync(nodes), 'n1'));
    assert.equal(fs.readFileSync(path.join(ws.cwd, 'src', 'a.ts'), 'utf8'), 'export const a = 1;\n');
    assert.equal(fs.statSync(path.join(ws.cwd, 'run.sh')).mode & 0o111, 0o111, 'the executable bit travelled');
    assert.deepEqual(calls, [SYNC_METHODS.have, SYNC_METHODS.prepare], 'a small history rides on prepare itself');
    // A second node at the same commit: the far side has it, nothing is sent.
    calls.length = 0;
    await prepareOverLink(call, { nodeId: 'n2', repo: l.repo, commit: l.commit, worktree: l.worktree });
    assert.deepEqual(calls, [SYNC_METHODS.have, SYNC_METHODS.prepare]);

    await open('n1');
    fs.writeFileSync(path.join(ws.cwd, 'src', 'b.ts'), 'export const b = 2;\n');
    fs.rmSync(path.join(ws.cwd, 'run.sh'));
    const back = await collectOverLink(call, ws, l.repo, 'the node');
    assert.equal(git(l.repo, 'rev-parse', 'refs/arbor/placed/n1'), back.commit);
    assert.equal(git(l.repo, 'rev-parse', `${back.commit}^`), l.commit, 'one commit on the base');
    assert.deepEqual(git(l.repo, 'diff', '--name-status', l.commit, back.commit).split('\n').sort(), ['A\tsrc/b.ts', 'D\trun.sh']);
    // The far side wrote the tree and the commit itself: exactly the objects git's write-tree and commit-tree make, whole on both sides.
    const farRepo = path.join(repos, `${repoKey(l.repo)}.git`);
    const nodeGit = path.join(farRepo, 'worktrees', 'n1');
    assert.equal(git(ws.cwd, '--git-dir', nodeGit, '--work-tree', ws.cwd, 'write-tree'), git(l.repo, 'rev-parse', `${back.commit}^{tree}`));
    const body = git(l.repo, 'cat-file', 'commit', back.commit);
    assert.match(
      body,
      /^tree [0-9a-f]{40}\nparent [0-9a-f]{40}\nauthor Arbor <arbor@localhost> \d+ [+-]\d{4}\ncommitter Arbor <arbor@localhost> \d+ [+-]\d{4}\n\nthe node$/,
    );
    git(farRepo, 'fsck', '--no-dangling', '--strict');
    git(l.repo, 'fsck', '--no-dangling', '--strict');
    const again = await collectOverLink(call, ws, l.repo, 'the node');
    assert.equal(again.commit, back.commit, 'nothing changed since: the same commit, not a new one');
    // Nothing of a transfer is left waiting on the far side (a small bundle never made one: it rode on the answer).
    const transfers = path.join(repos, '.transfers');
    assert.deepEqual(fs.existsSync(transfers) ? fs.readdirSync(transfers) : [], []);
    // Unchanged: the base itself comes back, no bundle.
    await open('n2');
    calls.length = 0;
    const same = await collectOverLink(call, { nodeId: 'n2', base: l.commit, cwd: path.join(nodes, 'n2') }, l.repo, 'n2');
    assert.equal(same.commit, l.commit);
    assert.deepEqual(calls, [SYNC_METHODS.collect]);
    assertJsonRpcOnly(peer!);
  });

  it('a commit the far side was seen to hold is prepared without asking; one it lost is asked for again', async () => {
    const l = localRepo(w.dir, 'proj');
    const held = new FarCommits();
    await prepareOverLink(call, { nodeId: 'n1', repo: l.repo, commit: l.commit, worktree: l.worktree }, undefined, held);
    assert.deepEqual(calls, [SYNC_METHODS.have, SYNC_METHODS.prepare]);
    calls.length = 0;
    const n2 = await prepareOverLink(call, { nodeId: 'n2', repo: l.repo, commit: l.commit, worktree: l.worktree }, undefined, held);
    assert.deepEqual(calls, [SYNC_METHODS.prepare], 'held: no have, no bundle');
    assert.equal(fs.readFileSync(path.join(n2.cwd, 'src', 'a.ts'), 'utf8'), 'export const a = 1;\n');
    // Another repository with the same commit is not taken as held (each has a far repository of its own).
    const copy = path.join(w.dir, 'copy');
    execFileSync('git', ['clone', '-q', l.repo, copy], { env });
    calls.length = 0;
    await prepareOverLink(call, { nodeId: 'n3', repo: copy, commit: l.commit, worktree: copy }, undefined, held);
    assert.deepEqual(calls, [SYNC_METHODS.have, SYNC_METHODS.prepare]);
    // The far side lost it (its repository made again): the prepare fails there, and the whole way runs once more.
    fs.rmSync(path.join(repos, `${repoKey(l.repo)}.git`), { recursive: true, force: true });
    calls.length = 0;
    const n4 = await prepareOverLink(call, { nodeId: 'n4', repo: l.repo, commit: l.commit, worktree: l.worktree }, undefined, held);
    assert.deepEqual(calls, [SYNC_METHODS.prepare, SYNC_METHODS.have, SYNC_METHODS.prepare]);
    assert.equal(fs.readFileSync(path.join(n4.cwd, 'src', 'a.ts'), 'utf8'), 'export const a = 1;\n');
    assert.ok(held.has(`${repoKey(l.repo)} ${l.commit}`));
  });

  it('children prepared at once from the same commit send it once: the others wait for that send, then ask nothing', async () => {
    const l = localRepo(w.dir, 'fan');
    const held = new FarCommits();
    const ids = ['f1', 'f2', 'f3', 'f4', 'f5', 'f6', 'f7', 'f8'];
    const made = await Promise.all(
      ids.map((nodeId) => prepareOverLink(call, { nodeId, repo: l.repo, commit: l.commit, worktree: l.worktree }, undefined, held)),
    );
    // One have (and the one prepare that carried the bundle), then a plain prepare per sibling: no second bundle of the same commits.
    assert.equal(calls.filter((c) => c === SYNC_METHODS.have).length, 1, calls.join(' '));
    assert.equal(calls.filter((c) => c === SYNC_METHODS.prepare).length, ids.length);
    for (const ws of made) assert.equal(fs.readFileSync(path.join(ws.cwd, 'src', 'a.ts'), 'utf8'), 'export const a = 1;\n');
    assert.equal(new Set(made.map((m) => m.cwd)).size, ids.length, 'each child its own folder there');
    assert.equal(held.pending(`${repoKey(l.repo)} ${l.commit}`), undefined, 'nothing left under way');
  });

  it('a repository half made (a `git init` killed, or still running beside this ask) is made whole, never read as made', async () => {
    // `git init` writes HEAD before objects/: an ask that took HEAD for "made" read a half-made
    // repository ("not a git repository") while another ask was making it, and for good after a
    // far side died in the middle of one.
    const commit = '0'.repeat(40);
    const repo = `half-${'b'.repeat(12)}`;
    const dir = path.join(repos, `${repo}.git`);
    fs.mkdirSync(path.join(dir, 'refs', 'heads'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'HEAD'), 'ref: refs/heads/main\n');
    fs.writeFileSync(path.join(dir, 'config'), '[core]\n\trepositoryformatversion = 0\n\tbare = true\n');
    assert.deepEqual(await call(SYNC_METHODS.have, { repo, commits: [commit] }), { have: [] });
    assert.ok(fs.statSync(path.join(dir, 'objects', 'pack')).isDirectory(), 'the repository was made whole');
    // And asks spread over the few milliseconds `git init` takes, some arriving while it runs: every one is answered.
    for (let round = 0; round < 6; round++) {
      const fresh = `round${round}-${'a'.repeat(12)}`;
      const said = await Promise.allSettled(
        Array.from({ length: 16 }, (_, i) => delay(i).then(() => call(SYNC_METHODS.have, { repo: fresh, commits: [commit] }))),
      );
      const failed = said.flatMap((s) => (s.status === 'rejected' ? [String((s.reason as Error).message)] : []));
      assert.deepEqual(failed, [], `round ${round}`);
    }
  });

  it('a send that fails is not waited on for good: the siblings waiting for it try the whole way themselves, once between them', async () => {
    const l = localRepo(w.dir, 'fails');
    const held = new FarCommits();
    let failFirst = true;
    // The first prepare (the one carrying the bundle) is refused there; the link itself stays up.
    const flaky: typeof call = (method, params) => {
      if (method === SYNC_METHODS.prepare && failFirst) {
        failFirst = false;
        calls.push(method);
        return Promise.reject(Object.assign(new Error('refused'), { code: -32000, data: { code: 'SYNC_FAILED', message: 'the disk is full there' } }));
      }
      return call(method, params);
    };
    const tries = ['g1', 'g2', 'g3'].map((nodeId) =>
      prepareOverLink(flaky, { nodeId, repo: l.repo, commit: l.commit, worktree: l.worktree }, undefined, held).then(
        (ws) => ws,
        (err: Error) => err,
      ),
    );
    const out = await Promise.all(tries);
    assert.ok(out[0] instanceof PlacementError && /disk is full/.test(out[0].message), String(out[0]));
    for (const ws of out.slice(1)) assert.ok(!(ws instanceof Error), String(ws));
    // The failed send's have, then one more have between the two waiting siblings (one sends, the other waits again).
    assert.equal(calls.filter((c) => c === SYNC_METHODS.have).length, 2, calls.join(' '));
    assert.ok(held.has(`${repoKey(l.repo)} ${l.commit}`));
  });

  it('a bundle past one chunk goes in chunks both ways, and arrives whole', async () => {
    const l = localRepo(w.dir, 'big');
    const blob = Buffer.alloc(6 * 1024 * 1024);
    for (let i = 0; i < blob.length; i += 4) blob.writeUInt32LE((Math.random() * 2 ** 32) >>> 0, i); // incompressible
    fs.writeFileSync(path.join(l.worktree, 'there.bin'), blob);
    git(l.worktree, 'add', '-A');
    git(l.worktree, 'commit', '-qm', 'big');
    const commit = git(l.worktree, 'rev-parse', 'HEAD');
    const ws = await prepareOverLink(call, { nodeId: 'big', repo: l.repo, commit, worktree: l.worktree });
    assert.deepEqual(calls, [SYNC_METHODS.have, SYNC_METHODS.chunk, SYNC_METHODS.chunk, SYNC_METHODS.prepare]);
    assert.ok(fs.readFileSync(path.join(ws.cwd, 'there.bin')).equals(blob), 'the file arrived whole');
    await open('big');
    const back = Buffer.from(blob).reverse();
    fs.writeFileSync(path.join(ws.cwd, 'back.bin'), back);
    calls.length = 0;
    const r = await collectOverLink(call, ws, l.repo, 'big');
    assert.deepEqual(calls, [SYNC_METHODS.collect, SYNC_METHODS.read, SYNC_METHODS.read]);
    assert.ok(Buffer.from(execFileSync('git', ['cat-file', 'blob', `${r.commit}:back.bin`], { cwd: l.repo, maxBuffer: 64 << 20 })).equals(back));
    assert.deepEqual(fs.readdirSync(path.join(repos, '.transfers')), [], 'read to its end, the bundle is gone there');
  });

  it('names, never paths: a repository, node or transfer that names a folder is BAD_SYNC_NAME, and nothing is made outside the far side’s folders', async () => {
    const l = localRepo(w.dir, 'proj');
    const key = repoKey(l.repo);
    const outside = path.join(w.dir, 'escaped');
    for (const repo of ['../escaped', outside, 'a/b', '..', `${key}/../../escaped`, '']) {
      await refused(call(SYNC_METHODS.have, { repo, commits: [] }), 'BAD_SYNC_NAME', `have of repo ${JSON.stringify(repo)}`);
    }
    await call(SYNC_METHODS.have, { repo: key, commits: [] });
    for (const node of ['../escaped', outside, 'n1/../../escaped', '.', '..', 'a/b']) {
      await refused(call(SYNC_METHODS.prepare, { repo: key, node, commit: l.commit }), 'BAD_SYNC_NAME', `prepare of node ${JSON.stringify(node)}`);
      await refused(call(SYNC_METHODS.collect, { repo: key, node, base: l.commit, message: 'x' }), 'BAD_SYNC_NAME', `collect of node ${JSON.stringify(node)}`);
    }
    for (const transfer of ['../../escaped', outside, 'ABC', 'x']) {
      await refused(call(SYNC_METHODS.chunk, { transfer, offset: 0, data: 'AAAA' }), 'BAD_SYNC_NAME', `chunk of ${transfer}`);
      await refused(call(SYNC_METHODS.read, { transfer, offset: 0 }), 'BAD_SYNC_NAME', `read of ${transfer}`);
    }
    await refused(call(SYNC_METHODS.have, { repo: key, commits: ['HEAD; rm -rf /'] }), 'BAD_SYNC_NAME', 'a commit that is no commit id');
    await refused(call(SYNC_METHODS.prepare, { repo: key, node: 'n1', commit: '--upload-pack=touch /tmp/x' }), 'BAD_SYNC_NAME', 'an option as a commit');
    await refused(call(SYNC_METHODS.read, { transfer: 'abcdef012345', offset: 0 }), 'SYNC_FAILED', 'a transfer nobody made');
    await call(SYNC_METHODS.chunk, { transfer: 'abcdef012345', offset: 0, data: Buffer.from('part').toString('base64') });
    await refused(call(SYNC_METHODS.chunk, { transfer: 'abcdef012345', offset: 0, data: 'AAAA' }), 'SYNC_FAILED', 'a chunk out of order');
    assert.equal(fs.existsSync(outside), false, 'nothing was made outside');
    assert.deepEqual(fs.readdirSync(repos).sort(), ['.transfers', `${key}.git`]);
  });

  it('a node cannot reach past itself: its folder swapped for a symlink, its .git rewritten to another node or repository, another repository named, no store — all refused, the others untouched', async () => {
    const l = localRepo(w.dir, 'proj');
    const other = localRepo(w.dir, 'other');
    const a = await prepareOverLink(call, { nodeId: 'a', repo: l.repo, commit: l.commit, worktree: l.worktree });
    const b = await prepareOverLink(call, { nodeId: 'b', repo: l.repo, commit: l.commit, worktree: l.worktree });
    await prepareOverLink(call, { nodeId: 'c', repo: other.repo, commit: other.commit, worktree: other.worktree });
    for (const n of ['a', 'b', 'c']) await open(n);
    fs.writeFileSync(path.join(b.cwd, 'b-work.txt'), "b's own work\n");
    const key = repoKey(l.repo);
    const farRepo = path.join(repos, `${key}.git`);
    const refsOfB = () => git(farRepo, 'for-each-ref', 'refs/arbor/placed/b');
    const collectA = () => call(SYNC_METHODS.collect, { repo: key, node: 'a', base: l.commit, message: 'a' });

    // Another node's repository named for this node: a's .git is not that repository's.
    await refused(call(SYNC_METHODS.collect, { repo: repoKey(other.repo), node: 'a', base: l.commit, message: 'a' }), 'UNSAFE_NODE', 'another repository');
    // .git rewritten to b's git folder: collecting "a" would commit b's work.
    const dotGit = path.join(a.cwd, '.git');
    const own = fs.readFileSync(dotGit, 'utf8');
    fs.writeFileSync(dotGit, `gitdir: ${path.join(fs.realpathSync(farRepo), 'worktrees', 'b')}\n`);
    await refused(collectA(), 'UNSAFE_NODE', ".git pointing at b's git folder");
    // .git rewritten to c's repository.
    fs.writeFileSync(dotGit, `gitdir: ${path.join(fs.realpathSync(path.join(repos, `${repoKey(other.repo)}.git`)), 'worktrees', 'c')}\n`);
    await refused(collectA(), 'UNSAFE_NODE', '.git pointing into another repository');
    // .git a repository of the agent's own making.
    fs.rmSync(dotGit);
    git(a.cwd, 'init', '-q');
    await refused(collectA(), 'UNSAFE_NODE', '.git a folder');
    fs.rmSync(dotGit, { recursive: true });
    fs.writeFileSync(dotGit, own);
    // The node's folder swapped for a symlink to b's.
    const aside = path.join(w.dir, 'a-aside');
    fs.renameSync(a.cwd, aside);
    fs.symlinkSync(b.cwd, a.cwd);
    await refused(collectA(), 'UNSAFE_NODE', "a symlink to b's folder");
    fs.rmSync(a.cwd);
    fs.renameSync(aside, a.cwd);
    assert.equal(refsOfB(), '', "nothing of b's was committed through a");
    assert.ok(fs.existsSync(path.join(b.cwd, 'b-work.txt')), "b's work is where it was");
    // Put right, a collects as itself.
    const back = await collectOverLink(call, a, l.repo, 'a');
    assert.equal(back.commit, l.commit, 'a changed nothing');
    // A node with no store (no session of it ever ran here) is not collected.
    await prepareOverLink(call, { nodeId: 'ghost', repo: l.repo, commit: l.commit, worktree: l.worktree });
    await refused(call(SYNC_METHODS.collect, { repo: key, node: 'ghost', base: l.commit, message: 'g' }), 'UNKNOWN_NODE', 'a node with no store');
  });

  it('a far side without --node-repos has no sync methods: the client hears UseGitInstead (push/fetch take over)', async () => {
    await peer!.close();
    peer = await startAcp(['--nodes', nodes, '--node-stores', stores, '--base-url', w.server.baseURL, '--model', 'test-model']);
    await peer.agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
    const l = localRepo(w.dir, 'proj');
    await assert.rejects(prepareOverLink(call, { nodeId: 'n1', repo: l.repo, commit: l.commit, worktree: l.worktree }), UseGitInstead);
    assert.equal(fs.existsSync(repos), false);
  });
});
