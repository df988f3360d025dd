// A folder the child made a file, or a file it made a folder (decision 0060, amended in s57): the
// apply removes what the child removed first (each checked as any removal), then the emptied
// folder, then writes the file — and refuses, changing nothing, when the folder holds anything of
// the user's the child's change does not remove. Never through a link, whoever planted it.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DEFAULT_BWRAP } from '../../../src/core/tools/sandbox/detect';
import { WorktreeError } from '../../../src/core/worktree/git';
import { mergeIntoWorkingTree } from '../../../src/core/worktree/merge';
import { childThatRan, gitIn, placeOf, read, worktreeWorld } from './fixture';

// The module object itself (not a namespace copy): merge.ts reads `fsp.rm` at each call.
import fsp = require('node:fs/promises');

describe('worktree apply: a folder the child made a file, and a file it made a folder', () => {
  const w = worktreeWorld();
  const at = (...p: string[]) => path.join(w.ws, ...p);

  /** Files committed in the workspace (the child's base holds them). */
  function committed(files: Record<string, string>): void {
    for (const [p, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(at(p)), { recursive: true });
      fs.writeFileSync(at(p), text);
    }
    gitIn(w.ws, 'add', '-A');
    gitIn(w.ws, 'commit', '-qm', 'files');
  }

  const child = (command: string) => childThatRan(w, command);

  it('a folder made a file applies: its entries removed, the folder gone, the file written', async () => {
    committed({ 'dir/x.txt': 'x\n', 'dir/y.txt': 'y\n' });
    const id = await child('rm -r dir && echo now a file > dir');
    const r = await w.t.h.worktrees.apply(id);
    assert.equal(r.applied, true, JSON.stringify(r));
    assert.deepEqual(r.applied && [...r.files].sort(), ['dir', 'dir/x.txt', 'dir/y.txt']);
    assert.equal(fs.lstatSync(at('dir')).isFile(), true);
    assert.equal(read(at('dir')), 'now a file\n');
    assert.equal((await w.t.h.worktrees.list())[0].state, 'applied');
  });

  it('nested folders: a folder of folders (an empty one of the user’s among them) made a file, and a folder in a folder that stays', async () => {
    committed({ 'dir/x.txt': 'x\n', 'dir/sub/deep/y.txt': 'y\n', 'keep/inner/z.txt': 'z\n', 'keep/stay.txt': 'stays\n' });
    const id = await child('rm -r dir keep/inner && echo file > dir && echo inner file > keep/inner');
    fs.mkdirSync(at('dir', 'sub', 'empty')); // an empty folder holds nothing to lose: it goes with its folder, as with git's checkout
    const r = await w.t.h.worktrees.apply(id);
    assert.equal(r.applied, true, JSON.stringify(r));
    assert.equal(read(at('dir')), 'file\n');
    assert.equal(read(at('keep', 'inner')), 'inner file\n');
    assert.equal(read(at('keep', 'stay.txt')), 'stays\n');
  });

  it('a file made a nested folder applies: the file removed, then the folder’s entries written', async () => {
    const id = await child('rm keep.txt && mkdir -p keep.txt/b/c && echo in > keep.txt/b/c/in.txt && echo top > keep.txt/top.txt');
    const r = await w.t.h.worktrees.apply(id);
    assert.equal(r.applied, true, JSON.stringify(r));
    assert.equal(read(at('keep.txt', 'b', 'c', 'in.txt')), 'in\n');
    assert.equal(read(at('keep.txt', 'top.txt')), 'top\n');
  });

  it('the user’s edit under the folder since the worktree was made refuses it, naming the file; nothing changes', async () => {
    committed({ 'dir/x.txt': 'x\n', 'dir/y.txt': 'y\n' });
    const id = await child('rm -r dir && echo now a file > dir && echo added > added.txt');
    fs.writeFileSync(at('dir', 'y.txt'), 'y, and the user’s line\n');
    const r = await w.t.h.worktrees.apply(id);
    assert.ok(!r.applied, JSON.stringify(r));
    const said = r.conflicts.find((c) => c.path === 'dir');
    assert.match(
      said?.message ?? JSON.stringify(r),
      /dir is a folder in the workspace that the child made a file, and the workspace changed dir\/y\.txt in it.*Move it out of dir.*then apply again/,
    );
    assert.equal(read(at('dir', 'y.txt')), 'y, and the user’s line\n');
    assert.equal(read(at('dir', 'x.txt')), 'x\n', 'the unchanged entry is not removed either');
    assert.equal(fs.existsSync(at('added.txt')), false, 'nothing of the clean part either');
    assert.equal((await w.t.h.worktrees.list())[0].state, 'open');
  });

  it('a file the user keeps in the folder out of git (ignored) refuses it, naming that file and what to do; nothing changes', async () => {
    committed({ '.gitignore': '*.log\n', 'dir/x.txt': 'x\n' });
    fs.writeFileSync(at('dir', 'build.log'), 'the user’s log\n');
    const id = await child('rm -r dir && echo now a file > dir && echo added > added.txt');
    const r = await w.t.h.worktrees.apply(id);
    assert.ok(!r.applied, JSON.stringify(r));
    assert.deepEqual(
      r.conflicts.map((c) => c.path),
      ['dir'],
    );
    assert.match(
      r.conflicts[0].message,
      /dir is a folder in the workspace that the child made a file, and it holds dir\/build\.log.*Move it out of dir.*then apply again/,
    );
    assert.equal(read(at('dir', 'build.log')), 'the user’s log\n');
    assert.equal(read(at('dir', 'x.txt')), 'x\n');
    assert.equal(fs.existsSync(at('added.txt')), false);
  });

  it('a file the user made in the folder (not ignored) after the worktree refuses it; nothing changes', async () => {
    committed({ 'dir/x.txt': 'x\n' });
    const id = await child('rm -r dir && echo now a file > dir');
    fs.writeFileSync(at('dir', 'notes.txt'), 'the user’s notes\n');
    const r = await w.t.h.worktrees.apply(id);
    assert.ok(!r.applied, JSON.stringify(r));
    assert.deepEqual(
      r.conflicts.map((c) => c.path),
      ['dir'],
    );
    assert.match(r.conflicts[0].message, /the workspace changed dir\/notes\.txt in it since the worktree was made.*apply again/);
    assert.equal(read(at('dir', 'notes.txt')), 'the user’s notes\n');
    assert.equal(read(at('dir', 'x.txt')), 'x\n');
  });

  it('the user’s edit of a file the child made a folder refuses it, naming the file; nothing changes', async () => {
    const id = await child('rm keep.txt && mkdir keep.txt && echo in > keep.txt/in.txt');
    fs.writeFileSync(at('keep.txt'), 'the user’s keep\n');
    const r = await w.t.h.worktrees.apply(id);
    assert.ok(!r.applied, JSON.stringify(r));
    const said = r.conflicts.find((c) => c.path === 'keep.txt' && /made a folder/.test(c.message));
    assert.match(
      said?.message ?? JSON.stringify(r),
      /keep\.txt is a file in the workspace that the child made a folder.*Move keep\.txt aside.*then apply again/,
    );
    assert.equal(read(at('keep.txt')), 'the user’s keep\n');
  });

  it('attack: the child made the folder a link to a folder outside; the link is written and nothing outside is touched', async () => {
    committed({ 'dir/x.txt': 'x\n', 'dir/y.txt': 'y\n' });
    const outside = path.join(w.base, 'outside');
    fs.mkdirSync(outside);
    fs.writeFileSync(path.join(outside, 'x.txt'), 'x\n'); // the same names and bytes: a removal through the link would pass any content check
    fs.writeFileSync(path.join(outside, 'y.txt'), 'y\n');
    const id = await child(`rm -r dir && ln -s ${outside} dir`);
    const r = await w.t.h.worktrees.apply(id);
    assert.equal(r.applied, true, JSON.stringify(r));
    assert.equal(fs.readlinkSync(at('dir')), outside);
    assert.deepEqual(fs.readdirSync(outside).sort(), ['x.txt', 'y.txt'], 'nothing outside the workspace removed');
    assert.equal(read(path.join(outside, 'x.txt')), 'x\n');
  });

  it('attack: the folder swapped for a link to a folder outside after the check; nothing outside is removed, the apply stops saying so', async () => {
    committed({ 'dir/x.txt': 'x\n', 'dir/y.txt': 'y\n' });
    const id = await child('rm -r dir && echo now a file > dir');
    await w.t.h.worktrees.keep(id); // its commit on its branch, merged here by hand with a swap between the check and the writes
    const { base, branch } = await placeOf(w, id);
    const head = gitIn(w.ws, 'rev-parse', branch).trim();
    const outside = path.join(w.base, 'outside');
    fs.mkdirSync(outside);
    fs.writeFileSync(path.join(outside, 'x.txt'), 'x\n');
    fs.writeFileSync(path.join(outside, 'y.txt'), 'y\n');
    const swap = async () => {
      fs.renameSync(at('dir'), path.join(w.base, 'moved-away'));
      fs.symlinkSync(outside, at('dir'));
    };
    await assert.rejects(
      () => mergeIntoWorkingTree(w.ws, base, head, [at('.arbor')], DEFAULT_BWRAP, swap),
      (e: unknown) => e instanceof WorktreeError && e.code === 'UNSAFE_PATH' && /dir\/x\.txt/.test(e.message),
    );
    assert.deepEqual(fs.readdirSync(outside).sort(), ['x.txt', 'y.txt'], 'nothing outside the workspace removed');
    assert.equal(fs.readlinkSync(at('dir')), outside, 'the link itself is left (written over by nothing)');
  });

  /** The child made `dir` (x.txt, sub/y.txt) a file; kept, so it can be merged here by hand with a hook in the middle. */
  async function keptFolderToFile(): Promise<{ base: string; head: string }> {
    committed({ 'dir/x.txt': 'x\n', 'dir/sub/y.txt': 'y\n' });
    const id = await child('rm -r dir && echo now a file > dir');
    await w.t.h.worktrees.keep(id);
    const { base, branch } = await placeOf(w, id);
    return { base, head: gitIn(w.ws, 'rev-parse', branch).trim() };
  }

  it('attack: the emptied folder swapped for a link to a folder outside after its entries were removed: the link is written over, never followed', async () => {
    const { base, head } = await keptFolderToFile();
    const outside = path.join(w.base, 'outside');
    fs.mkdirSync(path.join(outside, 'sub'), { recursive: true });
    const rm = fsp.rm;
    fsp.rm = async (p: Parameters<typeof rm>[0], o?: Parameters<typeof rm>[1]) => {
      await rm(p, o);
      if (path.basename(String(p)) === 'x.txt') {
        fs.renameSync(at('dir'), path.join(w.base, 'moved-away')); // (dir/x.txt is the last removal in git's order)
        fs.symlinkSync(outside, at('dir'));
      }
    };
    try {
      const r = await mergeIntoWorkingTree(w.ws, base, head, [at('.arbor')], DEFAULT_BWRAP);
      assert.equal(r.ok, true, JSON.stringify(r));
    } finally {
      fsp.rm = rm;
    }
    assert.equal(fs.statSync(path.join(outside, 'sub')).isDirectory(), true, 'the empty folder outside is not removed');
    assert.equal(fs.lstatSync(at('dir')).isFile(), true, 'the link itself replaced by the file');
    assert.equal(read(at('dir')), 'now a file\n');
  });

  it('attack: a folder in the emptied folder swapped for a link while it is removed: the link is never followed, nothing outside is removed, the apply stops saying so', async () => {
    const { base, head } = await keptFolderToFile();
    // Outside: an empty folder `deep`, which removing the emptied folders by path would reach through `dir/sub`.
    const outside = path.join(w.base, 'outside');
    fs.mkdirSync(path.join(outside, 'deep'), { recursive: true });
    const rm = fsp.rm;
    const readdir = fsp.readdir;
    let removed = false;
    let swapped = false;
    fsp.rm = async (p: Parameters<typeof rm>[0], o?: Parameters<typeof rm>[1]) => {
      await rm(p, o);
      if (path.basename(String(p)) === 'x.txt') removed = true; // (the last removal in git's order)
    };
    // The listing of `dir` as its removal reads it, then `dir/sub` exchanged for a link before it is entered.
    (fsp as { readdir: unknown }).readdir = async (p: string, o?: unknown) => {
      const listed = await (readdir as (p: string, o?: unknown) => Promise<unknown[]>)(p, o);
      if (removed && !swapped && listed.some((d) => (typeof d === 'string' ? d : (d as fs.Dirent).name) === 'sub')) {
        swapped = true;
        fs.renameSync(at('dir', 'sub'), path.join(w.base, 'moved-away'));
        fs.symlinkSync(outside, at('dir', 'sub'));
      }
      return listed;
    };
    try {
      await assert.rejects(
        () => mergeIntoWorkingTree(w.ws, base, head, [at('.arbor')], DEFAULT_BWRAP),
        (e: unknown) =>
          e instanceof WorktreeError && e.code === 'PARTIAL' && /2 of 3 file\(s\) were written.*dir\/sub.*nothing more was written/s.test(e.message),
      );
    } finally {
      fsp.rm = rm;
      fsp.readdir = readdir;
    }
    assert.equal(swapped, true, 'the swap came');
    assert.equal(fs.statSync(path.join(outside, 'deep')).isDirectory(), true, 'the folder outside is not removed');
    assert.equal(fs.readlinkSync(at('dir', 'sub')), outside, 'the link is left as it is');
    assert.equal(fs.lstatSync(at('dir')).isDirectory(), true, 'the folder stays: no file written over it');
  });
});
