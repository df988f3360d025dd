import * as fs from 'node:fs';
import type { SessionEvent } from '../session/events';

/** What a program's command line holds, to tell its process from an unrelated one that reused the pid. */
const MARK: Record<string, string> = { codex: 'codex', 'claude-code': 'claude', 'dsh-sdk': 'arbor' };

/**
 * After a host crash a remote child's program may still run: its process group was detached
 * (decision 0036). For a turn the crash left open, kill the group its log recorded — only if
 * the group's leader still runs that program (`/proc/<pgid>/cmdline`). Returns the groups killed.
 */
export function reapOrphans(events: readonly SessionEvent[]): number[] {
  let turnOpen = false;
  let last: Extract<SessionEvent, { type: 'subagent/remote' }> | undefined;
  for (const e of events) {
    if (e.type === 'turn/start') {
      turnOpen = true;
      last = undefined;
    } else if (e.type === 'turn/end') turnOpen = false;
    else if (e.type === 'subagent/remote' && turnOpen) last = e;
  }
  if (!turnOpen || !last?.pgid) return [];
  let cmdline: string;
  try {
    cmdline = fs.readFileSync(`/proc/${last.pgid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return []; // gone already
  }
  if (!cmdline.includes(MARK[last.program] ?? last.program)) return [];
  try {
    process.kill(-last.pgid, 'SIGKILL');
    return [last.pgid];
  } catch {
    return [];
  }
}
