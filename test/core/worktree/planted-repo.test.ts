// Attack (session 53): a confined command cannot write `.git`, but it can write a repository's
// other names — `HEAD`, `config`, `objects/`, `refs/` — straight into the workspace folder. Git
// finding no `.git` there takes the folder itself for a bare repository, and its `config` (with
// `core.worktree` a work tree too): a workspace that is a package of a monorepo, or no
// repository at all, then had Arbor's own git (worktrees, placements), unconfined, read a
// configuration the command wrote, whose `core.fsmonitor` it runs on every index it reads.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { bareFoundFrom } from '../../../src/core/tools/bare-found';
import { sandboxStatus } from '../../../src/core/tools/sandbox/detect';
import { repoTop, type WorktreeError } from '../../../src/core/worktree/git';
import { gitAvailable, gitKnowsBareSetting, gitVersion, versionKnowsBareSetting } from '../../../src/core/worktree/git-version';
import { run } from '../checkpoint/fixture';
import { eventsOf, ofType, subagentWorld } from '../subagent/helpers';
import { gitIn, initRepo } from './fixture';

/** The command that plants a repository in its working folder, whose fsmonitor appends to `escaped` (on the host, if one runs it). */
const plant = (escaped: string) =>
  'git init -q --bare . && git config core.bare false && git config core.worktree . && ' +
  'git -c user.name=a -c user.email=a@a commit -q --allow-empty -m x && ' +
  `git config core.fsmonitor 'echo ran >> ${escaped}; false' && echo planted`;

