// A workspace root that is not a repository (a scratch folder): a confined command wrote `HEAD`,
// `config` (`core.worktree = ..`, `core.fsmonitor = <command>`), `objects/` and `refs/` at its top,
// and git's discovery then took the top itself for a bare repository (`safe.bareRepository` is
// `all` unless the user set it): the user's next `git status` there, or VS Code's, ran the
// fsmonitor command on the host, unconfined. A missing `HEAD` at such a top gets a stand-in while a
// command runs (decision 0123, amended s58). Real bubblewrap, the real git, run as the user runs it.
import * as assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createRunCommandTool } from '../../../src/core/tools/run-command';
import { CommandSandbox } from '../../../src/core/tools/sandbox/command-sandbox';
import { protectedMounts } from '../../../src/core/tools/sandbox/protected-mounts';
import { createWriteFileTool } from '../../../src/core/tools/write-file';
import { call, makeWorkspace, skipWithoutSandbox, type Workspace } from './fixture';

/** The user's git in `cwd`: their environment without anything Arbor or the test runner set for git, no global or system config. */
function userGitStatus(cwd: string): void {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('GIT_')));
  spawnSync('git', ['status'], { cwd, env: { ...env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' }, stdio: 'ignore' });
}

/** A shell line planting a bare repository in `dir` whose fsmonitor makes `marker`: HEAD as a file, else as a link into refs/. */
function plant(dir: string, marker: string): string {
  const config = `[core]\\n\\trepositoryformatversion = 0\\n\\tbare = false\\n\\tworktree = ..\\n\\tfsmonitor = "touch ${marker}; false"\\n`;
  return [
    `mkdir -p ${dir}/objects ${dir}/refs/heads`,
    `printf '${config}' > ${dir}/config`,
    `{ echo 'ref: refs/heads/main' > ${dir}/HEAD || ln -s refs/heads/main ${dir}/HEAD; } 2>/dev/null`,
  ].join('; ');
}

describe('OS sandbox: the top of a root that is not a repository never becomes a bare one (decision 0123, amended s58)', () => {
  let ws: Workspace;

  before(async function () {
    await skipWithoutSandbox(this);
  });
  afterEach(() => ws.cleanup());

  it('the probe is live: the same files planted by the host make the user’s git status run the fsmonitor', () => {
    ws = makeWorkspace();
    const marker = path.join(ws.outside, 'RAN');
    execFileSync('sh', ['-c', plant('.', marker)], { cwd: ws.root });
    userGitStatus(ws.root);
    assert.ok(fs.existsSync(marker), 'git took the planted top for a repository and ran its fsmonitor');
  });

  for (const residents of [undefined, false] as const) {
    it(`attack (${residents === false ? 'a bubblewrap of its own' : 'a resident'}): a command plants HEAD, config, objects and refs at the top; the user's git status there and below runs nothing; the stand-in is gone after`, async () => {
      ws = makeWorkspace();
      fs.mkdirSync(ws.at('src'));
      const marker = path.join(ws.outside, 'RAN');
      const tool = createRunCommandTool({ killGraceMs: 300, lingerMs: 300, sandbox: new CommandSandbox({ residents }) });
      const r = await call(tool, { command: `${plant('.', marker)}; ln -s refs/heads/main HEAD2; mv -f HEAD2 HEAD 2>/dev/null; echo done` }, ws.ctx());
      assert.match(r.content, /done/, r.content);
      assert.ok(fs.existsSync(ws.at('config')) && fs.existsSync(ws.at('objects')), `the rest was planted: ${r.content}`);
      assert.equal(fs.existsSync(ws.at('HEAD')), false, 'no HEAD at the top after the command (the stand-in is removed)');
      assert.equal(fs.existsSync(ws.at('.git')), false);
      userGitStatus(ws.root);
      userGitStatus(ws.at('src'));
      assert.equal(fs.existsSync(marker), false, 'the fsmonitor a command planted ran on the host');
    });
  }

  it('a HEAD the top already has is kept as it is: a file read-only, a folder in place, a link by guarding the top', async () => {
    const tool = createRunCommandTool({ killGraceMs: 300, lingerMs: 300, sandbox: new CommandSandbox({}) });
    for (const [kind, make] of [
      ['file', (p: string) => fs.writeFileSync(p, 'notes\n')],
      ['folder', (p: string) => fs.mkdirSync(p)],
      ['link', (p: string) => fs.symlinkSync('notes.txt', p)],
    ] as const) {
      ws = makeWorkspace();
      ws.write('notes.txt', 'mine\n');
      make(ws.at('HEAD'));
      const marker = path.join(ws.outside, 'RAN');
      const r = await call(
        tool,
        {
          command: `${plant('.', marker)}; rm -rf HEAD 2>/dev/null; mv HEAD gone 2>/dev/null; echo 'ref: refs/heads/main' > HEAD 2>/dev/null; echo work > notes.txt; echo done`,
        },
        ws.ctx(),
      );
      assert.match(r.content, /done/, r.content);
      userGitStatus(ws.root);
      assert.equal(fs.existsSync(marker), false, `${kind}: the fsmonitor ran: ${r.content}`);
      assert.equal(fs.readFileSync(ws.at('notes.txt'), 'utf8'), 'work\n', `${kind}: the top's files stay writable`);
      if (kind === 'file') assert.equal(fs.readFileSync(ws.at('HEAD'), 'utf8'), 'notes\n');
      if (kind === 'folder') assert.ok(fs.statSync(ws.at('HEAD')).isDirectory());
      if (kind === 'link') assert.equal(fs.readlinkSync(ws.at('HEAD')), 'notes.txt');
      ws.cleanup();
    }
    ws = makeWorkspace();
  });

  it('a repository’s top gets no HEAD stand-in: git finds its .git first, whatever a command plants beside it', async () => {
    ws = makeWorkspace();
    execFileSync('git', ['init', '-q', ws.root]);
    const marker = path.join(ws.outside, 'RAN');
    assert.equal((await protectedMounts([ws.root])).shadow.includes(ws.at('HEAD')), false);
    const tool = createRunCommandTool({ killGraceMs: 300, lingerMs: 300, sandbox: new CommandSandbox({}) });
    const r = await call(tool, { command: `ls -a; ${plant('.', marker)}; echo done` }, ws.ctx());
    assert.match(r.content, /done/, r.content);
    assert.doesNotMatch(r.content, /^HEAD$/m, 'no HEAD stand-in listed at a repository’s top');
    assert.equal(fs.readFileSync(ws.at('HEAD'), 'utf8'), 'ref: refs/heads/main\n', 'a command may write a HEAD beside .git');
    userGitStatus(ws.root);
    assert.equal(fs.existsSync(marker), false, 'git took the planted top although .git is there');
  });

  it('a top whose .git is an empty folder (git passes over it) still gets the stand-in; a non-git top lists it while a command runs', async () => {
    ws = makeWorkspace();
    assert.ok((await protectedMounts([ws.root])).shadow.includes(ws.at('HEAD')));
    fs.mkdirSync(ws.at('.git'));
    assert.ok((await protectedMounts([ws.root])).shadow.includes(ws.at('HEAD')), 'an empty .git does not end git’s search');
    fs.rmdirSync(ws.at('.git'));
    const tool = createRunCommandTool({ killGraceMs: 300, lingerMs: 300, sandbox: new CommandSandbox({}) });
    const r = await call(tool, { command: 'ls -a; echo done' }, ws.ctx());
    assert.match(r.content, /^HEAD$/m, r.content);
  });

  it('write_file asks before writing HEAD at the top of a root that is not a repository (refused under policy never); at a repository’s top and below the top it does not', async () => {
    ws = makeWorkspace();
    const write = createWriteFileTool();
    for (const name of ['HEAD', './head']) {
      const r = await call(write, { path: name, content: 'ref: refs/heads/main\n' }, ws.ctx());
      assert.equal(r.code, 'APPROVAL_DENIED', r.content);
      assert.match(r.content, /not a repository makes it one to git/);
    }
    assert.equal(fs.existsSync(ws.at('HEAD')), false);
    assert.equal((await call(write, { path: 'sub/HEAD', content: 'x\n' }, ws.ctx())).isError, false);
    execFileSync('git', ['init', '-q', ws.root]);
    const r = await call(write, { path: 'HEAD', content: 'notes\n' }, ws.ctx());
    assert.equal(r.isError, false, r.content);
  });
});
