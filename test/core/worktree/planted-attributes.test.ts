// Attack (session 54): a confined command cannot write `.git`, but it can write `.gitattributes`
// anywhere in the workspace, tracked or not. Arbor's worktree git ran the review's `git diff` and
// the apply's `git merge-tree` unconfined in the user's checkout, where git reads those files, and
// an attribute names which driver of the user's own git config runs: `diff=X` runs
// `diff.X.textconv`, `merge=X` runs `merge.X.driver` — on the host, with the network, on bytes the
// command chose (and the merge driver decided what the apply wrote). Git now runs both in the
// repository's git folder, with no work tree and so no `.gitattributes` (decision 0113).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { sandboxStatus } from '../../../src/core/tools/sandbox/detect';
import { run } from '../checkpoint/fixture';
import { ofType } from '../subagent/helpers';
import { read, results, worktreeWorld } from './fixture';

describe("a .gitattributes a command writes picks no driver of the user's git config for a review or an apply", () => {
  const w = worktreeWorld();
  let saved: string | undefined;
  let ran: string;

  before(async () => {
    const status = await sandboxStatus();
    if (!status.available) throw new Error(`These tests need bubblewrap, and ${status.reason}. Run "npm run setup:e2e" (it installs bubblewrap).`);
  });
  beforeEach(() => {
    // The user's own ~/.gitconfig: a textconv and a merge driver, as people keep them (exiftool, a lock-file merger).
    ran = path.join(w.base, 'host-ran');
    const textconv = path.join(w.base, 'textconv.sh');
    const merger = path.join(w.base, 'merge.sh');
    fs.writeFileSync(textconv, `#!/bin/sh\necho "textconv $1" >> '${ran}'\ncat "$1"\n`, { mode: 0o755 });
    fs.writeFileSync(merger, `#!/bin/sh\necho "merge $1" >> '${ran}'\ncp "$3" "$1"\n`, { mode: 0o755 });
    const config = path.join(w.base, 'user.gitconfig');
    fs.writeFileSync(config, `[diff "pretty"]\n\ttextconv = ${textconv}\n[merge "theirs"]\n\tdriver = ${merger} %A %O %B\n`);
    saved = process.env.GIT_CONFIG_GLOBAL;
    process.env.GIT_CONFIG_GLOBAL = config;
  });
  afterEach(() => {
    if (saved === undefined) delete process.env.GIT_CONFIG_GLOBAL;
    else process.env.GIT_CONFIG_GLOBAL = saved;
  });

  it('attack: a command writes .gitattributes naming them; the review and the apply run neither on the host, and the apply stays a conflict', async () => {
    w.script.on('root', { toolCalls: [{ id: 'c1', ...run("printf '* diff=pretty merge=theirs\\n' > .gitattributes && echo planted") }] }, { text: 'done' });
    await w.root.accept('[[root]] go');
    await w.t.h.settle();
    const planted = (await results(w, w.root.id)).find((r) => r.name === 'run_command');
    assert.match(planted?.content ?? '', /planted/, `the sandbox lets a command write .gitattributes: ${planted?.content}`);
    assert.equal(read(path.join(w.ws, '.gitattributes')), '* diff=pretty merge=theirs\n');

    w.script.on('c', { toolCalls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'one\nCHILD\n' } }] }, { text: 'edited' });
    const child = await w.t.h.subagents.start(w.root, 'spawn', { prompt: '[[c]] edit', label: 'edit', isolation: 'worktree' });
    await child.result;
    await child.dispose();

    const { files } = await w.t.h.worktrees.diff(child.id);
    const a = files.find((f) => f.path === 'a.txt');
    assert.match(a?.unified ?? '', /^\+CHILD$/m, 'the review shows the real change');
    assert.equal(fs.existsSync(ran) ? read(ran) : '', '', "the review ran a driver of the user's config, named by the command's .gitattributes, on the host");

    // The user changed the same line meanwhile: a conflict, which the planted merge driver would have "resolved" for the child.
    fs.writeFileSync(path.join(w.ws, 'a.txt'), 'one\nPARENT\n');
    const r = await w.t.h.worktrees.apply(child.id);
    assert.equal(fs.existsSync(ran) ? read(ran) : '', '', "the apply ran a driver of the user's config, named by the command's .gitattributes, on the host");
    assert.equal(r.applied, false, 'the conflict is reported, not resolved by a driver the command picked');
    assert.equal(read(path.join(w.ws, 'a.txt')), 'one\nPARENT\n');
    assert.deepEqual(
      ofType((await w.t.h.readSession(child.id)).events, 'worktree').map((e) => e.state),
      ['open'],
    );
  });
});
