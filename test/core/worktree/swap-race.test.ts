import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { blobId } from '../../../src/core/checkpoint/objects';
import { workTreeOf } from '../../../src/core/worktree/work-tree';
import { swapPaths } from '../../support/swapper';
import { gitIn, initRepo } from './fixture';

// A child's base is the parent's files read into the repository's objects: in this process
// (`work-tree.ts`) or by `git add -A` (`snapshot.ts`, where the in-process base leaves it to
// git; `commitWorktree`, in the child's own folder). Both read by path, so a command running
// beside them that exchanges a folder with a link to a folder outside made them store files
// the sandbox hides from the command (under /run/user; here, the host's /tmp) in the
// repository — readable by the command in .git, checked out into the child's worktree. The
// audit saw it within 39 runs of `git add -A` (session 50). Now the in-process walk reads through
// folders held open from the top and git reads the workspace inside a sandbox with a command's
// view (decision 0097, amended in s51). The in-process walk is raced here (nothing outside this
// process can stop it at the harmful moment); git's confinement is checked without a race, for
// every moment at once, in `swap-confined.test.ts`.

/** Files in the folder outside: each listing made through the link is that many reads that may follow it. */
const SECRETS = 300;

describe('a child base against a folder swapped for a link (decision 0097, s51)', function () {
  this.timeout(60_000);
  let base: string;
  let ws: string;
  let secrets: string[];

  const held = () => secrets.filter((id) => fs.existsSync(path.join(ws, '.git', 'objects', id.slice(0, 2), id.slice(2))));

  beforeEach(() => {
    base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-baseswap-')));
    ws = path.join(base, 'ws');
    const outside = path.join(base, 'outside');
    fs.mkdirSync(path.join(ws, 'sub'), { recursive: true });
    fs.mkdirSync(outside);
    initRepo(ws);
    secrets = [];
    for (let i = 0; i < SECRETS; i++) {
      const bytes = Buffer.from(`SECRET ${i} outside the workspace\n`);
      secrets.push(blobId(bytes));
      fs.writeFileSync(path.join(outside, `f${i}.txt`), bytes);
      fs.writeFileSync(path.join(outside, `only${i}.txt`), bytes);
      if (i < 12) fs.writeFileSync(path.join(ws, 'sub', `f${i}.txt`), `inside ${i}\n`);
    }
    gitIn(ws, 'add', '-A');
    gitIn(ws, 'commit', '-qm', 'sub');
    fs.symlinkSync(outside, path.join(ws, 'alt'));
  });
  afterEach(() => fs.rmSync(base, { recursive: true, force: true }));

  /** Runs `read` over and over for `ms` while `sub` and `alt` are exchanged; how many runs, and the secrets the objects hold. */
  async function race(ms: number, read: () => Promise<unknown>): Promise<{ runs: number; leaked: string[] }> {
    const s = swapPaths(path.join(ws, 'sub'), path.join(ws, 'alt'), ms);
    let runs = 0;
    let leaked: string[] = [];
    const end = Date.now() + ms + 1000;
    while (!s.done && Date.now() < end && !leaked.length) {
      fs.writeFileSync(path.join(ws, 'top.txt'), `change ${runs}\n`);
      await read().catch(() => undefined); // (a walk may fail part way under the swaps: what it stored is what counts)
      runs++;
      leaked = held();
    }
    s.stop();
    await s.swaps;
    return { runs, leaked };
  }

  it('the in-process base never stores a file outside', async () => {
    const memo = { listings: new Map() };
    const objects = path.join(ws, '.git', 'objects');
    const { runs, leaked } = await race(5000, () =>
      workTreeOf({ top: ws, index: path.join(ws, '.git', 'index'), objects, excludes: [], excludeLines: [], memo, slackMs: 0 }),
    );
    assert.ok(runs >= 20, `enough bases raced the swapper (${runs})`);
    assert.deepEqual(leaked, [], `after ${runs} bases, the repository holds no file from outside`);
  });
});
