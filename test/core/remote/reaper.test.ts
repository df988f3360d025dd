import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { bootId, groupHasLiveMember, groupIdentity, liveMembers, readStat } from '../../../src/core/process/proc-stat';
import { reapOrphans } from '../../../src/core/remote/reaper';
import type { SessionEvent } from '../../../src/core/session/events';
import { killLeftovers, living } from '../../support/leftovers';

type Recorded = { pgid: number; startTime?: number; bootId?: string; program?: string };

/** A log a crash left open: the turn started, the program recorded, no turn/end. */
const openTurn = (r: Recorded): SessionEvent[] => [
  { seq: 0, at: '', type: 'turn/start', turnId: 't' } as SessionEvent,
  { seq: 1, at: '', type: 'subagent/remote', program: r.program ?? 'acp:leaver', externalId: 'x', ...r } as SessionEvent,
];

const until = async (pred: () => boolean, ms = 3000) => {
  for (const end = Date.now() + ms; !pred() && Date.now() < end; ) await new Promise((r) => setTimeout(r, 10));
  return pred();
};

// After a host crash (decision 0036): the group a log recorded is killed while any member lives,
// by the leader's start time and the boot — never a group that merely has the same number.
describe('remote: the reaper after a crash', function () {
  this.timeout(20_000);
  const token = `3602.${process.pid}${Date.now() % 1e7}`;
  const kids: ChildProcess[] = [];
  /** A detached group whose leader (sh) leaves at once, leaving a sleeper in the group; returns the group. */
  const leaderless = async (): Promise<{ pgid: number; leaderStart: number }> => {
    const sh = spawn('/bin/sh', ['-c', `sleep ${token} & exit 0`], { detached: true, stdio: 'ignore' });
    kids.push(sh);
    const leaderStart = readStat(sh.pid!)!.startTime;
    await new Promise((r) => sh.once('exit', r));
    assert.ok(await until(() => readStat(sh.pid!) === undefined), 'the leader is gone (reaped)');
    assert.equal(liveMembers(sh.pid!)!.length, 1, 'its sleeper still runs in the group');
    return { pgid: sh.pid!, leaderStart };
  };
  afterEach(() => {
    killLeftovers(token);
    for (const k of kids.splice(0))
      try {
        process.kill(-k.pid!, 'SIGKILL');
      } catch {
        /* gone */
      }
  });

  it('kills the recorded group while a member lives, though its leader is gone (acp:<name> included)', async () => {
    const { pgid, leaderStart } = await leaderless();
    assert.deepEqual(reapOrphans(openTurn({ pgid, startTime: leaderStart, bootId: bootId(), program: 'acp:leaver' })), [pgid]);
    assert.ok(await until(() => !groupHasLiveMember(pgid)), 'the sleeper is gone');
  });

  it('a pgid reused by an unrelated program survives: its leader started at another time', async () => {
    const other = spawn('sleep', [token], { detached: true, stdio: 'ignore' });
    kids.push(other);
    const now = groupIdentity(other.pid!)!;
    // The log recorded an earlier program that had the same number.
    assert.deepEqual(reapOrphans(openTurn({ pgid: other.pid!, startTime: now.startTime - 1, bootId: now.bootId })), []);
    assert.equal(living(token).length, 1, 'the unrelated program runs on');
  });

  it('a reused pgid whose leader is gone survives when its members are older than the recorded leader', async () => {
    const { pgid } = await leaderless();
    const member = liveMembers(pgid)![0];
    assert.deepEqual(reapOrphans(openTurn({ pgid, startTime: member.startTime + 100, bootId: bootId() })), []);
    assert.equal(groupHasLiveMember(pgid), true);
  });

  it('a group recorded in another boot is never touched', async () => {
    const { pgid, leaderStart } = await leaderless();
    assert.deepEqual(reapOrphans(openTurn({ pgid, startTime: leaderStart, bootId: 'another-boot' })), []);
    assert.equal(groupHasLiveMember(pgid), true);
  });

  it('a turn that ended leaves its group alone', async () => {
    const { pgid, leaderStart } = await leaderless();
    const events = [
      ...openTurn({ pgid, startTime: leaderStart, bootId: bootId() }),
      { seq: 2, at: '', type: 'turn/end', turnId: 't', stopReason: 'completed' } as SessionEvent,
    ];
    assert.deepEqual(reapOrphans(events), []);
    assert.equal(groupHasLiveMember(pgid), true);
  });

  it('an old log (no start time) keeps the check of the leader naming the program', async () => {
    const other = spawn('sleep', [token], { detached: true, stdio: 'ignore' });
    kids.push(other);
    assert.deepEqual(reapOrphans(openTurn({ pgid: other.pid!, program: 'codex' })), [], 'sleep is not codex');
    assert.equal(living(token).length, 1);
    assert.deepEqual(reapOrphans(openTurn({ pgid: other.pid!, program: 'sleep' })), [other.pid]);
    assert.ok(await until(() => living(token).length === 0));
  });
});
