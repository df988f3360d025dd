import { spawn } from 'node:child_process';
import { groupHasLiveMember, readStat } from './proc-stat';

// Process groups, the one way every program Arbor starts is stopped and watched: `run_command`'s
// commands (`tools/command-process.ts`), the remote programs (`remote/process.ts`) and the workflow
// script process (`workflow/isolate.ts`) each lead a group of their own (spawned `detached`), are
// signalled as a whole, and count as gone once no member of the group runs (decision 0053).

/** Sends `sig` to a process (or, negative, a group); false when it reached nothing (ESRCH) or was refused (EPERM). */
export function sendSignal(target: number, sig: NodeJS.Signals): boolean {
  try {
    process.kill(target, sig);
    return true;
  } catch {
    return false;
  }
}

/**
 * `sig` to every member of group `pgid`; false when the group is gone. Windows has no process
 * groups: the leader's tree is ended with `taskkill /T /F`, whatever the signal.
 */
export function signalGroup(pgid: number | undefined, sig: NodeJS.Signals): boolean {
  if (!pgid) return false;
  if (process.platform === 'win32') {
    try {
      spawn('taskkill', ['/pid', String(pgid), '/T', '/F'], { stdio: 'ignore', windowsHide: true }).on('error', () => undefined);
      return true;
    } catch {
      return false; // nothing left to kill, or no taskkill: the tree may outlive the call
    }
  }
  return sendSignal(-pgid, sig);
}

/**
 * Whether process `pid` runs: signal 0 reaches it (or is refused: it runs as another user) and
 * /proc does not show it a zombie — a crashed process its parent has not reaped yet answers
 * signal 0 but runs nothing. Where /proc cannot be read, signal 0's answer stands.
 */
export function processRuns(pid: number): boolean {
  return reached(pid) && readStat(pid)?.state !== 'Z';
}

/** Whether signal 0 reaches `target` (a pid, or a group as -pgid), or is refused (it runs as another user). */
function reached(target: number): boolean {
  try {
    process.kill(target, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Whether a process of group `pgid` still runs. Signal 0 alone is not enough: it reaches a group
 * whose only members are zombies — a killed program's helpers, reparented to an init that reaps
 * them late (a container's, a micro-VM's) — and those run nothing. So: signal 0 must reach the
 * group (or be refused: a member that changed its user still runs), and /proc must list a member
 * that is not a zombie (where /proc cannot be read, signal 0's answer stands). Windows: false
 * (there are no groups to ask about).
 */
export function groupAlive(pgid: number | undefined): boolean {
  if (!pgid || process.platform === 'win32') return false;
  return reached(-pgid) && groupHasLiveMember(pgid);
}

/** Resolves true once group `pgid` has no running process, false if it still has one after `ms`. */
export async function waitGroupGone(pgid: number | undefined, ms: number): Promise<boolean> {
  for (const end = Date.now() + ms; groupAlive(pgid); ) {
    if (Date.now() >= end) return false;
    await new Promise((r) => setTimeout(r, 10));
  }
  return true;
}
