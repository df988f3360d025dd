import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SshTransport } from '../../../src/core/placement/ssh';

// The ssh transport's own git (push in prepare, fetch and rev-parse in collect) runs unconfined in
// the node's repository, `path.dirname` of its common git folder (`placed-provider.ts`). With a
// git folder kept inside the workspace (`git init --separate-git-dir .gd/main`) that is `.gd`,
// where a confined command can plant a bare repository's files (0123's s58 amendment): git then
// took `.gd` for the repository and read its planted config (`url.*.insteadOf` to an `ext::`
// command with `protocol.allow=always`), running that command on the host. Arbor's other git
// runs carry `safe.bareRepository=explicit` (decisions 0110, 0124); these did not (an allow-listed
// environment, `transportEnv`, with no GIT_CONFIG_*). No sshd needed: the command runs before ssh.

describe('placement: the ssh transport takes no bare repository it finds (decision 0124)', function () {
  this.timeout(60_000);
  let dir: string;
  beforeEach(() => {
    dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-ssh-bare-')));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('attack: a bare repository planted beside the git folder does not run its config on push', async () => {
    const ws = path.join(dir, 'ws');
    const git = (...args: string[]) => execFileSync('git', args, { cwd: ws, encoding: 'utf8' }).trim();
    fs.mkdirSync(path.join(ws, '.gd'), { recursive: true });
    git('init', '-q', '--separate-git-dir', path.join(ws, '.gd', 'main'), ws);
    fs.writeFileSync(path.join(ws, 'a.txt'), 'a\n');
    git('add', 'a.txt');
    git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'a');
    const commit = git('rev-parse', 'HEAD');
    const repo = path.dirname(git('rev-parse', '--path-format=absolute', '--git-common-dir'));
    assert.equal(repo, path.join(ws, '.gd'));
    // What a confined command can write there.
    const mark = path.join(dir, 'RAN');
    fs.mkdirSync(path.join(repo, 'objects'));
    fs.mkdirSync(path.join(repo, 'refs'));
    fs.writeFileSync(path.join(repo, 'HEAD'), 'ref: refs/heads/main\n');
    fs.writeFileSync(
      path.join(repo, 'config'),
      `[core]\n\trepositoryformatversion = 0\n\tbare = true\n[protocol]\n\tallow = always\n[url "ext::sh -c touch% ${mark}% #"]\n\tinsteadOf = box:\n`,
    );
    const t = new SshTransport({ name: 'box', kind: 'ssh', host: 'box', remoteDir: '/nonexistent/arbor' }, { version: '0' });
    await t.prepare({ nodeId: 'n1', repo, commit }).catch(() => undefined);
    await t.collect({ nodeId: 'n1', cwd: '/nonexistent/arbor/nodes/n1' } as Parameters<SshTransport['collect']>[0], repo).catch(() => undefined);
    assert.equal(fs.existsSync(mark), false, "the planted config's command ran on the host");
  });
});
