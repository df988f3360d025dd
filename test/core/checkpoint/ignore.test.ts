import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { IgnoreRules } from '../../../src/core/worktree/ignore';

// The in-process ignore rules answer as git does (decision 0059): checked against the real
// `git check-ignore` on the same tree of .gitignore files.
describe('checkpoints: .gitignore rules read in-process agree with git', () => {
  let dir: string;
  beforeEach(() => (dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-ignore-')))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('agrees with git check-ignore on anchors, folders, globs, ** and negation', () => {
    const put = (rel: string, text: string) => {
      fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
      fs.writeFileSync(path.join(dir, rel), text);
    };
    put('.gitignore', ['# a comment', '*.log', '!keep.log', '/build/', 'dist', 'docs/**/*.tmp', 'a?c.txt', '[xy].md', 'cache/', 'nested/deep/'].join('\n'));
    put('src/.gitignore', ['generated/', '/local.ts', '!*.keep.log'].join('\n'));
    const excludes = ['.git', '/.arbor/checkpoints/'];
    const paths = [
      'a.log',
      'keep.log',
      'src/x.log',
      'src/y.keep.log',
      'build/out.js',
      'src/build/out.js',
      'dist',
      'src/dist/x.js',
      'docs/a/b/c.tmp',
      'docs/c.tmp',
      'x.tmp',
      'abc.txt',
      'abbc.txt',
      'x.md',
      'z.md',
      'cache/f',
      'src/cache/f',
      'src/generated/f.ts',
      'src/local.ts',
      'src/sub/local.ts',
      'nested/deep/f',
      'other/nested/deep/f',
      '.arbor/checkpoints/x',
      '.arbor/agents/a.md',
      'README.md',
    ];
    fs.mkdirSync(path.join(dir, 'shadow'));
    const gitDir = path.join(dir, 'shadow', 'x.git');
    execFileSync('git', ['init', '-q', '--bare', gitDir]);
    fs.writeFileSync(path.join(gitDir, 'info', 'exclude'), `${excludes.join('\n')}\n`);
    let out = '';
    try {
      out = execFileSync('git', ['check-ignore', '--no-index', '-z', '--stdin'], {
        input: paths.map((p) => `${p}\0`).join(''),
        env: { PATH: process.env.PATH, GIT_DIR: gitDir, GIT_WORK_TREE: dir, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
        cwd: dir,
      }).toString();
    } catch (e) {
      out = String((e as { stdout?: Buffer }).stdout ?? ''); // exit 1: none ignored
    }
    const byGit = new Set(out.split('\0').filter(Boolean));
    const rules = new IgnoreRules(dir, excludes);
    const disagree = paths.filter((p) => rules.ignored(p) !== byGit.has(p));
    assert.deepEqual(disagree, [], `git ignores: ${[...byGit].join(', ')}`);
    assert.ok(byGit.size >= 10, 'the case covers many ignored paths');
  });
  it('attack: a FIFO named .gitignore is not read: the rules never block the host', () => {
    // A command can make one anywhere in the workspace (.gitignore is not protected); the rules
    // are read on the host's own thread just before a write_file, so a blocking open would freeze it.
    execFileSync('mkfifo', [path.join(dir, '.gitignore')]);
    fs.mkdirSync(path.join(dir, 'sub'));
    fs.writeFileSync(path.join(dir, 'sub', '.gitignore'), '*.txt\n');
    const module = path.join(__dirname, '../../../src/core/worktree/ignore.js');
    const code = `
      const { IgnoreRules } = require(${JSON.stringify(module)});
      const rules = new IgnoreRules(${JSON.stringify(dir)}, ['.git']);
      process.stdout.write(JSON.stringify([rules.ignored('a.txt'), rules.ignored('sub/b.txt')]));`;
    const r = spawnSync(process.execPath, ['-e', code], { timeout: 10_000, encoding: 'utf8' });
    assert.equal(r.signal, null, 'the rules were read without waiting on the FIFO');
    assert.equal(r.status, 0, r.stderr);
    // A FIFO is no file of rules; the other folders' rules still count.
    assert.deepEqual(JSON.parse(r.stdout), [false, true]);
  });
});
