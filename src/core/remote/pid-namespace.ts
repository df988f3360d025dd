import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { HOST_PROGRAM_RULE } from '../process/host-program';
import { readStat } from '../process/proc-stat';
import { resolveProgram } from '../tools/sandbox/detect';

/**
 * A remote program's own PID namespace (decision 0036), made by bubblewrap: the program is the
 * first child of the namespace's init (bwrap's own), so when the program ends or is stopped the
 * init leaves and the kernel kills everything else in the namespace — `setsid` helpers and
 * daemons included, which a process-group kill misses. `--die-with-parent` takes the namespace
 * down when the host dies (kill -9). Only the PID namespace is new: `/` is bound as it is and
 * the network is shared, so the program sees the files and the network it would see anyway
 * (its own sandbox, if it has one, still applies inside).
 *
 * Signals sent to the bwrap process are not forwarded (bwrap 0.8 dies of SIGTERM and SIGINT,
 * and its death kills the namespace at once): a graceful step signals the group's other
 * members, which bwrap's children keep (it makes no session of its own).
 */
export type PidNamespace = { available: true; bwrap: string } | { available: false; reason: string };

/**
 * bwrap's `--proc` covers /proc/sys, /proc/sysrq-trigger, /proc/irq and /proc/bus with read-only
 * binds. Covered, the namespace's /proc is not "fully visible" to a user namespace made inside
 * it, so the kernel refuses a nested sandbox its own /proc (mnt_too_revealing): another Arbor
 * run as a child (dsh-sdk) could not start its commands' bubblewrap and refused every command.
 * This namespace is not a sandbox (`/` is bound as it is), so the covers keep from the program
 * nothing it could not reach outside it: where it may unmount (root) they are lifted before the
 * program is exec'd; elsewhere the unmount fails quietly and they stay, as before. One `umount`
 * takes all four (it goes on past one it cannot lift): a process each cost ~4 ms of every
 * remote program's start.
 */
const LIFT_PROC_COVERS = 'umount /proc/sys /proc/sysrq-trigger /proc/irq /proc/bus 2>/dev/null;';

/**
 * A confined program's namespace carries read-only mounts (`namespace-mounts.ts`), and run as
 * root bubblewrap leaves every capability to it: the program, or a command it runs outside a
 * sandbox of its own (Claude Code's Bash), could `umount` them and write `.arbor/settings.json`
 * (decision 0036, amended s60). So once the covers are lifted it is exec'd through `setpriv` with
 * no capability left but CAP_SETFCAP: a nested sandbox (Codex's bubblewrap, another Arbor's) still
 * maps root in its user namespace (since Linux 5.12 that needs CAP_SETFCAP), and mounts copied into
 * a namespace it makes are locked there. A file capability it sets gives back no more than the
 * bounding set holds. Not root: bubblewrap gives the program no capability anyway.
 */
const DROP_CAPS = ['--bounding-set=-all,+setfcap', '--inh-caps=-all', '--ambient-caps=-all'];

/** util-linux's `setpriv`, found as bwrap is (outside what a confined command could write); undefined: not installed. */
function setprivPath(): string | undefined {
  const exe = resolveProgram('setpriv');
  return /^\/[\w./+-]+$/.test(exe) ? exe : undefined;
}

/** What the namespace's shell runs after lifting the covers: the program, through `setpriv` for a confined one run as root. */
function thenExec(confined: boolean): string {
  const setpriv = confined && process.getuid?.() === 0 ? setprivPath() : undefined;
  return setpriv ? ` exec '${setpriv}' ${DROP_CAPS.join(' ')} -- "$@"` : ' exec "$@"';
}

/**
 * The arguments bwrap gets before the program's own command line (a shell that lifts the covers,
 * then execs the program); `mounts`: what a confined program's namespace adds over `/` (its
 * protected paths and the store read-only, `namespace-mounts.ts`) — given, the program also keeps
 * no capability to lift them (`thenExec`).
 */
export function namespaceArgs(mounts?: readonly string[]): string[] {
  return [
    '--unshare-pid',
    '--die-with-parent',
    '--dev-bind',
    '/',
    '/',
    '--proc',
    '/proc',
    ...(mounts ?? []),
    '--',
    '/bin/sh',
    '-c',
    LIFT_PROC_COVERS + thenExec(mounts !== undefined),
    'arbor-pid-namespace',
  ];
}

/** Where bubblewrap is found: $ARBOR_BWRAP, or `bwrap` on PATH (as for Arbor's own commands). */
export const bwrapCommand = (env: NodeJS.ProcessEnv = process.env): string => env.ARBOR_BWRAP || 'bwrap';

const PROBE_TIMEOUT_MS = 10_000;
const cache = new Map<string, Promise<PidNamespace>>();

