import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { blobId } from '../../../src/core/checkpoint/objects';
import { ShadowRepo } from '../../../src/core/checkpoint/shadow';
import { swapPaths } from '../../support/swapper';

// A command's snapshot (`shadow.snapshot`) ran `git add -A` over the root, which reads by path:
// a command running beside it that exchanges a folder with a link to a folder outside made git
// list and read the folder outside, and its files — ones the sandbox hides from the command,
// under /run/user — were stored as blobs in the shadow repository (which the command can read
// in the store, and a rewind writes back into the workspace). An audit saw it within ~1,000
// snapshots (session 50). Git lists names now; every byte is read through the folder pinned
// from the root (decision 0097, amended in s51).

/** Files in the folder outside: each listing git makes through the link is that many reads that may follow it. */
const SECRETS = 300;

function objectsHold(gitDir: string, ids: readonly string[]): string[] {
  return ids.filter((id) => fs.existsSync(path.join(gitDir, 'objects', id.slice(0, 2), id.slice(2))));
}

describe('a checkpoint snapshot against a folder swapped for a link (decision 0097, s51)', function () {
  this.timeout(60_000);

  it('never stores the bytes of a file outside the root, however often the swap wins', async () => {
    const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-snapswap-')));
    try {
      const root = path.join(base, 'ws');
      const store = path.join(base, 'store');
      const outside = path.join(base, 'outside');
      fs.mkdirSync(path.join(root, 'sub'), { recursive: true });
      fs.mkdirSync(outside);
      const secrets: string[] = [];
      for (let i = 0; i < SECRETS; i++) {
        const bytes = Buffer.from(`SECRET ${i} outside the workspace\n`);
        secrets.push(blobId(bytes));
        // Names the folder inside has too (tracked files git sees "modified"), and names only outside.
        fs.writeFileSync(path.join(outside, `f${i}.txt`), bytes);
        fs.writeFileSync(path.join(outside, `only${i}.txt`), bytes);
        if (i < 12) fs.writeFileSync(path.join(root, 'sub', `f${i}.txt`), `inside ${i}\n`);
      }
      fs.symlinkSync(outside, path.join(root, 'alt'));
      const shadow = await ShadowRepo.open(store, root, 0);
      await shadow.snapshot(1 << 20);
      const s = swapPaths(path.join(root, 'sub'), path.join(root, 'alt'), 14_000);
      let snapshots = 0;
      let leaked: string[] = [];
      const end = Date.now() + 15_000;
      while (!s.done && Date.now() < end) {
        // A change in the root each time: git runs and walks it, whichever folder `sub` names.
        fs.writeFileSync(path.join(root, 'top.txt'), `change ${snapshots}\n`);
        await shadow.snapshot(1 << 20).catch(() => undefined);
        snapshots++;
        leaked = objectsHold(shadow.place.gitDir, secrets);
        if (leaked.length) break;
      }
      s.stop();
      const swaps = await s.swaps;
      assert.ok(snapshots >= 5, `enough snapshots raced the swapper (${snapshots}, ${swaps} swaps)`);
      assert.deepEqual(leaked, [], `after ${snapshots} snapshots, the shadow's objects hold no file from outside`);
      // Once the swapping stopped, a snapshot records the folder inside as it is.
      if (fs.lstatSync(path.join(root, 'sub')).isSymbolicLink()) {
        fs.renameSync(path.join(root, 'sub'), path.join(base, 'link'));
        fs.renameSync(path.join(root, 'alt'), path.join(root, 'sub'));
        fs.renameSync(path.join(base, 'link'), path.join(root, 'alt'));
      }
      const last = await shadow.snapshot(1 << 20);
      const listing = execFileSync('git', ['--git-dir', shadow.place.gitDir, 'ls-tree', '-r', last.tree], { encoding: 'utf8' });
      assert.match(listing, new RegExp(`${blobId(Buffer.from('inside 3\n'))}\tsub/f3.txt`));
      assert.doesNotMatch(listing, /only\d/);
    } finally {
      fs.rmSync(base, { recursive: true, force: true });
    }
  });
});