describe('a repository a command writes into the workspace folder itself is never the one Arbor runs git on', () => {
  const world = subagentWorld({}, { gates: false, perTest: true });
  let base: string;
  let ws: string;
  before(async () => {
    const status = await sandboxStatus();
    if (!status.available) throw new Error(`These tests need bubblewrap, and ${status.reason}. Run "npm run setup:e2e" (it installs bubblewrap).`);
  });
  beforeEach(async () => {
    base = fs.realpathSync(fs.mkdtempSync('/var/tmp/arbor-planted-repo-'));
    // A monorepo opened at one of its packages (the CLI run in `packages/web`): no `.git` in the workspace folder.
    const mono = path.join(base, 'mono');
    fs.mkdirSync(path.join(mono, 'pkg'), { recursive: true });
    fs.writeFileSync(path.join(mono, 'pkg', 'p.txt'), 'p\n');
    initRepo(mono);
    ws = path.join(mono, 'pkg');
    await world.setup({ workspace: [ws], storeDir: path.join(ws, '.arbor', 'store') });
  });
  afterEach(() => fs.rmSync(base, { recursive: true, force: true }));

  it('attack: a command plants a repository (fsmonitor) in the workspace folder, then a child asks for its own worktree; the planted fsmonitor never runs on the host', async () => {
    const escaped = path.join(base, 'escaped');
    // Neither a command nor write_file can make `HEAD` at the top of a folder git passes over
    // (decision 0123, amended s58): one the folder already had (read-only to commands) stands for
    // whatever else gave it one; the command makes the rest.
    fs.writeFileSync(path.join(ws, 'HEAD'), 'ref: refs/heads/main\n');
    world.script.on(
      'root',
      { toolCalls: [{ id: 'c1', ...run(plant(escaped)) }] },
      { toolCalls: [{ id: 'c2', name: 'subagent', arguments: { prompt: '[[kid]] work', label: 'kid', isolation: 'worktree' } }] },
      { text: 'done' },
    );
    world.script.on('kid', { text: 'kid done' });
    await world.root.accept('[[root]] go');
    await world.t.h.settle();
    assert.ok(
      fs.existsSync(path.join(ws, 'config')) && fs.existsSync(path.join(ws, 'HEAD')),
      'the command planted its repository (the sandbox lets it write these names, HEAD aside)',
    );
    assert.equal(fs.existsSync(escaped) ? fs.readFileSync(escaped, 'utf8') : '', '', 'the host ran the planted fsmonitor');
    const res = ofType(await eventsOf(world.t.h, world.root.id), 'tool/result');
    const child = res.find((r) => r.name === 'subagent');
    assert.ok(child?.isError, `the isolated child is refused: ${child?.content}`);
    assert.match(child?.content ?? '', /bare repository/);
    assert.match(child?.content ?? '', /HEAD, config, objects/);
    // The user's own repository above is untouched and still the one git finds from a folder without the plant.
    assert.equal(gitIn(path.dirname(ws), 'rev-parse', '--show-toplevel').trim(), path.dirname(ws));
  });

  it('the folder itself as a repository (no `.git` in it) is refused with what to do; a real checkout below it still is one', async () => {
    const bare = path.join(base, 'bare');
    fs.mkdirSync(bare);
    gitIn(bare, 'init', '-q', '--bare', '.');
    await assert.rejects(repoTop(bare), (e: WorktreeError) => {
      assert.equal(e.code, 'NOT_A_REPO');
      assert.match(e.message, /is itself a bare repository.*HEAD, config, objects.*a command in the workspace can write them/);
      return true;
    });
    assert.equal(await repoTop(path.join(ws, '..')), path.dirname(ws));
  });

  it("finds a bare repository as git's own walk does (the check where git is older than safe.bareRepository)", () => {
    const mono = path.dirname(ws);
    assert.equal(bareFoundFrom(ws), undefined, 'a package of a checkout: the walk ends at its .git');
    gitIn(ws, 'init', '-q', '--bare', '.');
    fs.mkdirSync(path.join(ws, 'deep', 'er'), { recursive: true });
    assert.equal(bareFoundFrom(ws), ws, 'the folder itself');
    assert.equal(bareFoundFrom(path.join(ws, 'deep', 'er')), ws, 'from a folder below it');
    fs.mkdirSync(path.join(ws, '.git'));
    assert.equal(bareFoundFrom(ws), ws, "an empty .git (the sandbox's stand-in) does not end git's walk");
    fs.rmdirSync(path.join(ws, '.git'));
    // Forms git takes as well: HEAD a link (even dangling), objects and refs named through `commondir`.
    const odd = path.join(base, 'odd');
    fs.mkdirSync(path.join(odd, 'objects'), { recursive: true });
    fs.mkdirSync(path.join(odd, 'refs'));
    fs.symlinkSync('refs/heads/nowhere', path.join(odd, 'HEAD'));
    assert.equal(bareFoundFrom(odd), odd, 'HEAD a dangling link');
    const common = path.join(base, 'common');
    fs.mkdirSync(common);
    fs.writeFileSync(path.join(common, 'HEAD'), 'ref: refs/heads/main\n');
    fs.writeFileSync(path.join(common, 'commondir'), `${odd}\n`);
    assert.equal(bareFoundFrom(common), common, 'objects and refs through commondir');
    gitIn(mono, 'worktree', 'add', '-q', path.join(base, 'linked'));
    assert.equal(bareFoundFrom(path.join(base, 'linked', 'pkg')), undefined, "a linked worktree's .git file ends it");
    assert.equal(bareFoundFrom(mono), undefined);
  });

  it('walks only for a git that does not know the setting: the version is read as git prints it, and anything unread walks', async () => {
    assert.equal(versionKnowsBareSetting('git version 2.38.0\n'), true);
    assert.equal(versionKnowsBareSetting('git version 2.39.5'), true);
    assert.equal(versionKnowsBareSetting('git version 3.0.1'), true);
    assert.equal(versionKnowsBareSetting('git version 2.37.7 (Apple Git-136)'), false);
    assert.equal(versionKnowsBareSetting('git version 1.99.9'), false);
    assert.equal(versionKnowsBareSetting(''), false, 'no git, or an answer that does not parse: walk');
    const said = gitIn(base, '--version');
    assert.equal(await gitKnowsBareSetting(), versionKnowsBareSetting(said), `this machine's ${said.trim()}`);
  });

  it("one git version per process: the checkpoints' and the worktrees' questions share one probe", async () => {
    const said = gitIn(base, '--version').trim();
    assert.equal(gitVersion(), gitVersion(), 'asked once: the same answer, not a second git');
    assert.equal(await gitVersion(), said);
    assert.equal(await gitAvailable(), true);
  });
});
