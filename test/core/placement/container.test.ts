import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { workspaceCommit } from '../../../src/core/placement/base';
import { ContainerTransport } from '../../../src/core/placement/container';
import { PlacementError, type PlacementSettings } from '../../../src/core/placement/types';
import { RemoteProcess } from '../../../src/core/remote/process';
import { DEFAULT_BWRAP } from '../../../src/core/tools/sandbox/detect';
import { arborImage, ENGINE, engineMissing, RUN_ARGS } from '../../support/container-image';
import { acpInitialize, commandLines, environOf, filesContaining, filesUnder, gitIn, makeRepo } from './sync-fixture';

// The container transport through the REAL engine: rootful podman with runc (decision 0071 says
// why runc and the rlimits here), an image built on this machine (test/support/container-image.ts)
// carrying this repository's own CLI bundle as `arbor`.

const VERSION = (JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', '..', '..', 'package.json'), 'utf8')) as { version: string }).version;

describe('placement: the container transport through podman', function () {
  this.timeout(180_000);
  let image: string;
  let dir: string;

  before(function () {
    this.timeout(600_000);
    const missing = engineMissing();
    if (missing) throw new Error(`the container placement needs a real engine: ${missing}`);
    image = arborImage();
  });
  beforeEach(() => {
    dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-placement-ct-')));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const settings = (over: Partial<PlacementSettings> = {}): PlacementSettings => ({
    name: 'pod',
    kind: 'container',
    engine: ENGINE,
    image,
    runArgs: RUN_ARGS,
    arbor: '/opt/arbor/bin/arbor',
    ...over,
  });
  const transport = (over: Partial<PlacementSettings> = {}, version = VERSION, apiKey?: string, env?: NodeJS.ProcessEnv) =>
    new ContainerTransport(settings(over), {
      version,
      workDir: path.join(dir, 'placed'),
      ...(apiKey ? { apiKey: () => apiKey } : {}),
      ...(env ? { env } : {}),
    });

  const refusal = async (p: Promise<unknown>): Promise<PlacementError> => {
    const err = await p.then(
      () => assert.fail('expected a PlacementError'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof PlacementError, `not a PlacementError: ${String(err)}`);
    return err;
  };

  it('check(): arbor at this version in the image, with the round trip through the container’s stdin', async () => {
    const info = await transport().check();
    assert.deepEqual({ kind: info.kind, where: info.where }, { kind: 'container', where: image });
    assert.ok(typeof info.rttMs === 'number' && info.rttMs >= 0 && info.rttMs < 5000, `rtt ${info.rttMs}`);
  });

  it('check(): VERSION_MISMATCH, NO_ARBOR, an image that is not there, an engine that is not there', async () => {
    const mismatch = await refusal(transport({}, '9.9.9').check());
    assert.equal(mismatch.code, 'VERSION_MISMATCH');
    assert.match(mismatch.message, /9\.9\.9/);
    const none = await refusal(transport({ arbor: '/no/arbor' }).check());
    assert.equal(none.code, 'NO_ARBOR');
    const noImage = await refusal(transport({ image: 'localhost/arbor-no-such-image:0' }).check());
    assert.equal(noImage.code, 'UNREACHABLE');
    assert.match(noImage.message, /localhost\/arbor-no-such-image:0/);
    const noEngine = await refusal(transport({ engine: '/nonexistent/podman' }).check());
    assert.equal(noEngine.code, 'NO_ENGINE');
    assert.match(noEngine.message, /install podman/);
  });

  it('prepare → changes made inside the container → collect: exactly those changes as one commit on base', async () => {
    const ws = makeRepo(dir);
    const { repo, commit } = await workspaceCommit(ws, [path.join(ws, '.arbor', 'store')], 'ct', DEFAULT_BWRAP);
    const t = transport();
    const placed = await t.prepare({ nodeId: 's-ct.1', repo, commit });
    assert.deepEqual(filesUnder(placed.cwd), ['.gitignore', 'a.txt', 'gone.txt', 'keep.txt', 'new.txt']);
    // The node's work, done by a process inside the container on the mounted copy.
    const work = [
      "const fs = require('fs');",
      "fs.writeFileSync('keep.txt', 'keep, changed in the container\\n');",
      "fs.writeFileSync('made.txt', 'new in the container\\n');",
      "fs.rmSync('gone.txt');",
      'fs.writeFileSync("blob.bin", Buffer.from([0, 1, 2, 255, 254, 0, 10]));',
      "fs.writeFileSync('there.log', 'ignored');",
    ].join(' ');
    execFileSync(ENGINE, ['run', '--rm', ...RUN_ARGS, '-v', `${placed.cwd}:${placed.cwd}`, '-w', placed.cwd, image, '/usr/bin/node', '-e', work], {
      stdio: 'pipe',
    });
    const { commit: back } = await t.collect(placed, repo);
    assert.equal(gitIn(repo, 'rev-parse', `${back}^`).trim(), commit);
    assert.equal(gitIn(repo, 'rev-parse', 'refs/arbor/placed/s-ct.1').trim(), back);
    assert.deepEqual(gitIn(repo, 'diff', '--name-status', commit, back).trim().split('\n').sort(), [
      'A\tblob.bin',
      'A\tmade.txt',
      'D\tgone.txt',
      'M\tkeep.txt',
    ]);
    assert.deepEqual(execFileSync('git', ['cat-file', 'blob', `${back}:blob.bin`], { cwd: repo }), Buffer.from([0, 1, 2, 255, 254, 0, 10]));
    assert.equal((await t.collect(placed, repo)).commit, back, 'a repeated collect makes no new commit');
    await t.cleanup(placed);
    assert.equal(fs.existsSync(placed.cwd), false);
    assert.equal(gitIn(repo, 'worktree', 'list').includes(placed.cwd), false, 'git forgot the worktree too');
  });

  it('process(): arbor acp in the container answers initialize; with passApiKey it has the key, which is on no command line and in no file; the host proxy (credentials in its URL) stays outside', async () => {
    const KEY = `sk-arbor-ct-attack-${Math.random().toString(36).slice(2)}`;
    const PROXY_SECRET = `proxy-pw-${Math.random().toString(36).slice(2)}`;
    const hostEnv = { ...process.env, HTTP_PROXY: `http://u:${PROXY_SECRET}@127.0.0.1:9`, https_proxy: `http://u:${PROXY_SECRET}@127.0.0.1:9`, NO_PROXY: '*' };
    const ws = makeRepo(dir);
    const { repo, commit } = await workspaceCommit(ws, [path.join(ws, '.arbor', 'store')], 'ct-acp', DEFAULT_BWRAP);
    const t = transport({ baseUrl: 'http://127.0.0.1:9/v1', model: 'm', passApiKey: true }, VERSION, KEY, hostEnv);
    const placed = await t.prepare({ nodeId: 's-ct-acp', repo, commit });
    const pp = t.process(placed);
    assert.equal(pp.preamble, `${KEY}\n`);
    const proc = new RemoteProcess({ command: pp.command, args: pp.args, cwd: dir, env: pp.env, stdin: 'pipe' });
    proc.child.stdin!.write(pp.preamble!);
    try {
      const result = await acpInitialize(proc, 120_000);
      assert.equal((result.agentInfo as { version: string }).version, VERSION);
      const inner = commandLines().find((p) => p.args.includes(' acp --workspace ') && p.args.includes(placed.cwd) && !p.args.startsWith(ENGINE));
      assert.ok(inner, 'the arbor acp inside the container runs');
      assert.ok(environOf(inner.pid).includes(`ARBOR_API_KEY=${KEY}`), 'it has the key');
      assert.ok(environOf(proc.pid!).includes(PROXY_SECRET), 'the engine has the proxy (a pull may need it)');
      assert.equal(environOf(inner.pid).includes(PROXY_SECRET), false, 'the container does not');
      assert.deepEqual(
        commandLines().filter((p) => p.args.includes(KEY)),
        [],
        'no command line holds the key',
      );
      assert.equal(pp.args.join(' ').includes(KEY) || Object.values(pp.env).some((v) => v.includes(KEY)), false);
      assert.equal(environOf(proc.pid!).includes(KEY), false, 'not in the engine’s environment');
      assert.deepEqual(filesContaining(path.join(dir, 'placed'), KEY), []);
    } finally {
      proc.child.stdin!.end();
      await proc.stop();
    }
  });
});
