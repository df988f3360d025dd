// Process groups for the scripts (code-server and Chromium in the UI tier, npm start): a small
// copy of src/core/process/ (group.ts, proc-stat.ts), kept here because these scripts run before
// anything is compiled (a fresh clone's `npm start` loads them, then builds). Same behaviour,
// proven by test/core/process/scripts-copy.test.ts, which asks both the same questions about the
// same real groups (decision 0053). Change one, change the other.
import { readdirSync, readFileSync } from 'node:fs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** "pid (comm) state ppid pgrp …" after the comm, which may hold spaces and parentheses. */
function statFields(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** Pids in process group `pgid`, zombies left out unless asked for; null where /proc cannot be read. */
export function groupMembers(pgid, { zombies = false } = {}) {
  let names;
  try {
    names = readdirSync('/proc');
  } catch {
    return null;
  }
  const out = [];
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    let fields;
    try {
      fields = statFields(name);
    } catch {
      continue; // exited while we looked
    }
    if (Number(fields[2]) === pgid && (zombies || fields[0] !== 'Z')) out.push(Number(name));
  }
  return out;
}

/**
 * Whether a process of group `pgid` still runs: signal 0 reaches it (or is refused: a member
 * that changed its user still runs), and /proc lists a member that is not a zombie (where /proc
 * cannot be read, signal 0's answer stands). As src/core/process/group.ts groupAlive.
 */
export function groupAlive(pgid) {
  if (!pgid || process.platform === 'win32') return false;
  try {
    process.kill(-pgid, 0);
  } catch (err) {
    if (err.code !== 'EPERM') return false;
  }
  const members = groupMembers(pgid);
  return members === null || members.length > 0;
}

/** `signal` to every member of group `pgid`; false when the group is gone. */
export function signalGroup(pgid, signal) {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false; // ESRCH: the group is already gone
  }
}

/** Resolves true once group `pgid` has no running process, false if it still has one after `ms`. */
export async function waitGroupGone(pgid, ms) {
  const deadline = Date.now() + ms;
  while (groupAlive(pgid)) {
    if (Date.now() >= deadline) return false;
    await sleep(100);
  }
  return true;
}

/**
 * Helpers orphaned by their group leader become zombies of PID 1 until it reaps them
 * (about a second here). Nothing runs any more; waiting briefly just keeps a `pgrep`
 * right after a test run clean. Never fails.
 */
export async function waitGroupReaped(pgid, ms = 3_000) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline && (groupMembers(pgid, { zombies: true })?.length ?? 0) > 0) await sleep(100);
}

/** The process group of `pid` ('self' for this process). */
export function pgidOf(pid) {
  return Number(statFields(pid)[2]);
}
