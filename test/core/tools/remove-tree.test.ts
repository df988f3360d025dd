// `tools/remove-tree.ts`: a folder removed while something swaps a folder in it for a link to
// outside, again and again (a far node's agent whose close failed, decision 0114 amended in s57).
// `fs.rm`'s recursion lists a folder by path after its `rmdir` failed: swapped meanwhile, it lists
// and deletes through the link. Real files, a real swapper process (renameat2 exchange).
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { removeNodeFolder } from '../../../src/acp/released-nodes';
import { removeTree } from '../../../src/core/tools/remove-tree';
import { swapPaths } from '../../support/swapper';

describe('removeTree: nothing outside the folder is ever removed', () => {
  let dir: string;
  let outside: string;
  const VICTIMS = 40;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-remove-tree-'));
    outside = path.join(dir, 'outside');
    fs.mkdirSync(outside);
    for (let i = 0; i < VICTIMS; i++) fs.writeFileSync(path.join(outside, `victim-${i}`), 'the user’s own\n');
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** A node folder `wt` with a folder `d` of files and folders and a link `l` beside it to outside, made aside and renamed into place whole. */
  const fill = (wt: string) => {
    const staged = `${wt}.staged`;
    fs.mkdirSync(path.join(staged, 'd', 'inner'), { recursive: true });
    for (let i = 0; i < 60; i++) fs.writeFileSync(path.join(staged, 'd', `f-${i}`), 'x');
    for (let i = 0; i < VICTIMS; i++) fs.writeFileSync(path.join(staged, 'd', `victim-${i}`), 'the node’s copy\n');
    for (let i = 0; i < 20; i++) fs.writeFileSync(path.join(staged, 'd', 'inner', `g-${i}`), 'y');
    fs.symlinkSync(outside, path.join(staged, 'l'));
    fs.renameSync(staged, wt);
  };
  const intact = () => fs.readdirSync(outside).length === VICTIMS && fs.readFileSync(path.join(outside, 'victim-0'), 'utf8') === 'the user’s own\n';

  for (const [name, remove] of [
    ['removeTree', removeTree],
    ['removeNodeFolder', (wt: string) => void removeNodeFolder(wt)],
  ] as const) {
    it(`attack: ${name} while a folder in it is swapped for a link to outside, again and again`, async function () {
      this.timeout(120_000);
      // One swapper for every round: the node folder is made again at the same path each round.
      const wt = path.join(dir, 'node');
      fill(wt);
      const swapper = swapPaths(path.join(wt, 'd'), path.join(wt, 'l'), 60_000);
      let rounds = 0;
      let swapping = 0;
      try {
        const end = Date.now() + 10_000;
        while (Date.now() < end && rounds < 60) {
          if (!fs.existsSync(wt)) fill(wt);
          // Under way (python's start can take a while on a busy machine): `d` seen as the link once.
          const until = Date.now() + 5000;
          let seen = false;
          while (Date.now() < until && !(seen = fs.lstatSync(path.join(wt, 'd')).isSymbolicLink())) await new Promise((r) => setImmediate(r));
          if (seen) swapping++;
          for (let i = 0; fs.existsSync(wt); i++) {
            try {
              remove(wt);
            } catch (e) {
              // a removal the swaps kept failing: tried again
              if (i > 100) throw e;
            }
          }
          rounds++;
          assert.ok(intact(), `round ${rounds}: a file outside the folder was removed or changed through the swapped link`);
        }
      } finally {
        swapper.stop();
        await swapper.swaps;
      }
      assert.ok(rounds >= 10 && swapping >= rounds / 2, `the swapper was swapping in ${swapping} of ${rounds} rounds (the scenario)`);
    });
  }

  it('a link in place of the folder itself is unlinked, never followed', () => {
    const wt = path.join(dir, 'node');
    fs.symlinkSync(outside, wt);
    removeTree(wt);
    assert.ok(!fs.existsSync(wt), 'the link is gone');
    assert.ok(fs.lstatSync(outside).isDirectory());
    assert.ok(intact());
  });

  it('attack: a tree 5,000 folders deep (deeper than a recursion or 200 descriptors reach) is removed whole, with a link at its bottom never followed', () => {
    const wt = path.join(dir, 'node');
    fs.mkdirSync(wt);
    // As a command makes it: one name at a time, each made in the one before (past PATH_MAX by path).
    const maker = `
      const fs = require('fs');
      process.chdir(${JSON.stringify(wt)});
      for (let i = 0; i < 5000; i++) { fs.mkdirSync('d'); fs.writeFileSync('f', 'x'); process.chdir('d'); }
      fs.symlinkSync(${JSON.stringify(outside)}, 'out');`;
    execFileSync(process.execPath, ['-e', maker]);
    const module = require.resolve('../../../src/core/tools/remove-tree');
    // The remover with at most 200 descriptors (a window's extension host may have far fewer than this machine's).
    const remover = `ulimit -n 200 && exec "$0" -e "require(process.argv[1]).removeTree(process.argv[2])" "$1" "$2"`;
    execFileSync('/bin/sh', ['-c', remover, process.execPath, module, wt], { stdio: ['ignore', 'ignore', 'pipe'] });
    assert.ok(!fs.existsSync(wt), 'the whole tree is gone');
    assert.ok(intact(), 'nothing outside was touched');
  });

  it('attack: a tree 5,000 folders deep whose every folder its command took the write bit from is still removed whole by removeNodeFolder', function () {
    this.timeout(120_000);
    // Permissions bind only a user other than root: as root, the maker and the remover run as nobody.
    const asUser = process.getuid?.() === 0 ? ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'] : [];
    const home = path.join(dir, 'user');
    fs.mkdirSync(home);
    if (asUser.length > 0) {
      fs.chmodSync(dir, 0o711);
      fs.chownSync(home, 65534, 65534);
    }
    const wt = path.join(home, 'node');
    // As a command makes it: one name at a time, each in the one before, then every folder made read-only, bottom up.
    const maker = `
      const fs = require('fs');
      fs.mkdirSync(${JSON.stringify(wt)});
      process.chdir(${JSON.stringify(wt)});
      for (let i = 0; i < 5000; i++) { fs.mkdirSync('d'); fs.writeFileSync('f', 'x'); process.chdir('d'); }
      for (let i = 0; i < 5000; i++) { process.chdir('..'); fs.chmodSync('d', 0o555); }`;
    const module = require.resolve('../../../src/acp/released-nodes');
    const remover = 'const e = require(process.argv[1]).removeNodeFolder(process.argv[2]); if (e) { console.error(e.code, e.message); process.exit(1); }';
    const run = (script: string, ...args: string[]) => {
      const argv = [...asUser, process.execPath, '-e', script, ...args];
      execFileSync(argv[0], argv.slice(1), { stdio: ['ignore', 'ignore', 'pipe'] });
    };
    try {
      run(maker);
      assert.equal(fs.statSync(path.join(wt, 'd', 'd')).mode & 0o777, 0o555, 'the scenario: read-only folders');
      assert.doesNotThrow(() => run(remover, module, wt), 'removeNodeFolder said it could not remove the tree');
      assert.ok(!fs.existsSync(wt), 'the whole tree is gone');
      assert.ok(intact(), 'nothing outside was touched');
    } finally {
      if (fs.existsSync(wt)) removeTree(wt); // what a failure left (root: permissions do not bind it)
    }
  });

  it('removes files, links, FIFOs and nested folders; nothing at the path is success', () => {
    const wt = path.join(dir, 'node');
    fs.mkdirSync(path.join(wt, 'a', 'b', 'c'), { recursive: true });
    fs.writeFileSync(path.join(wt, 'a', 'b', 'c', 'f'), 'f');
    fs.symlinkSync(outside, path.join(wt, 'a', 'out'));
    fs.symlinkSync(path.join(outside, 'victim-0'), path.join(wt, 'a', 'b', 'file-link'));
    execFileSync('mkfifo', [path.join(wt, 'a', 'fifo')]);
    removeTree(wt);
    assert.ok(!fs.existsSync(wt));
    assert.ok(intact());
    removeTree(wt); // nothing there: fine
  });

  it('a folder without write permission is said (EACCES), and removeNodeFolder makes it writable and goes on', () => {
    if (process.getuid?.() === 0) {
      // root ignores permissions: what is checked then is that both remove it
      const wt = path.join(dir, 'node');
      fs.mkdirSync(path.join(wt, 'ro'), { recursive: true });
      fs.writeFileSync(path.join(wt, 'ro', 'f'), 'f');
      fs.chmodSync(path.join(wt, 'ro'), 0o500);
      assert.equal(removeNodeFolder(wt), undefined);
      assert.ok(!fs.existsSync(wt));
      return;
    }
    const wt = path.join(dir, 'node');
    fs.mkdirSync(path.join(wt, 'ro'), { recursive: true });
    fs.writeFileSync(path.join(wt, 'ro', 'f'), 'f');
    fs.chmodSync(path.join(wt, 'ro'), 0o500);
    assert.throws(() => removeTree(wt), { code: 'EACCES' });
    assert.equal(removeNodeFolder(wt), undefined);
    assert.ok(!fs.existsSync(wt));
  });
});
