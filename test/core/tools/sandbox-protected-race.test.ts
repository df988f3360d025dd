// A protected path swapped for a link while the sandbox is set up (decision 0103, amended in
// session 48). bubblewrap binds `--ro-bind sub/.git sub/.git` by path, following links at both
// ends: a command that made `sub/.git` in its own run swaps it with a link to a decoy folder of the
// workspace (renameat2 RENAME_EXCHANGE every 2 ms; a review won it on about half the commands); a
// sandbox set up while the link is in place gets the decoy read-only and the real `sub/.git`
// writable. The mount check only looked for writable mounts outside the workspace, so such a
// sandbox ran its commands, and a resident raced that way served every later command of its state.
// Here the race is won every time: the bubblewrap the sandbox starts is a wrapper that puts the
// link in place just before bubblewrap runs (after Arbor's walk) and the folder back a moment later.
// (While a racing command runs, commands started meanwhile can still get its repository writable
// another way: a walk that meets the link or a rename sees no `.git` there to protect. That is the
// README's "protected from the next command on", once the command that made it has ended.)
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createRunCommandTool } from '../../../src/core/tools/run-command';
import { CommandSandbox } from '../../../src/core/tools/sandbox/command-sandbox';
import { ResidentPool } from '../../../src/core/tools/sandbox/residents';
import { zygotePath } from '../../../src/core/tools/sandbox/zygote-path';
import { call, skipWithoutSandbox, waitUntil } from './fixture';

describe('a protected path swapped for a link while a sandbox is set up (decision 0103, amended)', function () {
  this.timeout(60_000);
  const cleanups: (() => void)[] = [];

  before(async function () {
    await skipWithoutSandbox(this);
  });
  afterEach(() => {
    for (const c of cleanups.splice(0)) c();
  });

  for (const residents of [true, false]) {
    it(`no command ${residents ? 'in a resident' : 'in a bubblewrap of its own'} set up while sub/.git was a link writes into the real sub/.git`, async function () {
      const zygote = zygotePath();
      if (residents && !zygote) this.skip();
      const base = fs.mkdtempSync('/var/tmp/arbor-protected-race-');
      cleanups.push(() => fs.rmSync(base, { recursive: true, force: true }));
      const root = path.join(base, 'ws');
      fs.mkdirSync(path.join(root, '.git'), { recursive: true });
      fs.mkdirSync(path.join(root, 'sub/.git/hooks'), { recursive: true });
      fs.mkdirSync(path.join(root, 'decoy'));
      // The racer's move, at the worst moment: when `arm` exists, the link is put at sub/.git before
      // bubblewrap starts (in the foreground: under load a background move came too late), and the
      // folder is put back 1.5 s later, long after the mounts are made (by a process of its own
      // session: the refused command's process group is ended at once).
      const real = execFileSync('sh', ['-c', 'command -v bwrap'], { encoding: 'utf8' }).trim();
      const wrapper = path.join(base, `bwrap-race-${residents ? 'r' : 'c'}`);
      const s = path.join(root, 'sub');
      fs.writeFileSync(
        wrapper,
        `#!/bin/sh\nif [ -e ${base}/arm ]; then rm -f ${base}/arm; mv ${s}/.git ${s}/real && ln -s ../decoy ${s}/.git; setsid sh -c 'sleep 1.5; rm ${s}/.git; mv ${s}/real ${s}/.git' </dev/null >/dev/null 2>&1 & fi\nexec ${real} "$@"\n`,
        { mode: 0o755 },
      );
      const pool = residents && zygote ? new ResidentPool({ zygote }) : undefined;
      if (pool) cleanups.push(() => pool.closeAll());
      const sandbox = new CommandSandbox({ bwrapPath: wrapper, residents: pool ?? false });
      assert.equal((await sandbox.status()).available, true, 'the wrapper probes as bubblewrap');
      const tool = createRunCommandTool({ killGraceMs: 300, lingerMs: 300, sandbox });
      const ctx = {
        sessionId: 'S1',
        roots: [root],
        sandbox: 'workspace-write' as const,
        approvalPolicy: 'never' as const,
        signal: new AbortController().signal,
      };
      const at = (command: string) => call(tool, { command, timeoutMs: 30_000 }, ctx);
      // Waits for the folder to be back (it is, in a moment), then plants a hook.
      const plant = (tag: string) =>
        `i=0; while [ -L sub/.git ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; sleep 0.5; (echo x > sub/.git/hooks/${tag}) 2>/dev/null && echo PLANTED-${tag}; echo ran`;
      fs.writeFileSync(path.join(base, 'arm'), '');
      const raced = await at(plant('raced'));
      assert.ok(
        await waitUntil(() => fs.lstatSync(path.join(root, 'sub/.git'), { throwIfNoEntry: false })?.isDirectory() === true, 5000),
        'sub/.git is the folder again',
      );
      assert.doesNotMatch(raced.content, /PLANTED/, raced.content);
      assert.match(raced.content, /swapped for a link/, `the raced sandbox is refused: ${raced.content}`);
      // And the next commands (a resident of the same state would be the raced one) cannot either.
      for (let j = 0; j < 2; j++) {
        const after = await at(plant(`after-${j}`));
        assert.match(after.content, /ran/, `a command after the race runs: ${after.content}`);
        assert.doesNotMatch(after.content, /PLANTED/, after.content);
      }
      assert.deepEqual(fs.readdirSync(path.join(root, 'sub/.git/hooks')), [], 'hooks were written into sub/.git');
    });
  }
});
