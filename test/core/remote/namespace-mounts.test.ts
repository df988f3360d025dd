import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { childConfinement, confinedRoots, namespaceMounts } from '../../../src/core/remote/namespace-mounts';
import { pidNamespace } from '../../../src/core/remote/pid-namespace';
import { RemoteProcess } from '../../../src/core/remote/process';

// A confined remote program's namespace (decision 0036, amended s60), on the real bubblewrap: the
// protected paths of its roots and the store are read-only to it, its own folders in the store
// and a worktree root inside the store are not, and the stand-ins go once the program has.
describe("remote: a confined program's namespace keeps protected names and the store read-only (real bubblewrap)", function () {
  this.timeout(30_000);
  let dir: string;
  let bwrap: string;
  before(async () => {
    const ns = await pidNamespace();
    if (!ns.available) throw new Error(`These tests need bubblewrap, and ${ns.reason}. Run "npm run setup:e2e" (it installs bubblewrap).`);
    bwrap = ns.bwrap;
  });
  beforeEach(() => (dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-nsmounts-')))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** Runs `script` in `cwd` in the namespace with the mounts of `confine`; what it printed, once its group is gone. */
  async function run(script: string, cwd: string, confine: Parameters<typeof namespaceMounts>[0]): Promise<string> {
    const mounts = await namespaceMounts(confine);
    const p = new RemoteProcess({ command: '/bin/sh', args: ['-c', script], cwd, env: { PATH: process.env.PATH ?? '' }, bwrap, mounts });
    let out = '';
    for await (const line of p.lines()) if ('text' in line) out += `${line.text}\n`;
    const exit = await p.exited;
    await p.reapGroup();
    assert.equal(exit.code, 0, `${out}${p.stderrTail}`);
    return out;
  }
  /** A shell line writing each path (its folders made first): `w<i>=0` where it was written, `w<i>=1` where it was refused. */
  const tries = (...paths: string[]) =>
    paths.map((p, i) => `if (mkdir -p "$(dirname '${p}')" && echo x > '${p}') 2>/dev/null; then echo w${i}=0; else echo w${i}=1; fi`).join('; ');

  // Run as root (this machine, CI, many containers), bubblewrap left every capability to the
  // program: `umount` lifted the read-only mounts and the write went through (decision 0036, amended s60).
  it('attack: a confined program run as root cannot lift the mounts (umount, a user namespace of its own), and a nested sandbox still starts', async () => {
    const ws = path.join(dir, 'ws');
    fs.mkdirSync(path.join(ws, '.vscode'), { recursive: true });
    const confine = childConfinement({ cwd: ws, roots: [ws], sandbox: 'workspace-write' }, undefined, {})!;
    const out = await run(
      [
        `umount -l '${ws}/.vscode' 2>/dev/null; umount -l '${ws}/.mcp.json' 2>/dev/null`,
        `unshare -Urm sh -c "umount -l '${ws}/.vscode'; echo x > '${ws}/.vscode/a.json'" 2>/dev/null`,
        tries('.vscode/tasks.json', '.mcp.json/x'),
        `grep CapEff /proc/self/status`,
        `${bwrap} --unshare-all --die-with-parent --dev-bind / / --proc /proc -- /bin/true && echo nested=0 || echo nested=1`,
      ].join('; '),
      ws,
      confine,
    );
    assert.match(out, /w0=1\nw1=1\n/, out);
    assert.equal(fs.existsSync(path.join(ws, '.vscode', 'tasks.json')), false, out);
    assert.equal(fs.existsSync(path.join(ws, '.vscode', 'a.json')), false, out);
    // No capability but CAP_SETFCAP (bit 31), which a nested sandbox needs to map root.
    const eff = BigInt(`0x${/CapEff:\s+([0-9a-f]+)/.exec(out)?.[1] ?? 'ffffffffff'}`);
    assert.equal(eff & ~(1n << 31n), 0n, out);
    assert.match(out, /nested=0/, `a nested sandbox could not start: ${out}`);
  });

  it("attack: the workspace's protected names, nested ones too, and the store refuse writes; the workspace, the program's temp folder and home in the store do not", async () => {
    const ws = path.join(dir, 'ws');
    const store = path.join(dir, 'store');
    const tmp = path.join(store, 'remote-tmp', 'abc');
    const home = path.join(store, 'codex-home');
    for (const d of [path.join(ws, '.vscode'), path.join(ws, 'sub', '.git'), tmp, home]) fs.mkdirSync(d, { recursive: true });
    const confine = childConfinement({ cwd: ws, roots: [ws], sandbox: 'workspace-write' }, store, { CODEX_HOME: home }, tmp)!;
    const out = await run(
      tries(
        '.arbor/settings.json',
        '.vscode/tasks.json',
        '.mcp.json',
        'sub/.git/config',
        `${store}/forged.jsonl`,
        'fine.txt',
        `${tmp}/t`,
        `${home}/state.json`,
      ),
      ws,
      confine,
    );
    assert.equal(out, ['w0=1', 'w1=1', 'w2=1', 'w3=1', 'w4=1', 'w5=0', 'w6=0', 'w7=0', ''].join('\n'));
    assert.equal(fs.existsSync(path.join(ws, '.arbor')), false, 'the .arbor stand-in is removed once the program is gone');
    assert.equal(fs.existsSync(path.join(ws, '.mcp.json')), false, 'the .mcp.json stand-in is removed once the program is gone');
    assert.equal(fs.existsSync(path.join(store, 'forged.jsonl')), false);
  });

  it("attack (the CLI's store in the workspace, .arbor/store): the store refuses writes; the program's temp folder in it does not", async () => {
    const ws = path.join(dir, 'ws');
    const store = path.join(ws, '.arbor', 'store');
    const tmp = path.join(store, 'remote-tmp', 'abc');
    fs.mkdirSync(tmp, { recursive: true });
    const confine = childConfinement({ cwd: ws, roots: [ws], sandbox: 'read-only' }, store, {}, tmp)!;
    const out = await run(tries('.arbor/settings.json', `${store}/forged.jsonl`, `${tmp}/t`, 'fine.txt'), ws, confine);
    assert.equal(out, ['w0=1', 'w1=1', 'w2=0', 'w3=0', ''].join('\n'));
  });

  it("a worktree child's root inside the store stays writable, its protected names and the rest of the store do not", async () => {
    const store = path.join(dir, 'store');
    const wt = path.join(store, 'worktrees', 'c1');
    fs.mkdirSync(wt, { recursive: true });
    fs.writeFileSync(path.join(wt, '.git'), 'gitdir: /nowhere\n');
    const confine = childConfinement({ cwd: wt, roots: [wt], sandbox: 'workspace-write' }, store, {})!;
    const out = await run(tries('fine.txt', '.git', '.vscode/tasks.json', `${store}/forged.jsonl`), wt, confine);
    assert.equal(out, ['w0=0', 'w1=1', 'w2=1', 'w3=1', ''].join('\n'));
  });

  it("attack: a home the program's environment names in the store that holds its root re-opens none of the root's protected names", async () => {
    const store = path.join(dir, 'store');
    const wt = path.join(store, 'worktrees', 'c1');
    fs.mkdirSync(path.join(wt, '.vscode'), { recursive: true });
    fs.writeFileSync(path.join(wt, '.git'), 'gitdir: /nowhere\n');
    const home = path.join(store, 'worktrees');
    const confine = childConfinement({ cwd: wt, roots: [wt], sandbox: 'workspace-write' }, store, { HOME: home, CODEX_HOME: store })!;
    const out = await run(tries('fine.txt', '.git', '.vscode/tasks.json', '.mcp.json', `${home}/x`, `${store}/forged.jsonl`), wt, confine);
    assert.equal(out, ['w0=0', 'w1=1', 'w2=1', 'w3=1', 'w4=1', 'w5=1', ''].join('\n'));
  });

  it("a program that cannot be spawned (a NUL in its prompt) leaves no stand-in held: the next program's are removed once it is gone", async () => {
    const ws = path.join(dir, 'ws');
    fs.mkdirSync(ws);
    const confine = childConfinement({ cwd: ws, roots: [ws], sandbox: 'workspace-write' }, undefined, {})!;
    const mounts = await namespaceMounts(confine);
    assert.throws(() => new RemoteProcess({ command: '/bin/sh', args: ['-c', 'true', 'a\0b'], cwd: ws, env: { PATH: process.env.PATH ?? '' }, bwrap, mounts }));
    assert.equal(await run('test -d .mcp.json && echo standin', ws, confine), 'standin\n');
    assert.equal(fs.existsSync(path.join(ws, '.mcp.json')), false, 'the .mcp.json stand-in is removed once the program is gone');
    assert.equal(fs.existsSync(path.join(ws, '.arbor')), false, 'the .arbor stand-in is removed once the program is gone');
  });

  it('a full-access child gets no mounts; the roots are the cwd where it lies outside them, each root once', () => {
    assert.equal(childConfinement({ cwd: dir, roots: [dir], sandbox: 'full-access' }, dir, {}), undefined);
    const a = path.join(dir, 'a');
    fs.mkdirSync(path.join(a, 'b'), { recursive: true });
    fs.mkdirSync(path.join(dir, 'c'));
    assert.deepEqual(confinedRoots(path.join(a, 'b'), [a]), [a]);
    assert.deepEqual(confinedRoots(path.join(dir, 'c'), [path.join(a, 'b'), a]), [a, path.join(dir, 'c')]);
  });
});
