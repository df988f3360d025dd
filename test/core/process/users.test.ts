import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { groupAlive } from '../../../src/core/process/group';
import { liveMembers, readStat } from '../../../src/core/process/proc-stat';
import { RemoteProcess } from '../../../src/core/remote/process';
import { runInGroup } from '../../../src/core/tools/command-process';
import { scriptConfinement } from '../../../src/core/workflow/confine';
import { Isolate } from '../../../src/core/workflow/isolate';

const until = async (pred: () => boolean, ms = 5000): Promise<boolean> => {
  for (const end = Date.now() + ms; !pred() && Date.now() < end; ) await new Promise((r) => setTimeout(r, 10));
  return pred();
};

/** How many processes of group `pgid` run (zombies left out). */
const running = (pgid: number): number => liveMembers(pgid)?.length ?? 0;

// Each program Arbor starts leads a group of its own, is stopped as a group, and is gone when the
// one zombie-aware question says so (src/core/process/, decision 0053).
describe('process groups: every user leads a group and stops it whole', function () {
  this.timeout(30_000);
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-groups-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('run_command: an aborted command and what it put in the background are killed, SIGTERM-proof ones too', async () => {
    const ac = new AbortController();
    const pidFile = path.join(dir, 'shell.pid');
    const env = { PATH: process.env.PATH ?? '' };
    const script = `trap '' TERM; sleep 30 & sleep 30 & echo $$ > '${pidFile}'; wait`;
    const outcome = runInGroup(
      { file: '/bin/sh', args: ['-c', script], command: script, cwd: dir, env, namespaced: false },
      { timeoutMs: 60_000, cap: 4096, killGraceMs: 300, lingerMs: 5000 },
      ac.signal,
    );
    let pgid = 0;
    assert.ok(await until(() => fs.existsSync(pidFile) && (pgid = Number(fs.readFileSync(pidFile, 'utf8'))) > 0 && running(pgid) === 3));
    assert.equal(readStat(pgid)?.pgrp, pgid, 'the shell leads its own group');
    ac.abort();
    assert.equal((await outcome).end, 'aborted');
    // SIGTERM is ignored by all three: only the SIGKILL follow-up, sent while the group still runs, ends them.
    assert.ok(await until(() => !groupAlive(pgid)), 'the group is gone');
    assert.equal(running(pgid), 0);
  });

  it('a remote program: stop returns once its group is gone, background members included', async () => {
    const p = new RemoteProcess({
      command: '/bin/sh',
      args: ['-c', 'sleep 30 & sleep 30 & wait'],
      cwd: dir,
      env: { PATH: process.env.PATH ?? '' },
      graceMs: 500,
    });
    const pgid = p.pid!;
    assert.ok(await until(() => running(pgid) === 3), 'the shell and its two sleeps run');
    assert.equal(p.groupAlive(), true);
    assert.equal(groupAlive(pgid), true);
    await p.stop();
    assert.equal(p.groupAlive(), false);
    assert.equal(running(pgid), 0, 'no member runs once stop returned');
  });

  for (const confined of [false, true]) {
    it(`the workflow script process${confined ? ' in bubblewrap' : ''}: it leads a group, and ended means the group is gone`, async () => {
      const c = confined ? (await scriptConfinement(undefined)).confinement : ({ kind: 'none', reason: 'unconfined on purpose' } as const);
      // bubblewrap is installed by the project's setup (npm test), as the confinement suite requires.
      assert.equal(c.kind, confined ? 'bubblewrap' : 'none');
      const iso = new Isolate({ onMessage: () => undefined, onBadMessage: () => undefined }, undefined, true, c);
      try {
        assert.equal(await iso.ready, true, `the script process started: ${iso.stderrTail}`);
        const pgid = iso.pid!;
        assert.equal(readStat(pgid)?.pgrp, pgid, 'it leads its own group');
        assert.equal(groupAlive(pgid), true);
        iso.kill();
        const { cause } = await iso.ended;
        assert.equal(cause, 'killed');
        assert.equal(groupAlive(pgid), false, 'nothing of the group runs once ended resolved');
        assert.equal(running(pgid), 0);
      } finally {
        // A run's process holds mocha open: one a failed assertion left would keep the run from ever ending.
        iso.kill();
        await iso.ended;
      }
    });
  }
});
