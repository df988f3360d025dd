import * as fs from 'node:fs';

/**
 * What /proc says about processes, enough to tell one process group from another that
 * reused its number (decision 0036): a process's start time (clock ticks since boot, field 22
 * of /proc/<pid>/stat) never changes and, with the boot id, names one process for good.
 */
export interface ProcStat {
  pid: number;
  /** One letter: R, S, D, Z (zombie)… */
  state: string;
  ppid: number;
  pgrp: number;
  session: number;
  /** Clock ticks after boot at which the process started. */
  startTime: number;
}

/** Where a recorded program ran: its group (= the leader's pid), the leader's start time and the boot it started in. */
export interface GroupIdentity {
  pgid: number;
  startTime: number;
  bootId: string;
}

/** /proc/<pid>/stat read, or undefined when the process is gone (or /proc cannot be read). */
export function readStat(pid: number): ProcStat | undefined {
  let text: string;
  try {
    text = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return undefined;
  }
  return parseStat(pid, text);
}

/** One stat line: `pid (comm) state ppid pgrp session … starttime …`. The comm may hold spaces and parentheses, so fields are read after the last ')'. */
export function parseStat(pid: number, text: string): ProcStat | undefined {
  const close = text.lastIndexOf(')');
  if (close < 0) return undefined;
  // Fields from 3 (state) on; starttime is field 22, i.e. index 19 here.
  const f = text.slice(close + 2).split(' ');
  const startTime = Number(f[19]);
  if (f.length < 20 || !Number.isFinite(startTime)) return undefined;
  return { pid, state: f[0], ppid: Number(f[1]), pgrp: Number(f[2]), session: Number(f[3]), startTime };
}

let boot: string | undefined;

/** This boot's id (/proc/sys/kernel/random/boot_id); '' where it cannot be read. */
export function bootId(): string {
  if (boot === undefined) {
    try {
      boot = fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    } catch {
      boot = '';
    }
  }
  return boot;
}

/**
 * When process `pid` started, in wall-clock ms: the boot time /proc gives (whole seconds, so up to
 * a second early) plus its start ticks (USER_HZ, 100 a second on Linux). Never later than the real
 * start while the clock was not stepped; undefined where /proc says nothing.
 */
export function startedAtMs(pid: number): number | undefined {
  const s = readStat(pid);
  if (!s) return undefined;
  let btime: number;
  try {
    btime = Number(/^btime (\d+)$/m.exec(fs.readFileSync('/proc/stat', 'latin1'))?.[1]);
  } catch {
    return undefined;
  }
  return Number.isFinite(btime) && btime > 0 ? btime * 1000 + s.startTime * 10 : undefined;
}

/** The identity of the group `pid` leads, read now (right after spawning it); undefined where /proc says nothing. */
export function groupIdentity(pid: number): GroupIdentity | undefined {
  const s = readStat(pid);
  return s ? { pgid: pid, startTime: s.startTime, bootId: bootId() } : undefined;
}

/** Every process /proc lists now (the ones that vanish while it is read are left out). */
export function allStats(): ProcStat[] | undefined {
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return undefined;
  }
  const out: ProcStat[] = [];
  for (const d of entries) {
    const c = d.charCodeAt(0);
    if (c < 48 || c > 57) continue;
    const s = readStat(Number(d));
    if (s) out.push(s);
  }
  return out;
}

/**
 * The members of group `pgid` that run (zombies left out: a killed program's helpers are
 * reparented to init and stay zombies until it reaps them, which a container's init may never
 * do; they run nothing). Undefined where /proc cannot be read.
 */
export function liveMembers(pgid: number): ProcStat[] | undefined {
  return allStats()?.filter((s) => s.pgrp === pgid && s.state !== 'Z');
}

/** Whether group `pgid` has a member that is not a zombie; where /proc cannot be read, true (signal 0's answer stands). */
export function groupHasLiveMember(pgid: number): boolean {
  const members = liveMembers(pgid);
  return members === undefined || members.length > 0;
}

/**
 * Whether group `id.pgid` is still the one recorded, so that killing it kills only what the
 * program started. The leader alive (or a zombie): its start time must be the recorded one. The
 * leader gone: a pid still used as a group id is never handed out again, so the members are ours
 * unless the whole group died and an unrelated program later got the same number and led a new
 * group with it; that one's members run in another session, or started before our leader did
 * (they were started by something older), and are refused. Another boot: never ours.
 */
export function sameGroup(id: GroupIdentity, members: readonly ProcStat[], leader: ProcStat | undefined = readStat(id.pgid)): boolean {
  if (id.bootId !== bootId()) return false;
  if (leader) return leader.pgrp === id.pgid && leader.startTime === id.startTime;
  return members.length > 0 && members.every((m) => m.pgrp === id.pgid && m.session === id.pgid && m.startTime >= id.startTime);
}

/** Every live descendant of `pid` (children first, then theirs), from /proc; empty where there is no /proc. */
export function descendantPids(pid: number | undefined): number[] {
  return pid === undefined ? [] : descendantsOf([pid]);
}

/** Every live descendant of any of `roots` (one read of /proc however many roots), roots excluded. */
export function descendantsOf(roots: readonly number[]): number[] {
  if (roots.length === 0) return [];
  const children = new Map<number, number[]>();
  for (const s of allStats() ?? []) {
    if (s.state === 'Z') continue;
    const list = children.get(s.ppid);
    if (list) list.push(s.pid);
    else children.set(s.ppid, [s.pid]);
  }
  const seen = new Set<number>(roots);
  const out: number[] = [];
  const queue = [...roots];
  while (queue.length > 0) {
    for (const c of children.get(queue.shift()!) ?? []) {
      if (seen.has(c)) continue;
      seen.add(c);
      out.push(c);
      queue.push(c);
    }
  }
  return out;
}

/** Whether a process this one can see runs in PID namespace `inode` (/proc/<pid>/ns/pid's inode; a scan of /proc). */
export function namespaceHasProcess(inode: number): boolean {
  let names: string[];
  try {
    names = fs.readdirSync('/proc');
  } catch {
    return false;
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (fs.statSync(`/proc/${name}/ns/pid`).ino === inode) return true;
    } catch {
      // exited meanwhile, or not ours to read
    }
  }
  return false;
}
