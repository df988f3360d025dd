import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { blobId } from '../../../src/core/checkpoint/objects';
import { ShadowRepo } from '../../../src/core/checkpoint/shadow';
import { SUBCOMMAND, shq, withPathFirst, writeGitWrapper } from '../../support/git-wrapper';

// A command's snapshot (`shadow.snapshot`) ran `git add -A` over the root, which lists a folder
// and then reads its files by path: a command beside it that exchanged the folder with a link
// (renameat2 RENAME_EXCHANGE) in between made git read the folder the link names, and files the
// sandbox hides from the command (here the host's /tmp) were stored as blobs in the shadow
// repository (which the command reads in the store, and a rewind writes back into the
// workspace). An audit saw it within ~1,000 snapshots (session 50). Git lists names now; every
// byte is read here through the folder pinned from the root (decision 0097, amended in s51).
//
// No race: a `git` first on PATH is the git the snapshot runs, and it makes the exchange at the
// two moments where a reader has listed names and not yet read them — right after a listing git
// (`ls-files`) returns, so this process reads every listed name through the swapped folder, and
// inside a git that reads files, right after its first one (a clean filter it runs on those
// bytes), so git reads the rest through it. Each git puts the folder back as it starts. The
// links lead to a folder under the host's /tmp and to this process's /proc/self, where this
// process would read its own environ.

/** Names the folder inside and the folder outside share: each is a read through the link once it is swapped. */
const SHARED = 20;

describe('a checkpoint snapshot against a folder swapped for a link (decision 0097, s51)', function () {
  this.timeout(60_000);

  it('never stores the bytes of a file outside the root, whenever the folder is swapped', async () => {
    const base = fs.realpathSync(fs.mkdtempSync('/tmp/arbor-snapswap-'));
    try {
      const root = path.join(base, 'ws');
      const store = path.join(base, 'store');
      const outside = path.join(base, 'outside');
      const bin = path.join(base, 'bin');
      const swaps = path.join(base, 'swaps');
      fs.mkdirSync(path.join(root, 'sub'), { recursive: true });
      fs.mkdirSync(path.join(root, 'subp'));
      fs.mkdirSync(outside);
      const secrets = new Map<string, string>();
      for (let i = 0; i < SHARED; i++) {
        const bytes = Buffer.from(`SECRET ${i} outside the workspace\n`);
        secrets.set(blobId(bytes), `outside/only${i}.txt`);
        fs.writeFileSync(path.join(outside, `only${i}.txt`), bytes);
        fs.writeFileSync(path.join(outside, `f${i}.txt`), bytes);
        fs.writeFileSync(path.join(root, 'sub', `f${i}.txt`), `inside ${i}\n`);
      }
      secrets.set(blobId(fs.readFileSync('/proc/self/environ')), "this process's environ");
      fs.writeFileSync(path.join(root, 'subp', 'environ'), 'inside environ\n');
      fs.symlinkSync(outside, path.join(root, 'alt'));
      fs.symlinkSync('/proc/self', path.join(root, 'altp'));
      const shadow = await ShadowRepo.open(store, root, 0);
      await shadow.snapshot(1 << 20);

      // New and changed names in both folders: the next listing names them, and the swap comes after it.
      fs.writeFileSync(path.join(root, 'sub', '0swap.txt'), 'the first file git reads in sub\n');
      for (let i = 0; i < SHARED; i++) {
        fs.writeFileSync(path.join(root, 'sub', `only${i}.txt`), `inside only ${i}\n`);
        fs.writeFileSync(path.join(root, 'sub', `f${i}.txt`), `inside ${i}, changed\n`);
      }
      fs.writeFileSync(path.join(root, 'subp', 'environ'), 'inside environ, changed\n');
      fs.writeFileSync(path.join(root, 'top.txt'), 'change\n');

      const swap = path.join(base, 'swap.sh');
      const ex = (a: string, b: string) => `mv ${shq(a)} ${shq(`${a}.held`)} && mv ${shq(b)} ${shq(a)} && mv ${shq(`${a}.held`)} ${shq(b)}`;
      const pairs = [ex(path.join(root, 'sub'), path.join(root, 'alt')), ex(path.join(root, 'subp'), path.join(root, 'altp'))].join(' && ');
      // `swap.sh in`: the folders swapped for the links (once); `swap.sh back`: put back. As a clean filter it passes the bytes through.
      fs.writeFileSync(
        swap,
        `if [ "$1" = in ] && [ ! -L ${shq(path.join(root, 'sub'))} ]; then ${pairs} && echo in >> ${shq(swaps)}; fi
if [ "$1" = back ] && [ -L ${shq(path.join(root, 'sub'))} ]; then ${pairs}; fi
if [ "$1" = in ] && [ "$2" = filter ]; then exec cat; fi
exit 0`,
      );
      const attributes = path.join(base, 'attributes');
      fs.writeFileSync(attributes, 'sub/0swap.txt filter=arborswap\n');
      writeGitWrapper(
        bin,
        `sh ${shq(swap)} back
"$REAL" -c core.attributesFile=${shq(attributes)} -c filter.arborswap.clean=${shq(`sh ${shq(swap)} in filter`)} "$@"
rc=$?
${SUBCOMMAND}
if [ "$sub" = ls-files ]; then sh ${shq(swap)} in; fi
exit $rc`,
      );

      await withPathFirst(bin, () => shadow.snapshot(1 << 20));
      const made = fs.existsSync(swaps) ? fs.readFileSync(swaps, 'utf8').split('\n').filter(Boolean).length : 0;
      assert.ok(made >= 1, 'the folders were swapped for the links during the snapshot');
      const objects = path.join(shadow.place.gitDir, 'objects');
      const leaked = [...secrets].filter(([id]) => fs.existsSync(path.join(objects, id.slice(0, 2), id.slice(2)))).map(([, name]) => name);
      assert.deepEqual(leaked, [], `after ${made} swaps at the moments between a listing and its reads, the shadow holds nothing from outside`);

      // The folders back, a snapshot records them as they are.
      execFileSync('sh', [swap, 'back']);
      const last = await shadow.snapshot(1 << 20);
      const listing = execFileSync('git', ['--git-dir', shadow.place.gitDir, 'ls-tree', '-r', last.tree], { encoding: 'utf8' });
      assert.match(listing, new RegExp(`${blobId(Buffer.from('inside only 3\n'))}\tsub/only3.txt`));
      assert.match(listing, new RegExp(`${blobId(Buffer.from('inside environ, changed\n'))}\tsubp/environ`));
    } finally {
      fs.rmSync(base, { recursive: true, force: true });
    }
  });
});
