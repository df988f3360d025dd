import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { blobId } from '../../../src/core/checkpoint/objects';
import { DEFAULT_BWRAP, sandboxStatus } from '../../../src/core/tools/sandbox/detect';
import { commitWorktree } from '../../../src/core/worktree/checkout';
import { snapshot } from '../../../src/core/worktree/snapshot';
import { SUBCOMMAND, shq, withPathFirst, writeGitWrapper } from '../../support/git-wrapper';
import { initRepo } from './fixture';

// Git's `add -A` of a child's base (`snapshot.ts`) and of a child's work (`commitWorktree`)
// reads the workspace by path, so a command beside it that exchanges a folder with a link
// (renameat2 RENAME_EXCHANGE) between git's listing and its reads made git store files the
// sandbox hides from the command (the host's /tmp, the user's session folder, Arbor's
// /proc/<pid>/environ) in the repository, where the command reads them (decision 0097, s51).
// The fix runs that git inside bubblewrap with a command's view (`worktree/confined.ts`): what a
// link leads it to is what the command could read itself. This checks that property without a
// race: a `git` first on PATH is the git Arbor runs; after the real one it reads through links
// already in place — as a git that lost the race reads — and stores what it read as a blob,
// where `git add` stores its blobs. Before the fix it ran on the host and stored the secrets.
// (`swap-race.test.ts` races the in-process base, which no git runs.)

const VIA = 'via link: ';

describe('a child base and its work read the workspace inside the sandbox (decision 0097, s51)', function () {
  this.timeout(60_000);
  let base: string;
  let outside: string;
  let ws: string;
  let bin: string;
  /** What a git that followed each link stores, by name: the outside ones must never be stored. */
  let secret: Map<string, string>;
  let probe: string;

  const held = (id: string) => fs.existsSync(path.join(ws, '.git', 'objects', id.slice(0, 2), id.slice(2)));

  before(async () => {
    const status = await sandboxStatus();
    if (!status.available) throw new Error(`These tests need bubblewrap, and ${status.reason}. Run "npm run setup:e2e" (it installs bubblewrap).`);
  });

  beforeEach(() => {
    // The workspace and the wrapper outside /tmp (the sandbox binds the workspace; the wrapper must run there too);
    // the secret under the host's /tmp, which every confined command has its own of.
    base = fs.realpathSync(fs.mkdtempSync('/var/tmp/arbor-confined-'));
    outside = fs.realpathSync(fs.mkdtempSync('/tmp/arbor-outside-'));
    ws = path.join(base, 'ws');
    bin = path.join(base, 'bin');
    fs.mkdirSync(path.join(ws, 'sub'), { recursive: true });
    initRepo(ws);
    fs.writeFileSync(path.join(outside, 'secret.txt'), `SECRET outside the workspace ${process.pid}\n`);
    fs.writeFileSync(path.join(ws, 'sub', 'probe.txt'), 'inside probe\n');
    fs.symlinkSync(outside, path.join(ws, 'alt'));
    fs.symlinkSync(`/proc/${process.pid}`, path.join(ws, 'altp')); // Arbor's own process (this one): its environ
    fs.symlinkSync('sub', path.join(ws, 'inlink'));
    const through = { tmp: 'alt/secret.txt', environ: 'altp/environ', inside: 'inlink/probe.txt' };
    const bytes = (p: string) => Buffer.concat([Buffer.from(VIA), fs.readFileSync(p)]);
    secret = new Map([
      ['the host /tmp file', blobId(bytes(path.join(outside, 'secret.txt')))],
      ["Arbor's environ", blobId(bytes(`/proc/${process.pid}/environ`))],
    ]);
    probe = blobId(bytes(path.join(ws, 'sub', 'probe.txt')));
    // After a git that reads the workspace's files: a marker that it ran where it stores objects, then each link read whole and stored.
    writeGitWrapper(
      bin,
      `"$REAL" "$@"
rc=$?
${SUBCOMMAND}
case "$sub" in add|status|stash|hash-object|update-index)
  printf 'ran: %s\\n' "$sub" | "$REAL" hash-object -w --stdin >/dev/null 2>&1
  for t in ${Object.values(through).map(shq).join(' ')}; do
    { printf '%s' ${shq(VIA)}; cat "$t" 2>/dev/null; } | "$REAL" hash-object -w --stdin >/dev/null 2>&1
  done ;;
esac
exit $rc`,
    );
  });
  afterEach(() => {
    fs.rmSync(base, { recursive: true, force: true });
    fs.rmSync(outside, { recursive: true, force: true });
  });

  function check(what: string): void {
    assert.ok(held(blobId(Buffer.from('ran: add\n'))), `the git Arbor ran for ${what} was the wrapper, and it stored objects`);
    assert.ok(held(probe), `the wrapper read through a link inside the workspace (${what})`);
    const leaked = [...secret].filter(([, id]) => held(id)).map(([name]) => name);
    assert.deepEqual(leaked, [], `${what}: a git that follows a link outside stores none of it`);
  }

  it("git's base (`git add -A` on a copy of the index) reaches nothing outside the workspace through a link", async () => {
    const snap = await withPathFirst(bin, () => snapshot(ws, { bwrap: DEFAULT_BWRAP, excludes: [] }));
    assert.match(snap.tree, /^[0-9a-f]{40}$/);
    check("a child's base");
  });

  it("the child's work (`git add -A` in its folder) reaches nothing outside the workspace through a link", async () => {
    const place = { repo: ws, path: ws, root: ws, branch: 'main', base: '' };
    const head = await withPathFirst(bin, () => commitWorktree(place, 'work', DEFAULT_BWRAP));
    assert.match(head, /^[0-9a-f]{40}$/);
    check("a child's work");
  });
});
