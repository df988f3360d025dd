import * as fs from 'node:fs';
import { signalGroup } from '../process/group';
import { liveMembers, readStat, sameGroup } from '../process/proc-stat';
import type { SessionEvent } from '../session/events';

/** Logs written before start times were recorded: what the leader's command line holds. */
const MARK: Record<string, string> = { codex: 'codex', 'claude-code': 'claude', 'dsh-sdk': 'arbor' };

type RemoteEvent = Extract<SessionEvent, { type: 'subagent/remote' }>;

/**
 * After a host crash a remote child's program may still run (decision 0036): in a PID namespace
 * it died with the host (bwrap's --die-with-parent), in a bare process group it did not. For a
 * turn the crash left open, kill the group its log recorded while any member of it lives — the
 * leader may be gone — but only if the group is still that one: the leader's recorded start
 * time and boot (`sameGroup`), so a number reused by an unrelated program is never touched.
 * Every program kind records them, `acp:<name>` included. Returns the groups killed.
 */
export function reapOrphans(events: readonly SessionEvent[]): number[] {
  const last = lastOpenRemote(events);
  if (!last?.pgid) return [];
  if (last.startTime === undefined || last.bootId === undefined) return reapByCommandLine(last);
  const members = liveMembers(last.pgid);
  if (!members?.length) return []; // gone already (or /proc unreadable: nothing can be checked)
  if (!sameGroup({ pgid: last.pgid, startTime: last.startTime, bootId: last.bootId }, members, readStat(last.pgid))) return [];
  return kill(last.pgid);
}

/** The last `subagent/remote` of the turn the log leaves open (none when the last turn ended). */
function lastOpenRemote(events: readonly SessionEvent[]): RemoteEvent | undefined {
  let turnOpen = false;
  let last: RemoteEvent | undefined;
  for (const e of events) {
    if (e.type === 'turn/start') {
      turnOpen = true;
      last = undefined;
    } else if (e.type === 'turn/end') turnOpen = false;
    else if (e.type === 'subagent/remote' && turnOpen && !e.announcedBy) last = e;
  }
  return turnOpen ? last : undefined;
}

/** An old log (no start time): the group goes only while its leader runs and still names the program. */
function reapByCommandLine(last: RemoteEvent): number[] {
  let cmdline: string;
  try {
    cmdline = fs.readFileSync(`/proc/${last.pgid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return []; // gone already
  }
  return cmdline.includes(MARK[last.program] ?? last.program) ? kill(last.pgid!) : [];
}

function kill(pgid: number): number[] {
  return signalGroup(pgid, 'SIGKILL') ? [pgid] : [];
}
