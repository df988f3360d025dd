// A worktree's `git add -A` runs under the bubblewrap the deployment configured for its commands
// (decision 0097, amended in s52). It used to probe the default `bwrap` whatever was configured:
// a deployment that names another one (`commands.bwrapPath`, the CLI's ARBOR_BWRAP: a wrapper
// that adds its own confinement, a build of its own) confined its commands with it and ran the git
// that reads the workspace under another — or unconfined, where only the configured one runs.
// Here the configured one is a wrapper that writes down each run, then starts the real bubblewrap.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { sandboxStatus } from '../../../src/core/tools/sandbox/detect';
import { placeOf, worktreeWorld } from './fixture';

const write = (p: string, content: string) => ({ toolCalls: [{ name: 'write_file', arguments: { path: p, content } }] });

describe("a worktree's git runs under the configured bubblewrap (decision 0097, s52)", function () {
  this.timeout(120_000);
  const dir = path.join(os.tmpdir(), `arbor-bwrap-conf-${process.pid}`);
  const wrapper = path.join(dir, 'my-bwrap');
  const log = path.join(dir, 'runs.log');
  const w = worktreeWorld({ commands: { bwrapPath: wrapper } });

  before(async () => {
    const real = await sandboxStatus();
    assert.ok(real.available, `bubblewrap runs here (${real.available ? '' : real.reason}): the confined git needs it`);
    fs.mkdirSync(dir, { recursive: true });
    // Each run: the folder it was started in, then its arguments (`… -- git … add -A …` for a confined add).
    fs.writeFileSync(wrapper, `#!/bin/sh\nprintf '%s\\t%s\\n' "$PWD" "$*" >> '${log}'\nexec '${real.bwrap}' "$@"\n`, { mode: 0o755 });
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  beforeEach(() => fs.rmSync(log, { force: true }));

  let seen = 0;
  beforeEach(() => {
    seen = 0;
  });
  /** The folders the configured bubblewrap ran a `git add -A` in since the last call, without repeats. */
  const adds = (): string[] => {
    const all = (fs.existsSync(log) ? fs.readFileSync(log, 'utf8') : '')
      .split('\n')
      .filter((l) => / -- git .* add -A/.test(l))
      .map((l) => l.split('\t')[0]);
    const fresh = all.slice(seen);
    seen = all.length;
    return [...new Set(fresh)];
  };

  it("the base made by git, a child's view, its commit and the workspace's state before apply all run under it", async () => {
    // A .gitattributes leaves the base to git (`work-tree.ts` does not read attributes): the snapshot's `add -A`.
    fs.writeFileSync(path.join(w.ws, '.gitattributes'), '*.txt text\n');
    w.script.on('c', write('made.txt', 'by the child\n'), { text: 'done' });
    const run = await w.t.h.subagents.start(w.root, 'spawn', { prompt: '[[c]] write', label: 'c', isolation: 'worktree' });
    await run.result;
    await run.dispose();
    const place = await placeOf(w, run.id);
    assert.deepEqual(adds(), [w.ws], "the child's base: git's add -A of the parent's files, under the configured bubblewrap");

    const { files } = await w.t.h.worktrees.diff(run.id);
    assert.deepEqual(
      files.map((f) => f.path),
      ['made.txt'],
    );
    assert.deepEqual(adds(), [place.path], "the child's view for the diff");

    const r = await w.t.h.worktrees.apply(run.id);
    assert.deepEqual(r, { applied: true, files: ['made.txt'] });
    assert.deepEqual(adds(), [place.path, w.ws], "the child's commit, then the workspace before the merge");
  });
});
