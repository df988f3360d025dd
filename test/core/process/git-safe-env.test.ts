// Attack (session 53, decision 0110): the programs Arbor starts unconfined in the workspace run
// git there themselves — a hook's `git status`, Claude Code's at its start, an MCP server's. A
// confined command plants a bare repository's files in a workspace folder without a `.git` of its
// own (a monorepo's package opened alone); git takes the folder for the repository and runs its
// `core.fsmonitor` on the host. Their environment says `safe.bareRepository=explicit`.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runHook } from '../../../src/core/hooks/runner';
import { addBareExplicit, takeBackBareExplicit, withBareExplicit } from '../../../src/core/process/git-safe-env';
import { RemoteProcess } from '../../../src/core/remote/process';
import { harnessPerTest } from '../../support/harness';

const gitIn = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

/** What the confined command plants (`worktree/planted-repo.test.ts` shows the sandbox lets it): a repository in `dir` itself whose fsmonitor appends to `escaped`. */
function plant(dir: string, escaped: string): void {
  gitIn(dir, 'init', '-q', '--bare', '.');
  gitIn(dir, 'config', 'core.bare', 'false');
  gitIn(dir, 'config', 'core.worktree', '.');
  gitIn(dir, '-c', 'user.name=a', '-c', 'user.email=a@a', 'commit', '-q', '--allow-empty', '-m', 'x');
  gitIn(dir, 'config', 'core.fsmonitor', `echo ran >> ${escaped}; false`);
}

describe('the programs Arbor starts unconfined never run git on a bare repository planted in the workspace', () => {
  const w = harnessPerTest();
  let ws: string;
  let escaped: string;
  const ran = () => (fs.existsSync(escaped) ? fs.readFileSync(escaped, 'utf8') : '');
  beforeEach(() => {
    ws = fs.realpathSync(w.t.workspace);
    escaped = path.join(w.t.dir, 'escaped');
    plant(ws, escaped);
    // (The plant works: git left to itself runs it.)
    execFileSync('git', ['status'], { cwd: ws, stdio: 'ignore' });
    assert.match(ran(), /ran/, 'a plain git runs the planted fsmonitor');
    fs.rmSync(escaped);
  });

  it("attack: a hook running `git status` in the workspace (the user's own hook, outside the sandbox)", async () => {
    const r = await runHook(
      {
        event: 'Stop',
        matcher: '',
        command: 'git status; echo "exit $?"',
        timeoutMs: 30_000,
        source: 'user',
        file: path.join(os.homedir(), '.arbor', 'settings.json'),
      },
      {},
      { cwd: ws },
    );
    assert.equal(r.outcome, 'ok', JSON.stringify(r));
    assert.match(r.stderr, /cannot use bare repository/, 'git refused the planted repository');
    assert.equal(ran(), '', 'the host ran the planted fsmonitor');
  });

  it('attack: a remote agent that runs git in its folder as it starts (Claude Code, Codex)', async () => {
    const p = new RemoteProcess({
      command: 'sh',
      args: ['-c', 'git status >/dev/null 2>&1; echo done'],
      cwd: ws,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: os.homedir() },
    });
    const lines: string[] = [];
    for await (const l of p.lines()) if ('text' in l) lines.push(l.text);
    await p.exited;
    assert.deepEqual(lines, ['done']);
    assert.equal(ran(), '', 'the host ran the planted fsmonitor');
  });

  it('attack: an MCP server that runs git in its folder (the workspace) as it starts', async () => {
    w.t.h.mcp.addServers([
      { name: 'gitty', source: 'user', transport: { kind: 'stdio', command: 'sh', args: ['-c', 'git status >/dev/null 2>&1; exit 3'], env: {} } },
    ]);
    await w.t.h.mcp.whenSettled();
    assert.equal(w.t.h.mcp.states().find((s) => s.name === 'gitty')?.phase, 'failed');
    assert.equal(ran(), '', 'the host ran the planted fsmonitor');
  });

  it('adds the setting after the variables the environment gives, and leaves theirs as they were', () => {
    assert.deepEqual(withBareExplicit({ A: 'a' }), { A: 'a', GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'safe.bareRepository', GIT_CONFIG_VALUE_0: 'explicit' });
    const user = { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'core.pager', GIT_CONFIG_VALUE_0: 'less' };
    const env = withBareExplicit(user);
    assert.equal(env.GIT_CONFIG_COUNT, '2');
    assert.equal(env.GIT_CONFIG_KEY_0, 'core.pager');
    assert.equal(env.GIT_CONFIG_KEY_1, 'safe.bareRepository');
    assert.equal(execFileSync('git', ['config', 'core.pager'], { env: { ...process.env, ...env }, cwd: os.tmpdir(), encoding: 'utf8' }).trim(), 'less');
  });
});

