import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { workspaceCommit } from '../../../src/core/placement/base';
import { SshTransport } from '../../../src/core/placement/ssh';
import { PlacementError, type PlacementSettings } from '../../../src/core/placement/types';
import { RemoteProcess } from '../../../src/core/remote/process';
import { DEFAULT_BWRAP } from '../../../src/core/tools/sandbox/detect';
import { arborBin } from '../../support/cli-bundle';
import { type Sshd, sshPlacement, startSshd } from '../../support/sshd';
import { acpInitialize, commandLines, environOf, filesContaining, filesUnder, gitIn, makeRepo } from './sync-fixture';

// The ssh transport against a REAL sshd on 127.0.0.1 (test/support/sshd.ts: throwaway host and
// user keys), with this repository's own `bin/arbor.js` as the remote arbor. Each connection is a
// real login on this machine, so the login shell's start-up files run each time (seconds here).

const VERSION = (JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', '..', '..', 'package.json'), 'utf8')) as { version: string }).version;

describe('placement: the ssh transport against a real sshd', function () {
  this.timeout(120_000);
  let sshd: Sshd;
  let dir: string;
  let arbor: string;

  before(async () => {
    arbor = arborBin();
    sshd = await startSshd();
  });
  after(async () => {
    await sshd?.stop();
  });
  beforeEach(() => {
    dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-placement-')));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const settings = (over: Partial<PlacementSettings> = {}): PlacementSettings =>
    sshPlacement(sshd, { name: 'box', remoteDir: path.join(dir, 'remote'), arbor, ...over });

  const refusal = async (p: Promise<unknown>): Promise<PlacementError> => {
    const err = await p.then(
      () => assert.fail('expected a PlacementError'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof PlacementError, `not a PlacementError: ${String(err)}`);
    return err;
  };

  describe('check()', () => {
    it('reaches the host, finds arbor at this version and measures the round trip', async () => {
      const info = await new SshTransport(settings(), { version: VERSION }).check();
      assert.equal(info.kind, 'ssh');
      assert.equal(info.where, `${sshd.user}@127.0.0.1:${sshd.port}`);
      assert.ok(typeof info.rttMs === 'number' && info.rttMs > 0 && info.rttMs < 5000, `rtt ${info.rttMs}`);
    });

    it('refuses another version, naming both', async () => {
      const err = await refusal(new SshTransport(settings(), { version: '9.9.9' }).check());
      assert.equal(err.code, 'VERSION_MISMATCH');
      assert.match(err.message, new RegExp(`arbor ${VERSION.replace(/\./g, '\\.')}`));
      assert.match(err.message, /9\.9\.9/);
      assert.match(err.message, /install the pinned version/);
    });

    it('says how to install arbor when the host has none', async () => {
      const err = await refusal(new SshTransport(settings({ arbor: '/nonexistent/arbor' }), { version: VERSION }).check());
      assert.equal(err.code, 'NO_ARBOR');
      assert.match(err.message, /\/nonexistent\/arbor/);
      assert.match(err.message, new RegExp(`npm install -g arbor@${VERSION.replace(/\./g, '\\.')}`));
    });

    it('is UNREACHABLE with ssh’s own line when nothing listens on the port', async () => {
      const closed = await new Promise<number>((resolve) => {
        const srv = net.createServer().listen(0, '127.0.0.1', () => {
          const port = (srv.address() as net.AddressInfo).port;
          srv.close(() => resolve(port));
        });
      });
      const err = await refusal(new SshTransport(settings({ port: closed }), { version: VERSION }).check());
      assert.equal(err.code, 'UNREACHABLE');
      assert.match(err.message, /Connection refused/);
      assert.match(err.message, /logs in without a prompt/);
    });

    it('is UNREACHABLE, never a prompt, when the host key is not known', async () => {
      const unknown = ['UserKnownHostsFile=/dev/null', 'GlobalKnownHostsFile=/dev/null', 'IdentitiesOnly=yes', 'IdentityAgent=none'];
      const err = await refusal(new SshTransport(settings({ sshOptions: unknown }), { version: VERSION }).check());
      assert.equal(err.code, 'UNREACHABLE');
      assert.match(err.message, /Host key verification failed/);
      assert.match(err.message, /the host key in known_hosts/);
    });

    it('is UNREACHABLE with ssh’s own line when the key is refused (and never prompts)', async () => {
      const t0 = Date.now();
      const err = await refusal(new SshTransport(settings({ identityFile: sshd.strangerKey }), { version: VERSION }).check());
      assert.equal(err.code, 'UNREACHABLE');
      assert.match(err.message, /Permission denied \(publickey\)/);
      assert.ok(Date.now() - t0 < 30_000, 'a refused key answers at once (BatchMode: no prompt waits)');
    });
  });

  describe('prepare() and collect()', () => {
    it('carries the parent’s state there and exactly the node’s changes back, as one commit on base', async () => {
      const ws = makeRepo(dir);
      const { repo, commit } = await workspaceCommit(ws, [path.join(ws, '.arbor', 'store')], 'the node', DEFAULT_BWRAP);
      const t = new SshTransport(settings(), { version: VERSION });
      const placed = await t.prepare({ nodeId: 's-round.1', repo, commit });
      assert.equal(placed.base, commit);
      assert.ok(path.isAbsolute(placed.cwd));
      // There: the committed files, the uncommitted change and the untracked file; not the ignored file, not the store.
      assert.deepEqual(filesUnder(placed.cwd), ['.gitignore', 'a.txt', 'gone.txt', 'keep.txt', 'new.txt']);
      assert.equal(fs.readFileSync(path.join(placed.cwd, 'a.txt'), 'utf8'), 'one, changed here\n');
      // The user's checkout is as it was.
      assert.deepEqual(gitIn(ws, 'status', '--porcelain').split('\n').filter(Boolean).sort(), [' M a.txt', '?? .arbor/', '?? new.txt']);

      // The node works there: a change, a new file, a deletion, a binary file, an ignored file.
      const binary = Buffer.from([0, 1, 2, 255, 254, 0, 10, 13, 0]);
      fs.writeFileSync(path.join(placed.cwd, 'keep.txt'), 'keep, changed there\n');
      fs.writeFileSync(path.join(placed.cwd, 'made.txt'), 'new there\n');
      fs.rmSync(path.join(placed.cwd, 'gone.txt'));
      fs.writeFileSync(path.join(placed.cwd, 'blob.bin'), binary);
      fs.writeFileSync(path.join(placed.cwd, 'there.log'), 'ignored there\n');

      const { commit: back } = await t.collect(placed, repo);
      assert.equal(gitIn(repo, 'rev-parse', 'refs/arbor/placed/s-round.1').trim(), back);
      assert.equal(gitIn(repo, 'rev-parse', `${back}^`).trim(), commit, 'one commit on top of base');
      assert.deepEqual(gitIn(repo, 'diff', '--name-status', commit, back).trim().split('\n').sort(), [
        'A\tblob.bin',
        'A\tmade.txt',
        'D\tgone.txt',
        'M\tkeep.txt',
      ]);
      assert.deepEqual(execFileSync('git', ['cat-file', 'blob', `${back}:blob.bin`], { cwd: repo }), binary, 'the binary file byte for byte');

      // Nothing more changed: the same commit, no new one.
      assert.equal((await t.collect(placed, repo)).commit, back);

      await t.cleanup(placed);
      assert.equal(fs.existsSync(placed.cwd), false, 'the node’s worktree is gone there');
      assert.equal(gitIn(repo, 'rev-parse', 'refs/arbor/placed/s-round.1').trim(), back, 'the result stays at home');
    });

    it('the fallback collect and cleanup run no git through a .git the node’s agent rewrote (a repository whose config runs a command)', async () => {
      const ws = makeRepo(dir);
      const { repo, commit } = await workspaceCommit(ws, [path.join(ws, '.arbor', 'store')], 'the node', DEFAULT_BWRAP);
      const t = new SshTransport(settings(), { version: VERSION });
      const placed = await t.prepare({ nodeId: 's-evil.1', repo, commit });
      // The agent makes a repository of its own whose config runs a command when git reads the worktree, and points .git at it.
      const marker = path.join(dir, 'pwned');
      const evil = path.join(placed.cwd, '.evil');
      execFileSync('git', ['init', '-q', evil]);
      execFileSync('git', ['-C', evil, 'config', 'core.fsmonitor', `touch ${marker}; false`]);
      fs.writeFileSync(path.join(placed.cwd, '.git'), `gitdir: ${path.join(evil, '.git')}\n`);
      const err = await refusal(t.collect(placed, repo));
      assert.equal(err.code, 'SYNC_FAILED');
      assert.match(err.message, /arbor-unsafe: the node folder .* has a \.git pointing outside its repository/);
      // Pointed at another node's git folder of the same repository: refused too.
      const other = await t.prepare({ nodeId: 's-evil.2', repo, commit });
      const otherGit = fs.readFileSync(path.join(other.cwd, '.git'), 'utf8');
      fs.writeFileSync(path.join(placed.cwd, '.git'), otherGit);
      assert.match((await refusal(t.collect(placed, repo))).message, /pointing at another worktree/);
      assert.equal(fs.existsSync(marker), false, 'the command in the rewritten .git never ran');
      // Cleanup reads .git as text and only touches a repository of the placement's own.
      fs.writeFileSync(path.join(placed.cwd, '.git'), `gitdir: ${path.join(evil, '.git')}\n`);
      await t.cleanup(placed);
      assert.equal(fs.existsSync(placed.cwd), false);
      assert.equal(fs.existsSync(marker), false, 'nor at cleanup');
      // Put right, a node collects as before.
      fs.writeFileSync(path.join(other.cwd, 'x.txt'), 'x\n');
      assert.notEqual((await t.collect(other, repo)).commit, commit);
    });

    it('refuses a node id that could name another folder', async () => {
      const t = new SshTransport(settings(), { version: VERSION });
      const err = await refusal(t.prepare({ nodeId: '../escape', repo: dir, commit: 'HEAD' }));
      assert.equal(err.code, 'BAD_PLACEMENT');
    });
  });

  // process(): one node's arbor acp; connection(): the placement's kept one for all its nodes (decision 0077). The same key rules for both.
  for (const how of ['process', 'connection'] as const)
    describe(`${how}(): arbor acp over the link, and the API key`, () => {
      const KEY = `sk-arbor-attack-${Math.random().toString(36).slice(2)}`;
      // A local base URL: the remote arbor needs no key of its own to start.
      const acpSettings = (passApiKey: boolean) => settings({ baseUrl: 'http://127.0.0.1:9/v1', model: 'm', passApiKey });

      async function placedAcp(passApiKey: boolean) {
        const ws = makeRepo(dir);
        const { repo, commit } = await workspaceCommit(ws, [path.join(ws, '.arbor', 'store')], 'acp', DEFAULT_BWRAP);
        const t = new SshTransport(acpSettings(passApiKey), { version: VERSION, apiKey: () => KEY });
        const placed = await t.prepare({ nodeId: `s-${how}-${passApiKey}`, repo, commit });
        const pp = how === 'process' ? t.process(placed) : t.connection();
        const proc = new RemoteProcess({ command: pp.command, args: pp.args, cwd: dir, env: pp.env, stdin: 'pipe' });
        if (pp.preamble !== undefined) proc.child.stdin!.write(pp.preamble);
        return { t, placed, pp, proc };
      }

      /** Where the key shows: command lines of every process, the ssh client's environment, files there. */
      function leaks(pp: { args: string[]; env: Record<string, string> }, proc: RemoteProcess): string[] {
        const found: string[] = [];
        for (const p of commandLines()) if (p.args.includes(KEY)) found.push(`command line of ${p.pid}: ${p.args.slice(0, 80)}`);
        if (pp.args.join(' ').includes(KEY)) found.push('the ssh arguments');
        if (Object.values(pp.env).some((v) => v.includes(KEY))) found.push('the ssh environment given');
        if (environOf(proc.pid!).includes(KEY)) found.push('the ssh process environment');
        for (const f of filesContaining(path.join(dir, 'remote'), KEY)) found.push(`file ${f}`);
        return found;
      }

      /** The remote `arbor acp` process of a node (its command line names the node's worktree), or the placement's kept one (the nodes folder). */
      const remoteArbor = (cwd: string) =>
        how === 'process'
          ? commandLines().find((p) => p.args.includes(' acp --workspace ') && p.args.includes(cwd) && !p.args.startsWith('ssh '))
          : commandLines().find((p) => p.args.includes(' acp --nodes ') && p.args.includes(path.dirname(cwd)) && !p.args.startsWith('ssh '));

      it('answers ACP initialize over the ssh link, and without passApiKey the key goes nowhere', async () => {
        const { placed, pp, proc } = await placedAcp(false);
        try {
          assert.equal(pp.preamble, undefined);
          const result = await acpInitialize(proc);
          assert.equal(result.protocolVersion, 1);
          assert.equal((result.agentInfo as { name: string; version: string }).version, VERSION);
          const remote = remoteArbor(placed.cwd);
          assert.ok(remote, 'the remote arbor acp runs');
          assert.deepEqual(leaks(pp, proc), []);
          assert.equal(environOf(remote.pid).includes(KEY), false, 'the remote arbor has no key of ours');
        } finally {
          proc.child.stdin!.end();
          await proc.stop();
        }
      });

      it('with passApiKey the remote arbor acp gets the key through stdin: on no command line, in no file, not in ssh’s environment', async () => {
        const { placed, pp, proc } = await placedAcp(true);
        try {
          assert.equal(pp.preamble, `${KEY}\n`);
          const result = await acpInitialize(proc);
          assert.equal(result.protocolVersion, 1);
          const remote = remoteArbor(placed.cwd);
          assert.ok(remote, 'the remote arbor acp runs');
          assert.ok(environOf(remote.pid).includes(`ARBOR_API_KEY=${KEY}`), 'the remote arbor acp has the key in its environment');
          assert.deepEqual(leaks(pp, proc), []);
        } finally {
          proc.child.stdin!.end();
          await proc.stop();
        }
      });
    });
});
