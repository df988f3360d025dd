import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { groupAlive, signalGroup, waitGroupGone } from '../../../src/core/process/group';
import { descendantPids, groupHasLiveMember, liveMembers, readStat } from '../../../src/core/process/proc-stat';
import { repoRoot } from '../../support/repo-root';

/** The scripts' copy (scripts/e2e/process-group.mjs): plain ESM, loaded through require(esm). */
interface ScriptsCopy {
  groupAlive(pgid: number): boolean;
  signalGroup(pgid: number, sig: NodeJS.Signals): boolean;
  groupMembers(pgid: number, opts?: { zombies?: boolean }): number[] | null;
  pgidOf(pid: number | 'self'): number;
}
const scripts = require(path.join(repoRoot(), 'scripts/e2e/process-group.mjs')) as ScriptsCopy;

/** The zombie child of `ppid`, once it has one (scanning /proc); undefined after 2 s. */
async function zombieChildOf(ppid: number): Promise<number | undefined> {
  for (let i = 0; i < 200; i++) {
    for (const d of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(d)) continue;
      const s = readStat(Number(d));
      if (s?.state === 'Z' && s.ppid === ppid) return s.pid;
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  return undefined;
}

const until = async (pred: () => boolean, ms = 3000): Promise<boolean> => {
  for (const end = Date.now() + ms; !pred() && Date.now() < end; ) await new Promise((r) => setTimeout(r, 10));
  return pred();
};

// One behaviour for every program Arbor starts (decision 0053): a group counts as alive while a
// member runs — zombies run nothing — and a stop signals the whole group. The scripts' copy
// answers every question the same way on the same real processes.
describe('process groups: zombie-aware liveness and group kill (core and the scripts copy)', function () {
  this.timeout(20_000);
  const kids: ChildProcess[] = [];
  afterEach(() => {
    for (const k of kids.splice(0)) if (k.pid) signalGroup(k.pid, 'SIGKILL');
  });

  it('a group whose only member is a zombie is gone, though signal 0 still reaches it', async () => {
    // The zombie leads a session (and group) of its own; its parent execs `sleep` and never reaps it,
    // as an init that reaps late (a container's, a micro-VM's) leaves a killed program's helpers.
    const parent = spawn('sh', ['-c', 'setsid sh -c "exit 0" & exec sleep 10'], { stdio: 'ignore', detached: true });
    kids.push(parent);
    const zombie = await zombieChildOf(parent.pid!);
    assert.ok(zombie, 'the zombie appeared');
    assert.equal(readStat(zombie)?.pgrp, zombie, 'it leads its own group');
    assert.doesNotThrow(() => process.kill(-zombie, 0), 'signal 0 reaches the group of a zombie');
    assert.equal(groupHasLiveMember(zombie), false);
    assert.equal(groupAlive(zombie), false);
    assert.equal(await waitGroupGone(zombie, 0), true);
    assert.equal(scripts.groupAlive(zombie), false, 'the scripts copy agrees');
    assert.deepEqual(scripts.groupMembers(zombie), [], 'the scripts copy leaves zombies out');
    assert.deepEqual(scripts.groupMembers(zombie, { zombies: true }), [zombie], 'unless asked for them');
  });

  it('a group with a running member other than its leader is alive; a SIGKILL to the group ends every member', async () => {
    const leader = spawn('sh', ['-c', 'sleep 30 & wait'], { stdio: 'ignore', detached: true });
    kids.push(leader);
    const pgid = leader.pid!;
    assert.ok(await until(() => (liveMembers(pgid)?.length ?? 0) === 2), 'the shell and its sleep run');
    const [sleeper] = descendantPids(pgid);
    assert.ok(sleeper, 'the shell has a child');
    assert.equal(readStat(sleeper)?.pgrp, pgid, 'in the same group');
    assert.equal(groupAlive(pgid), true);
    assert.equal(scripts.groupAlive(pgid), true, 'the scripts copy agrees');
    assert.equal(scripts.pgidOf(sleeper), pgid);
    assert.deepEqual(
      scripts.groupMembers(pgid)?.sort(),
      liveMembers(pgid)
        ?.map((m) => m.pid)
        .sort(),
    );

    assert.equal(signalGroup(pgid, 'SIGKILL'), true);
    assert.equal(await waitGroupGone(pgid, 3000), true, 'the group is gone');
    assert.equal(readStat(sleeper) === undefined || readStat(sleeper)?.state === 'Z', true, 'the member, not only the leader, was killed');
    assert.equal(scripts.groupAlive(pgid), false, 'the scripts copy agrees');
  });

  it('the scripts copy signals the whole group too', async () => {
    const leader = spawn('sh', ['-c', 'sleep 30 & wait'], { stdio: 'ignore', detached: true });
    kids.push(leader);
    const pgid = leader.pid!;
    assert.ok(await until(() => (liveMembers(pgid)?.length ?? 0) === 2));
    assert.equal(scripts.signalGroup(pgid, 'SIGKILL'), true);
    assert.equal(await waitGroupGone(pgid, 3000), true, 'every member is gone');
  });

  it('no group: both say so (a pid that leads none, and no pid at all)', () => {
    assert.equal(groupAlive(undefined), false);
    assert.equal(signalGroup(undefined, 'SIGKILL'), false);
    // This process runs in the test runner's group, which it does not lead.
    assert.notEqual(scripts.pgidOf('self'), process.pid);
    assert.equal(groupAlive(process.pid), false);
    assert.equal(scripts.groupAlive(process.pid), false);
  });

  it('descendantPids follows a command into a new session (setsid), where a group kill does not reach', async () => {
    const leader = spawn('sh', ['-c', 'setsid sleep 30 & wait'], { stdio: 'ignore', detached: true });
    kids.push(leader);
    let found: number[] = [];
    assert.ok(await until(() => (found = descendantPids(leader.pid!).filter((p) => readStat(p)?.pgrp !== leader.pid)).length === 1));
    try {
      assert.notEqual(readStat(found[0]!)?.session, leader.pid, 'it left the session');
    } finally {
      process.kill(found[0]!, 'SIGKILL');
    }
  });
});