/**
 * Whether programs can get their own PID namespace here: probed once per bwrap file by running
 * `true` exactly as a program would be run. Unavailable (no bwrap, a kernel or container that
 * forbids namespaces), programs run in a process group only.
 */
export function pidNamespace(bwrap: string = bwrapCommand()): Promise<PidNamespace> {
  // Found as Arbor's own commands find it (`resolveProgram`: outside the folders a confined command could
  // write, none below the current folder), at each call: bwrap runs unconfined, and a call made before a
  // harness guarded its workspace must not pin what it found then.
  const exe = resolveProgram(bwrap);
  if (!exe.includes('/'))
    return Promise.resolve({ available: false, reason: `bubblewrap (${bwrap}) is not installed${bwrap.includes('/') ? '' : ` (${HOST_PROGRAM_RULE})`}` });
  let p = cache.get(exe);
  if (!p) {
    p = probe(exe);
    cache.set(exe, p);
  }
  return p;
}

function probe(bwrap: string): Promise<PidNamespace> {
  if (process.platform !== 'linux') return Promise.resolve({ available: false, reason: `bubblewrap exists only on Linux, not ${process.platform}` });
  return new Promise((resolve) => {
    let stderr = '';
    const child = spawn(bwrap, [...namespaceArgs(), '/bin/sh', '-c', 'exit 0'], { stdio: ['ignore', 'ignore', 'pipe'] });
    const timer = setTimeout(() => child.kill('SIGKILL'), PROBE_TIMEOUT_MS);
    child.stderr.on('data', (d: Buffer) => {
      if (stderr.length < 2000) stderr += d.toString();
    });
    child.on('error', (e: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve({
        available: false,
        reason: e.code === 'ENOENT' ? `bubblewrap (${bwrap}) is not installed` : `bubblewrap (${bwrap}) could not start: ${e.message}`,
      });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve({ available: true, bwrap });
      else
        resolve({
          available: false,
          reason: `bubblewrap (${bwrap}) cannot make a PID namespace here: ${stderr.trim().split('\n')[0] || (signal ? `killed by ${signal}` : `exit code ${code}`)}`,
        });
    });
  });
}

/** One line for a log: what stops a program's leftovers here. */
export function describePidNamespace(ns: PidNamespace): string {
  return ns.available
    ? `remote programs run in their own PID namespace (bubblewrap, ${ns.bwrap}): nothing they start outlives them`
    : `remote programs run without their own PID namespace (${ns.reason}): a stop kills their process group, but a helper that leaves the group (setsid) can outlive them. Install bubblewrap (or set $ARBOR_BWRAP) where user namespaces are allowed to close that gap`;
}

/** The `bwrap` a program's ProcessSpec gets: set where the namespace works, absent where it falls back to a process group. */
export async function namespaceSpec(): Promise<{ bwrap?: string }> {
  const ns = await pidNamespace();
  return ns.available ? { bwrap: ns.bwrap } : {};
}

/** The namespace's init as the host sees it: bwrap's child, pid 1 inside (its `NSpid` says so), and its start time. */
export interface NamespaceInit {
  pid: number;
  startTime: number;
}

/**
 * The init of the namespace bwrap `leader` made, read while the leader runs (after the program
 * has started: the init is the leader's only child); undefined when /proc does not show one that
 * is pid 1 of a namespace of its own.
 */
export function namespaceInit(leader: number): NamespaceInit | undefined {
  try {
    const children = fs.readFileSync(`/proc/${leader}/task/${leader}/children`, 'latin1').trim().split(' ');
    if (children.length !== 1 || !children[0]) return undefined;
    const pid = Number(children[0]);
    const nspid = /^NSpid:\s+(.*)$/m
      .exec(fs.readFileSync(`/proc/${pid}/status`, 'latin1'))?.[1]
      .trim()
      .split(/\s+/);
    const s = readStat(pid);
    return s && s.ppid === leader && nspid && nspid.length > 1 && nspid.at(-1) === '1' ? { pid, startTime: s.startTime } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether the namespace `init` led has ended, every process in it gone. The kernel does not let
 * a namespace's init finish dying until every other process of the namespace has been reaped
 * (`zap_pid_ns_processes`), so once the init is a zombie (or reaped: gone, or its number reused)
 * nothing of the namespace runs. Where its parent exits without reaping it and the machine's
 * init never does (a container's), that zombie stays in the program's group for good and only a
 * walk of all of /proc could tell the group apart from a running one; this look is one file.
 */
export function namespaceEnded(init: NamespaceInit): boolean {
  const s = readStat(init.pid);
  return !s || s.startTime !== init.startTime || s.state === 'Z' || s.state === 'X';
}