// Decision 0124: the extension host's own `process.env` (which VS Code's git extension and every
// other extension spawn git with) gets the setting at activation and loses exactly that at
// deactivation. Here on plain objects that git is then run with, for real.
describe('safe.bareRepository=explicit added to an environment in place, and taken back', () => {
  let dir: string;
  let sub: string;
  let escaped: string;
  const ran = () => fs.existsSync(escaped);
  const base = () => ({ PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: os.homedir() });
  /** `git status` in the planted folder with exactly `env`; its stderr. */
  const statusIn = (env: Record<string, string | undefined>, ...pre: string[]) => {
    try {
      execFileSync('git', [...pre, 'status'], { cwd: sub, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
      return '';
    } catch (err) {
      return String((err as { stderr?: string }).stderr);
    }
  };
  beforeEach(() => {
    dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'bare-explicit-')));
    escaped = path.join(dir, 'escaped');
    // 0123's s58 leftover: a git folder planted below a root's top, its worktree the top.
    const top = path.join(dir, 'top');
    sub = path.join(top, 'sub');
    fs.mkdirSync(sub, { recursive: true });
    gitIn(sub, 'init', '-q', '--bare', '.');
    gitIn(sub, 'config', 'core.bare', 'false');
    gitIn(sub, 'config', 'core.worktree', '..');
    gitIn(sub, 'config', 'core.fsmonitor', `touch ${escaped}; false`);
    statusIn(base());
    assert.equal(ran(), true, 'a plain git in the planted folder runs its fsmonitor');
    fs.rmSync(escaped);
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('attack: git in the planted folder with the environment as the guard leaves it refuses the folder; taken back, it is as before', () => {
    const env: Record<string, string | undefined> = base();
    const before = { ...env };
    const mark = addBareExplicit(env);
    assert.match(statusIn(env), /cannot use bare repository/);
    assert.equal(ran(), false, 'the planted fsmonitor ran on the host');
    assert.equal(takeBackBareExplicit(env, mark), true);
    assert.deepEqual(env, before);
    assert.equal(Object.hasOwn(env, 'GIT_CONFIG_COUNT'), false, 'a name it made is deleted, not set to undefined');
  });

  it("keeps the user's GIT_CONFIG_* entries working and numbered, before and after", () => {
    const env: Record<string, string | undefined> = {
      ...base(),
      GIT_CONFIG_COUNT: '2',
      GIT_CONFIG_KEY_0: 'core.pager',
      GIT_CONFIG_VALUE_0: 'less',
      GIT_CONFIG_KEY_1: 'user.name',
      GIT_CONFIG_VALUE_1: 'Ada',
    };
    const before = { ...env };
    const mark = addBareExplicit(env);
    assert.deepEqual(mark.set, { GIT_CONFIG_COUNT: '3', GIT_CONFIG_KEY_2: 'safe.bareRepository', GIT_CONFIG_VALUE_2: 'explicit' });
    const config = (key: string) => execFileSync('git', ['config', key], { cwd: dir, env, encoding: 'utf8' }).trim();
    assert.equal(config('core.pager'), 'less');
    assert.equal(config('user.name'), 'Ada');
    assert.equal(config('safe.bareRepository'), 'explicit');
    assert.match(statusIn(env), /cannot use bare repository/);
    assert.equal(ran(), false, 'the planted fsmonitor ran on the host');
    assert.equal(takeBackBareExplicit(env, mark), true);
    assert.deepEqual(env, before);
  });

  it('leaves it in place once someone appended after it (taking it back would renumber their key)', () => {
    const env: Record<string, string | undefined> = base();
    const mark = addBareExplicit(env);
    Object.assign(env, withBareExplicit(env)); // another extension appends the same way
    env.GIT_CONFIG_KEY_1 = 'core.pager';
    env.GIT_CONFIG_VALUE_1 = 'less';
    const after = { ...env };
    assert.equal(takeBackBareExplicit(env, mark), false);
    assert.deepEqual(env, after);
    assert.match(statusIn(env), /cannot use bare repository/);
  });

  it("a user's own `git -c safe.bareRepository=all` still wins (the plant is theirs to run then)", () => {
    const env: Record<string, string | undefined> = base();
    addBareExplicit(env);
    assert.equal(statusIn(env, '-c', 'safe.bareRepository=all'), '');
    assert.equal(ran(), true);
  });
});
