// What a release leaves on the far side (decision 0114, amended s56): the home side forgets a
// released node's copy once it is answered, so nothing may stay there that only a hand removes. A
// release whose keep fails removes the folder right there; a far `arbor acp` killed in the middle of
// one leaves a record that another far process's close sweeps — never a folder a live node of
// another connection (another Arbor host on the same placement root) still uses. And the answer
// carries nothing: an older far side's `kept` is still understood. Real `arbor acp` processes over
// stdio, the real link-sync client, real git (a `git` in front of it on PATH holds a move back).
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

/** Polled every 50 ms for at most 15 s. */
async function until(what: string, ok: () => boolean): Promise<void> {
  for (let i = 0; i < 300 && !ok(); i++) await new Promise((r) => setTimeout(r, 50));
  assert.ok(ok(), `waited 15 s for ${what}`);
}

describe('acp: nothing of a released node stays on the far side (_arbor/sync/release)', function () {
  this.timeout(120_000);
  const w = cliWorld('arbor-acp-release-', { realDir: true });
  const peers: AcpPeer[] = [];
  /** Processes the held-back git wrote down (killed by pid after each test). */
  const held = () => path.join(w.dir, 'gate', 'pids');
  let far: { nodes: string; stores: string; repos: string };
  let repo: string;
  let worktree: string;
  let head: string;

  /** A far `arbor acp` on the shared placement root (one connection: one Arbor host's link). `hold`: its `git worktree move` waits for `gate/open`. */
  async function connect(hold = false): Promise<{ peer: AcpPeer; call: (m: string, p: unknown) => Promise<unknown> }> {
    const peer = await startAcp(
      ['--nodes', far.nodes, '--node-stores', far.stores, '--node-repos', far.repos, '--base-url', w.server.baseURL, '--model', 'test-model'],
      hold ? { env: { PATH: `${path.join(w.dir, 'gate')}:${process.env.PATH}` } } : {},
    );
    await peer.agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
    peers.push(peer);
    return { peer, call: (m, p) => peer.agent.request(m, p) };
  }
  const prepare = (call: (m: string, p: unknown) => Promise<unknown>, nodeId: string) => prepareOverLink(call, { nodeId, repo, commit: head, worktree });
  const open = (peer: AcpPeer, node: string) => peer.agent.request(acp.methods.agent.session.new, { cwd: path.join(far.nodes, node), mcpServers: [] });
  const farRepo = () => path.join(far.repos, `${repoKey(repo)}.git`);
  const worktrees = () =>
    git(farRepo(), 'worktree', 'list', '--porcelain')
      .split('\n')
      .filter((l) => l.startsWith('worktree '))
      .map((l) => l.slice('worktree '.length));
  const record = (node: string) => path.join(far.repos, '.released', node);

  beforeEach(() => {
    far = { nodes: path.join(w.dir, 'far', 'nodes'), stores: path.join(w.dir, 'far', 'stores'), repos: path.join(w.dir, 'far', 'repos') };
    repo = path.join(w.dir, 'proj');
    fs.mkdirSync(path.join(repo, 'src'), { recursive: true });
    fs.writeFileSync(path.join(repo, 'src', 'a.ts'), 'export const a = 1;\n');
    git(repo, 'init', '-q', '-b', 'main');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-qm', 'first');
    head = git(repo, 'rev-parse', 'HEAD');
    worktree = path.join(w.dir, 'proj-child');
    git(repo, 'worktree', 'add', '-q', '--detach', worktree);
    // A git that holds `worktree move` back until `gate/open` exists (writing its pid down first).
    fs.mkdirSync(path.join(w.dir, 'gate'));
    const real = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
    fs.writeFileSync(
      path.join(w.dir, 'gate', 'git'),
      `#!/bin/sh\ncase " $* " in *" worktree move "*) echo $$ >> '${held()}'; while [ ! -e '${path.join(w.dir, 'gate', 'open')}' ]; do sleep 0.05; done;; esac\nexec '${real}' "$@"\n`,
      { mode: 0o755 },
    );
  });
  afterEach(async () => {
    for (const pid of fs.existsSync(held()) ? fs.readFileSync(held(), 'utf8').split('\n').filter(Boolean).map(Number) : []) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // it went on and ended
      }
    }
    for (const p of peers.splice(0)) if (p.child.exitCode === null && p.child.signalCode === null) await p.close();
  });

  it('a release whose keep fails (a file where the spare folder goes) removes the node’s folder right there, without following a link out', async () => {
    const { peer, call } = await connect();
    const n1 = await prepare(call, 'n1');
    await open(peer, 'n1');
    // Something of the user's outside the far root, linked from the node's folder: removing the folder must not reach it.
    const outside = path.join(w.dir, 'outside');
    fs.mkdirSync(outside);
    fs.writeFileSync(path.join(outside, 'precious.txt'), 'not the node’s\n');
    fs.symlinkSync(outside, path.join(n1.cwd, 'src', 'out'));
    fs.mkdirSync(path.join(far.repos, '.spare'), { recursive: true });
    fs.writeFileSync(path.join(far.repos, '.spare', repoKey(repo)), 'in the way\n');

    assert.equal(await releaseOverLink(call, n1, repo), true);
    await until('the folder to be removed', () => !fs.existsSync(n1.cwd) && !fs.existsSync(record('n1')));
    assert.equal(fs.readFileSync(path.join(outside, 'precious.txt'), 'utf8'), 'not the node’s\n', 'nothing followed out of it');
    assert.deepEqual(fs.readdirSync(far.nodes), [], 'no node folder behind');
    assert.deepEqual(worktrees(), [fs.realpathSync(farRepo())], 'its worktree entry pruned');
    assert.equal(git(farRepo(), 'for-each-ref', 'refs/arbor/base/n1'), '', 'its base ref gone');
    // The next node is made anew, and the far side closes cleanly.
    const n2 = await prepare(call, 'n2');
    assert.equal(git(n2.cwd, 'status', '--porcelain', '--ignored'), '');
    assert.equal(await peer.close(), 0);
  });

  it('a far side killed during a release: another connection’s close sweeps the folder, never a live node’s of a third connection', async () => {
    // K is killed while its release waits in `git worktree move` (answered, folder not yet moved).
    const k = await connect(true);
    const nk = await prepare(k.call, 'nk');
    await open(k.peer, 'nk');
    assert.equal(await releaseOverLink(k.call, nk, repo), true);
    await until('K’s move to be under way', () => fs.existsSync(held()));
    k.peer.child.kill('SIGKILL');
    await k.peer.exited;
    for (const pid of fs.readFileSync(held(), 'utf8').split('\n').filter(Boolean).map(Number)) process.kill(pid, 'SIGKILL');
    fs.rmSync(held());
    assert.equal(fs.existsSync(nk.cwd), true, 'the orphan: released, its folder left');
    assert.equal(fs.existsSync(record('nk')), true);

    // B (another host's connection) has a live node with a session, and a release of another held under way.
    const b = await connect(true);
    const nb = await prepare(b.call, 'nb');
    await open(b.peer, 'nb');
    fs.writeFileSync(path.join(nb.cwd, 'src', 'b.ts'), 'of nb\n');
    const nb2 = await prepare(b.call, 'nb2');
    await open(b.peer, 'nb2');
    assert.equal(await releaseOverLink(b.call, nb2, repo), true);
    await until('B’s move to be under way', () => fs.existsSync(held()));

    // A connects, does nothing, and closes: its close sweeps.
    const a = await connect();
    assert.equal(await a.peer.close(), 0);
    assert.equal(fs.existsSync(nk.cwd), false, 'the orphan is swept');
    assert.equal(fs.existsSync(record('nk')), false, 'its record with it');
    assert.equal(git(farRepo(), 'for-each-ref', 'refs/arbor/base/nk'), '', 'its base ref gone');
    assert.equal(fs.readFileSync(path.join(nb.cwd, 'src', 'b.ts'), 'utf8'), 'of nb\n', 'B’s live node untouched');
    assert.equal(fs.existsSync(nb2.cwd), true, 'B’s release under way is B’s to finish');
    assert.equal(fs.existsSync(record('nb2')), true);
    assert.deepEqual(worktrees().sort(), [fs.realpathSync(farRepo()), fs.realpathSync(nb.cwd), fs.realpathSync(nb2.cwd)].sort(), 'only nk’s entry pruned');

    // B goes on: its held release finishes (kept as a spare), its live node's changes come back.
    fs.writeFileSync(path.join(w.dir, 'gate', 'open'), '');
    await until('nb2 to be kept', () => !fs.existsSync(nb2.cwd) && !fs.existsSync(record('nb2')));
    const back = await collectOverLink(b.call, nb, repo, 'nb');
    assert.deepEqual(git(repo, 'diff', '--name-only', head, back.commit).split('\n'), ['src/b.ts']);
    assert.equal(await b.peer.close(), 0);
    assert.deepEqual(fs.readdirSync(far.nodes), ['nb'], 'only the never-released node (the home side’s to clean up)');
    assert.deepEqual(fs.existsSync(path.join(far.repos, '.released')) ? fs.readdirSync(path.join(far.repos, '.released')) : [], []);
  });

  it('a prepare sweeps what a killed far side’s release left, too', async () => {
    const k = await connect(true);
    const nk = await prepare(k.call, 'nk');
    assert.equal(await releaseOverLink(k.call, nk, repo), true);
    await until('K’s move to be under way', () => fs.existsSync(held()));
    k.peer.child.kill('SIGKILL');
    await k.peer.exited;
    const a = await connect();
    const na = await prepare(a.call, 'na');
    assert.equal(fs.existsSync(nk.cwd), false, 'swept before the next node was made');
    assert.deepEqual(fs.readdirSync(far.nodes), ['na']);
    assert.equal(git(na.cwd, 'status', '--porcelain', '--ignored'), '');
  });

  it('the answer carries nothing; an older far side’s answer with `kept` still releases', async () => {
    const { peer, call } = await connect();
    const n1 = await prepare(call, 'n1');
    assert.deepEqual(await call(SYNC_METHODS.release, { repo: repoKey(repo), node: 'n1' }), {});
    await until('n1 to be kept', () => !fs.existsSync(n1.cwd));
    // An older far side answers `{ kept: true }`; a `false` would be read the same: the client reads neither.
    for (const [node, kept] of [
      ['n2', true],
      ['n3', false],
    ] as const) {
      const ws = await prepare(call, node);
      const older = async (m: string, p: unknown) => {
        const r = await call(m, p);
        return m === SYNC_METHODS.release ? { ...(r as object), kept } : r;
      };
      assert.equal(await releaseOverLink(older, ws, repo), true, `kept: ${kept}`);
      await until(`${node} to be let go of`, () => !fs.existsSync(ws.cwd));
    }
    assert.deepEqual(fs.readdirSync(far.nodes), []);
    assert.equal(await peer.close(), 0);
  });
});
