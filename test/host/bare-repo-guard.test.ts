import * as assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { EXTENSION_ID } from './arbor-on-server';

// Attack (decision 0124; 0123's s58 leftover): a confined command plants a git folder below the
// workspace's top — `HEAD`, `config` (`core.bare = false`, a `core.worktree`, `core.fsmonitor`
// naming a program), `objects/`, `refs/`. Left alone, the next git run there by VS Code's git
// extension, by any other extension, or by the user in a terminal runs that program on the host.
// Arbor's guard gives the extension host's environment and the terminals'
// `safe.bareRepository=explicit`; here each of those three doors is tried for real, and each
// attack is shown to work with the guard off.

const SETTING = 'git.bareRepositoryExplicit';

async function until(ok: () => boolean, what: string, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const guardedEnv = () =>
  Array.from({ length: Number(process.env.GIT_CONFIG_COUNT ?? '0') }, (_, i) => i).some(
    (i) => process.env[`GIT_CONFIG_KEY_${i}`] === 'safe.bareRepository' && process.env[`GIT_CONFIG_VALUE_${i}`] === 'explicit',
  );

/** The user's own setting (only that counts); resolves once Arbor's guard has followed it. */
async function setGuard(on: boolean | undefined): Promise<void> {
  await vscode.workspace.getConfiguration('arbor').update(SETTING, on, vscode.ConfigurationTarget.Global);
  await until(() => guardedEnv() === (on !== false), `the guard to be ${on === false ? 'off' : 'on'}`);
}

/**
 * A git folder in `dir` whose worktree is `worktree` (relative to it) and whose fsmonitor touches
 * `marker`. Named with `--git-dir`, as a planting command would name it: with the guard on, git
 * no longer finds it by itself even here.
 */
function plant(dir: string, worktree: string, marker: string): void {
  fs.mkdirSync(dir, { recursive: true });
  const git = (...args: string[]) => execFileSync('git', [`--git-dir=${dir}`, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  git('init', '-q', '--bare');
  git('config', 'core.bare', 'false');
  git('config', 'core.worktree', worktree);
  git('config', 'core.fsmonitor', `touch '${marker}'; false`);
}

/** `git status` in `cwd` spawned as VS Code's git extension spawns it (extensions/git/src/git.ts: process.env read at spawn time, its own names over it). */
function statusAsTheGitExtension(cwd: string): Promise<{ code: number | null; stderr: string }> {
  const env = Object.assign({}, process.env, { VSCODE_GIT_COMMAND: 'status', LANGUAGE: 'en', LC_ALL: 'en_US.UTF-8', LANG: 'en_US.UTF-8', GIT_PAGER: 'cat' });
  return new Promise((resolve, reject) => {
    const p = spawn('git', ['status', '-z', '-uall'], { cwd, env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    p.stderr.on('data', (d) => {
      stderr += String(d);
    });
    p.on('error', reject);
    p.on('close', (code) => resolve({ code, stderr }));
  });
}

/** The part of vscode.git's API (v1) used here. */
interface GitApi {
  openRepository(root: vscode.Uri): Promise<{ rootUri: vscode.Uri; status(): Promise<void> } | null>;
}

describe('Arbor host: git run by extensions and terminals never takes a git folder planted below the top', () => {
  const top = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? '';
  let scratch: string;
  let dir: string;
  let marker: string;
  const ran = () => fs.existsSync(marker);

  before(async () => {
    assert.ok(top, 'the host tests open a workspace folder');
    await vscode.extensions.getExtension(EXTENSION_ID)?.activate();
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-bare-guard-'));
  });
  beforeEach(() => {
    dir = path.join(top, `planted-${Math.random().toString(36).slice(2, 8)}`);
    marker = path.join(scratch, `ran-${path.basename(dir)}`);
  });
  afterEach(async () => {
    fs.rmSync(dir, { recursive: true, force: true });
    await setGuard(undefined);
  });
  after(() => fs.rmSync(scratch, { recursive: true, force: true }));

  it("attack: `git status` in the planted folder, spawned with the extension host's environment as the git extension spawns it", async () => {
    const sub = path.join(dir, 'sub');
    plant(sub, '..', marker);
    const r = await statusAsTheGitExtension(sub);
    assert.equal(ran(), false, 'the planted fsmonitor ran on the host');
    assert.match(r.stderr, /cannot use bare repository/, `git refused the folder: ${r.stderr}`);
    assert.equal(guardedEnv(), true, 'on by default, from activation');

    // The same spawn with the guard off runs the plant: the refusal above is the guard's.
    await setGuard(false);
    await statusAsTheGitExtension(sub);
    assert.equal(ran(), true, 'with the guard off the plant runs (the attack is real)');
  });

  it("attack: VS Code's own git extension asked to open the planted folder as a repository", async () => {
    const git = vscode.extensions.getExtension<{ getAPI(v: 1): GitApi }>('vscode.git');
    assert.ok(git, 'the built-in git extension is loaded (code-server and VS Code ship it)');
    const api = (await git.activate()).getAPI(1);
    // Its worktree is the folder itself, so the extension's commands (run at the repository's root) find it.
    plant(dir, '.', marker);
    const refused = await api.openRepository(vscode.Uri.file(dir));
    assert.equal(refused, null, 'the git extension found no repository there');
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(ran(), false, 'the planted fsmonitor ran on the host');

    await setGuard(false);
    const opened = await api.openRepository(vscode.Uri.file(dir));
    assert.ok(opened, 'with the guard off the git extension opens it');
    try {
      await opened.status();
      await until(ran, 'the plant to run with the guard off (the attack is real)', 10_000);
    } finally {
      // Closed before the folder goes, or the extension keeps running git in a missing folder.
      await vscode.commands.executeCommand('git.close', opened.rootUri);
    }
  });

  it('attack: `git status` typed in a new integrated terminal', async () => {
    const sub = path.join(dir, 'sub');
    plant(sub, '..', marker);
    const inTerminal = async (name: string) => {
      const out = path.join(scratch, `${name}.out`);
      const terminal = vscode.window.createTerminal({
        name,
        cwd: sub,
        shellPath: '/bin/sh',
        shellArgs: ['-c', `{ printf 'params=%s\\n' "$GIT_CONFIG_PARAMETERS"; git status; } > '${out}.tmp' 2>&1; mv '${out}.tmp' '${out}'`],
      });
      try {
        await until(() => fs.existsSync(out), `the terminal ${name} to finish`);
        return fs.readFileSync(out, 'utf8');
      } finally {
        terminal.dispose();
      }
    };
    const got = await inTerminal('guarded');
    assert.equal(ran(), false, 'the planted fsmonitor ran on the host');
    assert.match(got, /cannot use bare repository/, got);
    assert.match(got, /^params='safe\.bareRepository'='explicit' /m, "the terminal's GIT_CONFIG_PARAMETERS starts with the guard");

    await setGuard(false);
    const open = await inTerminal('unguarded');
    assert.doesNotMatch(open, /safe\.bareRepository/, open);
    assert.equal(ran(), true, 'with the guard off the plant runs (the attack is real)');
  });
});
