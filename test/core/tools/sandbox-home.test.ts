// A workspace that is the home folder, or holds it (`arbor run` started in ~, VS Code opened on ~):
// its roots are writable, and the home folder's dot files are what the user's shell, git and
// desktop run on their next start. A confined command wrote `~/.bashrc`, a new `~/.bash_profile`
// and `~/.config/autostart/*.desktop`, and `~/.gitconfig` (read by every git the user runs). The
// home folder is kept read-only there, its own folders bound writable again (decision 0123).
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createRunCommandTool } from '../../../src/core/tools/run-command';
import { CommandSandbox } from '../../../src/core/tools/sandbox/command-sandbox';
import { createWriteFileTool } from '../../../src/core/tools/write-file';
import { call, makeWorkspace, skipWithoutSandbox, type Workspace } from './fixture';

describe('OS sandbox: a workspace at or above the home folder (decision 0123)', () => {
  let ws: Workspace;
  const home = process.env.HOME;

  before(async function () {
    await skipWithoutSandbox(this);
  });
  afterEach(() => {
    process.env.HOME = home;
    ws.cleanup();
  });

  const attack = [
    'echo evil >> .bashrc',
    'echo evil > .bash_profile',
    'mkdir -p .config/autostart && echo evil > .config/autostart/x.desktop',
    'printf "[core]\\n\\tfsmonitor = evil\\n" >> .gitconfig',
    'echo work > projects/app/file.txt',
    'mkdir projects/app/src',
    'echo done',
  ].join('; ');

  for (const [where, residents] of [
    ['the home folder itself (a resident)', undefined],
    ['the home folder itself (a bubblewrap of its own)', false],
    ['a folder above it', undefined],
  ] as const) {
    it(`as ${where}: its dot files cannot be written or made; its folders stay writable`, async () => {
      ws = makeWorkspace();
      const userHome = where === 'a folder above it' ? ws.at('alice') : ws.root;
      fs.mkdirSync(path.join(userHome, 'projects/app'), { recursive: true });
      fs.writeFileSync(path.join(userHome, '.bashrc'), 'mine\n');
      fs.writeFileSync(path.join(userHome, '.gitconfig'), '[user]\n');
      process.env.HOME = userHome;
      const tool = createRunCommandTool({ killGraceMs: 300, lingerMs: 300, sandbox: new CommandSandbox({ residents }) });
      const r = await call(tool, { command: attack, cwd: userHome }, ws.ctx());
      assert.match(r.content, /done/, r.content);
      assert.match(r.content, /home folder/, `the result says why: ${r.content}`);
      const at = (rel: string) => path.join(userHome, rel);
      assert.equal(fs.readFileSync(at('.bashrc'), 'utf8'), 'mine\n');
      assert.equal(fs.readFileSync(at('.gitconfig'), 'utf8'), '[user]\n');
      assert.equal(fs.existsSync(at('.bash_profile')), false);
      assert.equal(fs.existsSync(at('.config')), false);
      assert.equal(fs.readFileSync(at('projects/app/file.txt'), 'utf8'), 'work\n', 'a project in it stays writable');
      assert.ok(fs.statSync(at('projects/app/src')).isDirectory());
    });
  }

  // The same dot files through the file tool: `echo >> .bashrc` is refused, and write_file wrote it
  // without a question (the home folder's dot entries were no protected name).
  it("attack: write_file on the home folder's dot files (.bashrc, .ssh/authorized_keys, .config/autostart) needs approval; its project files do not", async () => {
    ws = makeWorkspace();
    fs.mkdirSync(ws.at('projects/app'), { recursive: true });
    fs.writeFileSync(ws.at('.bashrc'), 'mine\n');
    process.env.HOME = ws.root;
    const write = createWriteFileTool();
    for (const p of ['.bashrc', '.ssh/authorized_keys', '.config/autostart/x.desktop', '.gitconfig']) {
      const r = await call(write, { path: p, content: 'evil\n' }, ws.ctx());
      assert.equal(r.isError, true, `${p}: ${r.content}`);
      assert.match(r.content, /protected path \(a dot file or folder of your home folder/, r.content);
    }
    assert.equal(fs.readFileSync(ws.at('.bashrc'), 'utf8'), 'mine\n');
    assert.equal(fs.existsSync(ws.at('.ssh')), false);
    assert.equal(fs.existsSync(ws.at('.config')), false);
    const ok = await call(write, { path: 'projects/app/.eslintrc', content: '{}\n' }, ws.ctx());
    assert.equal(ok.isError, false, ok.content);
    // The user's home folder outside the workspace: its dot files are outside the roots anyway, and a
    // workspace inside home keeps its own dot files free.
    process.env.HOME = ws.outside;
    const free = await call(write, { path: '.prettierrc', content: '{}\n' }, ws.ctx());
    assert.equal(free.isError, false, free.content);
  });

  // The home folder's real path is kept per process when no link is on its way (protected-paths.ts):
  // whatever a command could change under it must still be seen by the next write.
  it('attack: HOME through a link in the workspace, pointed elsewhere between two writes: the new target’s dot files ask', async () => {
    ws = makeWorkspace();
    fs.mkdirSync(ws.at('real'));
    fs.mkdirSync(ws.at('other'));
    fs.symlinkSync(ws.at('real'), ws.at('me'));
    process.env.HOME = ws.at('me');
    const write = createWriteFileTool();
    const asks = async (p: string) => {
      const r = await call(write, { path: p, content: 'evil\n' }, ws.ctx());
      return r.isError && /a dot file or folder of your home folder/.test(r.content);
    };
    assert.equal(await asks('real/.bashrc'), true);
    assert.equal(await asks('other/.bashrc'), false, 'not the home folder (yet)');
    // What a confined command may do: the link is no protected name.
    fs.rmSync(ws.at('me'));
    fs.symlinkSync(ws.at('other'), ws.at('me'));
    assert.equal(await asks('other/.profile'), true, 'the home folder the shell now reads');
    assert.equal(await asks('real/.profile'), false);
    // A home folder missing at the first check, made later as a link.
    process.env.HOME = ws.at('later');
    assert.equal(await asks('real/.zshrc'), false);
    fs.symlinkSync(ws.at('real'), ws.at('later'));
    assert.equal(await asks('real/.zshrc'), true, 'a home folder that was missing is not taken for link-free');
  });

  it('attack: a confined command cannot move a link-free home folder and leave a link in its place (what keeping its real path relies on)', async () => {
    ws = makeWorkspace();
    const alice = ws.at('alice');
    fs.mkdirSync(path.join(alice, 'projects'), { recursive: true });
    process.env.HOME = alice;
    const write = createWriteFileTool();
    const first = await call(write, { path: 'alice/.bashrc', content: 'evil\n' }, ws.ctx());
    assert.equal(first.isError, true, first.content); // the home folder's real path is kept from here on
    const tool = createRunCommandTool({ killGraceMs: 300, lingerMs: 300, sandbox: new CommandSandbox({}) });
    const r = await call(tool, { command: 'mv alice alice2 && ln -s alice2 alice; echo done', cwd: ws.root }, ws.ctx());
    assert.match(r.content, /done/, r.content);
    assert.equal(fs.lstatSync(alice).isDirectory(), true, `the home folder is still a folder, not a link: ${r.content}`);
    assert.equal(fs.existsSync(ws.at('alice2')), false);
    const again = await call(write, { path: 'alice/.bashrc', content: 'evil\n' }, ws.ctx());
    assert.equal(again.isError, true, again.content);
  });
  // HOME through links that lie in a root (decision 0123, amended s59): the sandbox guarded the home
  // folder as it resolved at the command's start, so one command could point a link on the way
  // elsewhere (or move the folder holding it and leave a new link of that name) and write the new
  // target's dot files in the same run; the next shell with that HOME runs them. Each case: the
  // layout (links' targets absolute unless they start with '.'), HOME, where it resolves, the attack.
  const viaLinks: { name: string; links: [string, string][]; dirs: string[]; home: string; real: string; attack: string[]; residents?: false }[] = [
    {
      name: 'a link in the root re-pointed, removed or moved',
      links: [['me', 'real']],
      dirs: ['real', 'other'],
      home: 'me',
      real: 'real',
      attack: ['ln -sfn "$W/other" me', 'rm -f me && ln -s other me', 'mv me me.old && ln -s other me', 'mv -f other me'],
    },
    {
      name: 'a link in a subfolder whose folder is renamed and made again with a new link (a bubblewrap of its own)',
      links: [['users/me', 'real']],
      dirs: ['real', 'other', 'users'],
      home: 'users/me',
      real: 'real',
      attack: ['mv users users.old && mkdir users && ln -s ../other users/me', 'ln -sfn "$W/other" users/me'],
      residents: false,
    },
    {
      name: "a link on the way to the first link's target (me -> a/b, a -> c) re-pointed or moved",
      links: [
        ['me', 'a/b'],
        ['a', 'c'],
      ],
      dirs: ['c/b', 'other/b'],
      home: 'me',
      real: 'c/b',
      attack: ['ln -sfn "$W/other" a', 'mv a a.old && ln -s other a', 'mv c c.old && mkdir -p c && ln -s ../other/b c/b'],
    },
    {
      name: "a folder the way passes and leaves by '..' (me -> x/../home, x -> p/q) replaced by a link",
      links: [
        ['me', './x/../home'],
        ['x', 'p/q'],
      ],
      dirs: ['p/q', 'p/home', 'other/q', 'other/home'],
      home: 'me',
      real: 'p/home',
      attack: ['mv p/q p/q.old && ln -s "$W/other/q" p/q', 'mv x x.old && ln -s other/q x'],
    },
    {
      name: 'a link in the root leading to a home folder outside the workspace',
      links: [['me', '../outside/home']],
      dirs: ['other', '../outside/home'],
      home: 'me',
      real: '../outside/home',
      attack: ['ln -sfn "$W/other" me', 'mv me me.old && ln -s other me'],
    },
  ];
  for (const c of viaLinks) {
    it(`attack: HOME through ${c.name}: the home folder the next shell reads stays the same, its dot files unwritten`, async () => {
      ws = makeWorkspace();
      for (const d of c.dirs) fs.mkdirSync(ws.at(d), { recursive: true });
      for (const [at, to] of c.links) fs.symlinkSync(to.startsWith('.') ? to : ws.at(to), ws.at(at));
      const real = path.resolve(ws.root, c.real);
      fs.writeFileSync(path.join(real, '.bashrc'), 'mine\n');
      const home = ws.at(c.home);
      process.env.HOME = home;
      assert.equal(fs.realpathSync.native(home), real, 'the layout resolves as meant');
      const write = createWriteFileTool();
      const asks = async (p: string) => {
        const r = await call(write, { path: p, content: 'evil\n' }, ws.ctx());
        return r.isError && /a dot file or folder of your home folder/.test(r.content);
      };
      if (!c.real.startsWith('..')) assert.equal(await asks(`${c.real}/.profile`), true, 'write_file asks for the home folder it resolves to');
      const tool = createRunCommandTool({ killGraceMs: 300, lingerMs: 300, sandbox: new CommandSandbox({ residents: c.residents }) });
      // Each way tried, then a dot file written through HOME: whatever it resolves to now.
      const command = [`W=${ws.root}`, ...c.attack.map((a) => `(${a}; echo evil >> "${home}/.bashrc"; echo evil > "${home}/.profile")`), 'echo done'].join(
        '; ',
      );
      const r = await call(tool, { command, cwd: ws.root }, ws.ctx());
      assert.match(r.content, /done/, r.content);
      assert.equal(fs.realpathSync.native(home), real, `HOME still resolves to the same folder: ${r.content}`);
      assert.equal(fs.readFileSync(path.join(home, '.bashrc'), 'utf8'), 'mine\n', r.content);
      assert.equal(fs.existsSync(path.join(home, '.profile')), false, r.content);
      for (const d of c.dirs) assert.equal(fs.existsSync(path.join(ws.at(d), '.profile')), false, `${d}/.profile: ${r.content}`);
      assert.match(r.content, /on the way to your home folder/, `the result says why: ${r.content}`);
      if (!c.real.startsWith('..')) assert.equal(await asks(`${c.real}/.profile`), true, 'and write_file still asks for it');
    });
  }

  // The file tools resolve HOME at every check, through every link of a chain: pointed elsewhere on
  // the host (by the user, or an unconfined command), the new target's dot files ask at once.
  it('attack: HOME through a chain of links (me -> a/b, a -> c): write_file asks for the dot files of whichever folder it leads to', async () => {
    ws = makeWorkspace();
    for (const d of ['c/b', 'other/b']) fs.mkdirSync(ws.at(d), { recursive: true });
    fs.symlinkSync(ws.at('a/b'), ws.at('me'));
    fs.symlinkSync(ws.at('c'), ws.at('a'));
    process.env.HOME = ws.at('me');
    const write = createWriteFileTool();
    const asks = async (p: string) => {
      const r = await call(write, { path: p, content: 'evil\n' }, ws.ctx());
      return r.isError && /a dot file or folder of your home folder/.test(r.content);
    };
    assert.equal(await asks('c/b/.bashrc'), true);
    assert.equal(await asks('other/b/.bashrc'), false, 'not the home folder (yet)');
    fs.rmSync(ws.at('a'));
    fs.symlinkSync(ws.at('other'), ws.at('a'));
    assert.equal(await asks('other/b/.bashrc'), true, 'the home folder the shell now reads');
    assert.equal(await asks('c/b/.gitconfig'), false);
  });
  // A home folder missing when the command starts (decision 0123, amended s59): nothing guarded what
  // was not there, so the command made it, as a folder or a link, with dot files the next shell runs.
  for (const home of ['alice', 'users/alice']) {
    it(`attack: a missing home folder (${home}) inside the workspace cannot be made by a command, as a folder or a link; write_file asks`, async () => {
      ws = makeWorkspace();
      fs.mkdirSync(ws.at('other'));
      fs.writeFileSync(ws.at('other/.bashrc'), 'evil\n');
      const userHome = ws.at(home);
      process.env.HOME = userHome;
      const tool = createRunCommandTool({ killGraceMs: 300, lingerMs: 300, sandbox: new CommandSandbox({}) });
      const command = [
        '(rmdir "$H"; mv "$H" x)',
        '(mkdir -p "$H/.config/autostart" && echo evil > "$H/.config/autostart/x.desktop")',
        '(echo evil > "$H/.bashrc")',
        `(mkdir -p "${path.dirname(userHome)}"; ln -s "${ws.at('other')}" "$H")`,
        'echo work > other/file.txt',
        'echo done',
      ].join('; ');
      const r = await call(tool, { command: `H=${userHome}; ${command}`, cwd: ws.root }, ws.ctx());
      assert.match(r.content, /done/, r.content);
      assert.equal(fs.existsSync(userHome), false, `the home folder was not made (its stand-in is gone): ${r.content}`);
      assert.equal(fs.existsSync(ws.at('users')), false, r.content);
      assert.match(r.content, /home folder .* does not exist/, `the result says why: ${r.content}`);
      assert.equal(fs.readFileSync(ws.at('other/file.txt'), 'utf8'), 'work\n', 'the rest stays writable');
      const write = createWriteFileTool();
      for (const p of [`${home}/.bashrc`, `${home}/.config/autostart/x.desktop`]) {
        const w = await call(write, { path: p, content: 'evil\n' }, ws.ctx());
        assert.equal(w.isError, true, `${p}: ${w.content}`);
        assert.match(w.content, /a dot file or folder of your home folder/, w.content);
      }
      assert.equal(fs.existsSync(userHome), false);
    });
  }

  // `HOME=$W/x/../home` with no `x` (review s59): realpath failed, so the existing home folder the way
  // leads to went unguarded and no stand-in held `x`; the command wrote `home/.bashrc` and made `x`
  // (a folder: the next shell reads that `.bashrc`; or a link, which moves where `..` leads).
  for (const make of ['mkdir x', 'ln -s other/sub x']) {
    it(`attack: HOME through a missing folder and .. (x/../home), the command writes home's dot files and makes x (${make})`, async () => {
      ws = makeWorkspace();
      fs.mkdirSync(ws.at('home/projects'), { recursive: true });
      fs.mkdirSync(ws.at('other/sub'), { recursive: true });
      fs.writeFileSync(ws.at('home/.bashrc'), 'mine\n');
      process.env.HOME = `${ws.root}/x/../home`;
      const tool = createRunCommandTool({ killGraceMs: 300, lingerMs: 300, sandbox: new CommandSandbox({}) });
      const command = ['echo evil >> home/.bashrc', '(rmdir x; mv x x.old)', make, 'mkdir -p other/home', 'echo evil > home/projects/a.txt', 'echo done'].join(
        '; ',
      );
      const r = await call(tool, { command, cwd: ws.root }, ws.ctx());
      assert.match(r.content, /done/, r.content);
      assert.equal(fs.readFileSync(ws.at('home/.bashrc'), 'utf8'), 'mine\n', r.content);
      assert.equal(fs.lstatSync(ws.at('x'), { throwIfNoEntry: false }), undefined, `x was not made (its stand-in is gone): ${r.content}`);
      assert.equal(fs.existsSync(ws.at('x.old')), false, r.content);
      assert.equal(fs.readFileSync(ws.at('home/projects/a.txt'), 'utf8'), 'evil\n', 'its folders stay writable');
    });
  }

  // `HOME=$W/x/../home` with `x -> p/q` (review s59): the kernel reaches p/home, but the sandbox walked
  // `path.resolve(HOME)`, which drops `x/..` by text, so the link `x` was not kept: re-pointed, HOME led
  // to a folder of the command's choosing with its `.bashrc`.
  it('attack: HOME through a link and .. (x/../home, x -> p/q): the command cannot re-point x', async () => {
    ws = makeWorkspace();
    fs.mkdirSync(ws.at('p/q'), { recursive: true });
    fs.mkdirSync(ws.at('p/home'));
    fs.writeFileSync(ws.at('p/home/.bashrc'), 'mine\n');
    fs.mkdirSync(ws.at('other/sub'), { recursive: true });
    fs.mkdirSync(ws.at('other/home'));
    fs.writeFileSync(ws.at('other/home/.bashrc'), 'evil\n');
    fs.symlinkSync(ws.at('p/q'), ws.at('x'));
    process.env.HOME = `${ws.root}/x/../home`;
    const tool = createRunCommandTool({ killGraceMs: 300, lingerMs: 300, sandbox: new CommandSandbox({}) });
    const command = ['echo evil >> p/home/.bashrc', '(rm x; ln -s other/sub x)', '(mv x x.old; ln -s other/sub x)', 'echo done'].join('; ');
    const r = await call(tool, { command, cwd: ws.root }, ws.ctx());
    assert.match(r.content, /done/, r.content);
    assert.equal(fs.readFileSync(ws.at('p/home/.bashrc'), 'utf8'), 'mine\n', r.content);
    assert.equal(fs.realpathSync.native(process.env.HOME), ws.at('p/home'), `HOME leads where it did: ${r.content}`);
  });

  // Linked dot entries (decision 0123, amended s59): `~/.bashrc -> dotfiles/bashrc`, as GNU stow makes
  // them. The link was kept (the home folder is read-only) but its target in the workspace was not:
  // a command appended to dotfiles/bashrc and write_file wrote it without asking.
  const linked: { name: string; home: string; links: [string, string][]; dirs: string[]; files: string[]; work: string; attack: string[] }[] = [
    {
      name: 'the home folder as the root, its dotfiles folder in it',
      home: '.',
      links: [
        ['.bashrc', 'dotfiles/bashrc'],
        ['.config', 'dotfiles/config'],
        ['.profile', 'dotfiles/profile'],
      ],
      dirs: ['dotfiles/config', 'projects'],
      files: ['dotfiles/bashrc'],
      work: 'projects/x.txt',
      attack: [
        'echo evil >> dotfiles/bashrc',
        'echo evil > dotfiles/config/x.desktop',
        'echo evil > dotfiles/profile',
        'mv dotfiles/bashrc b.old && echo evil > dotfiles/bashrc',
      ],
    },
    {
      name: 'a home folder below the root, its dot files through a link beside it (dots -> repo/dotfiles)',
      home: 'alice',
      links: [
        ['alice/.bashrc', 'dots/bashrc'],
        ['alice/.config', 'dots/config'],
        ['dots', 'repo/dotfiles'],
      ],
      dirs: ['repo/dotfiles/config', 'alice/projects', 'other/config'],
      files: ['repo/dotfiles/bashrc'],
      work: 'alice/projects/x.txt',
      attack: [
        'echo evil >> repo/dotfiles/bashrc',
        'echo evil > dots/config/x.desktop',
        'ln -sfn "$W/other" dots',
        'mv dots dots.old && ln -s other dots',
        'mv repo repo.old && mkdir -p repo/dotfiles && echo evil > repo/dotfiles/bashrc',
        'mv repo/dotfiles repo/d.old && mkdir repo/dotfiles && echo evil > repo/dotfiles/bashrc',
      ],
    },
  ];
  for (const c of linked) {
    it(`attack: linked dot files, ${c.name}: what they link to is read-only to commands and write_file asks, naming the link`, async () => {
      ws = makeWorkspace();
      for (const d of c.dirs) fs.mkdirSync(ws.at(d), { recursive: true });
      for (const f of c.files) fs.writeFileSync(ws.at(f), 'mine\n');
      for (const [at, to] of c.links) fs.symlinkSync(ws.at(to), ws.at(at));
      const userHome = path.resolve(ws.root, c.home);
      process.env.HOME = userHome;
      const tool = createRunCommandTool({ killGraceMs: 300, lingerMs: 300, sandbox: new CommandSandbox({}) });
      const command = [`W=${ws.root}`, ...c.attack.map((a) => `(${a})`), `echo work > ${c.work}`, 'echo done'].join('; ');
      const r = await call(tool, { command, cwd: ws.root }, ws.ctx());
      assert.match(r.content, /done/, r.content);
      const bashrc = path.join(userHome, '.bashrc');
      assert.equal(fs.readFileSync(bashrc, 'utf8'), 'mine\n', `what ~/.bashrc reads: ${r.content}`);
      assert.equal(fs.existsSync(path.join(userHome, '.config/x.desktop')), false, r.content);
      assert.equal(fs.existsSync(path.join(userHome, '.profile')), false, `a dangling link's target is not made: ${r.content}`);
      assert.equal(fs.readFileSync(ws.at(c.work), 'utf8'), 'work\n', 'the rest stays writable');
      const write = createWriteFileTool();
      const target = fs.realpathSync.native(bashrc);
      const w = await call(write, { path: path.relative(ws.root, target), content: 'evil\n' }, ws.ctx());
      assert.equal(w.isError, true, w.content);
      assert.match(w.content, /a dot file or folder of your home folder.*what .*\.bashrc links to/, w.content);
      assert.equal(fs.readFileSync(bashrc, 'utf8'), 'mine\n');
      const free = await call(write, { path: path.join(path.dirname(path.relative(ws.root, target)), 'README'), content: 'notes\n' }, ws.ctx());
      assert.equal(free.isError, false, `its neighbours are no dot file: ${free.content}`);
    });
  }

  // A dotfiles repository opened as the workspace, the home folder elsewhere linking into it: editing
  // those files is the work asked for; nothing changes there.
  // A linked dot entry whose way passes a link in the workspace that leads out of it (review s59):
  // `~/.bashrc -> dots/l/bashrc`, `dots/l -> /elsewhere`. The target is outside every root, so
  // nothing on its way was kept: the command replaced `dots/l` with a folder of its own and the
  // next shell read its `bashrc`.
  it('attack: a linked dot file through a link in the workspace that leads outside: the link on the way is kept', async () => {
    ws = makeWorkspace();
    fs.writeFileSync(path.join(ws.outside, 'bashrc'), 'mine\n');
    fs.mkdirSync(ws.at('dots'));
    fs.symlinkSync(ws.outside, ws.at('dots/l'));
    fs.symlinkSync('dots/l/bashrc', ws.at('.bashrc'));
    fs.mkdirSync(ws.at('projects'));
    process.env.HOME = ws.root;
    const tool = createRunCommandTool({ killGraceMs: 300, lingerMs: 300, sandbox: new CommandSandbox({}) });
    const command = [
      '(rm dots/l && mkdir dots/l && echo evil > dots/l/bashrc)',
      '(mv dots/l dots/l.old && mkdir dots/l && echo evil > dots/l/bashrc)',
      '(mv dots d.old && mkdir -p dots/l && echo evil > dots/l/bashrc)',
      'echo work > projects/x.txt',
      'echo done',
    ].join('; ');
    const r = await call(tool, { command, cwd: ws.root }, ws.ctx());
    assert.match(r.content, /done/, r.content);
    assert.equal(fs.readFileSync(ws.at('.bashrc'), 'utf8'), 'mine\n', r.content);
    assert.equal(fs.readFileSync(ws.at('projects/x.txt'), 'utf8'), 'work\n', 'the rest stays writable');
  });

  it('a dotfiles repository as the workspace, the home folder outside linking into it: its files stay writable to commands and write_file', async () => {
    ws = makeWorkspace();
    fs.writeFileSync(ws.at('bashrc'), 'mine\n');
    const userHome = path.join(ws.outside, 'home');
    fs.mkdirSync(userHome, { recursive: true });
    fs.symlinkSync(ws.at('bashrc'), path.join(userHome, '.bashrc'));
    process.env.HOME = userHome;
    const tool = createRunCommandTool({ killGraceMs: 300, lingerMs: 300, sandbox: new CommandSandbox({}) });
    const r = await call(tool, { command: 'echo alias ll=ls >> bashrc; echo done', cwd: ws.root }, ws.ctx());
    assert.match(r.content, /done/, r.content);
    assert.equal(fs.readFileSync(ws.at('bashrc'), 'utf8'), 'mine\nalias ll=ls\n', r.content);
    const w = await call(createWriteFileTool(), { path: 'bashrc', content: 'edited\n' }, ws.ctx());
    assert.equal(w.isError, false, w.content);
    assert.equal(fs.readFileSync(path.join(userHome, '.bashrc'), 'utf8'), 'edited\n');
  });
});
