// The bubblewrap command line for one confined command. Pure: the plan (which paths are
// writable, which stay read-only) is computed elsewhere; this only orders the mounts, and the
// order is the policy: later mounts cover earlier ones, so protected paths come last.

export type ConfinedMode = 'read-only' | 'workspace-write';

export interface SandboxPlan {
  mode: ConfinedMode;
  /** Real paths of the workspace roots: writable in `workspace-write`, read-only in `read-only`. */
  roots: readonly string[];
  /** Existing protected paths inside the roots (`.git`, `.vscode`, …): mounted read-only over a writable root. */
  readOnly: readonly string[];
  /** Protected directories that do not exist: an empty read-only directory stands there, so none can be created. */
  shadow: readonly string[];
  /** Folders above protected paths, bound onto themselves so they cannot be renamed or removed (default none). */
  pinned?: readonly string[];
  /** Folders holding a symlinked protected name: read-only, their `children` bound writable again (default none). */
  guarded?: readonly { dir: string; children: readonly string[] }[];
  /** Host folders of sockets and session secrets (`/run/user`): an empty tmpfs stands over each (default none). */
  hidden?: readonly string[];
  /** Host socket files (the Docker socket, the system bus): `/dev/null` is bound over each (default none). */
  masked?: readonly string[];
  /** The fd bubblewrap reads the seccomp filter from (`--seccomp`), when there is one. */
  seccompFd?: number;
  /** Share the host's network (default: a network namespace with only a loopback of its own). */
  network: boolean;
  /** The real directory the command starts in. */
  cwd: string;
  /**
   * A resident sandbox (decision 0103): the line starts `arbor-zygote`, which gives each command
   * its own /proc, /tmp and PID namespace, so the sandbox's /proc is the zygote's (at
   * `RESIDENT_PROC`, the host's read-only one stays at /proc for the kernel's check that a new
   * /proc reveals nothing hidden) and the zygote keeps CAP_SETFCAP (in bubblewrap's user
   * namespace only) to map each command's root; `cwd` is ignored (each command has its own).
   */
  resident?: boolean;
}

/** Where a resident sandbox mounts its own /proc (under its /tmp: every command's new /tmp covers it). */
export const RESIDENT_PROC = '/tmp/.arbor-proc';

/**
 * Where a resident sandbox finds `arbor-zygote`: the binary bound there read-only, since its own
 * path may be out of the sandbox's sight (under /tmp, which is the sandbox's own, or a hidden folder).
 */
export const RESIDENT_ZYGOTE = '/tmp/.arbor/arbor-zygote';

/** Arguments for `bwrap`, up to (not including) `--` and the program to run. */
export function bwrapArgs(plan: SandboxPlan): string[] {
  const writable = plan.mode === 'workspace-write';
  const args = [
    // The whole file system, read-only (recursively, with every mount under /).
    '--ro-bind',
    '/',
    '/',
    // A minimal /dev of its own (null, zero, random, tty…): the host's block devices stay out of reach.
    '--dev',
    '/dev',
    // A /proc for the new PID namespace: `ps` sees only this command's processes.
    ...(plan.resident ? [] : ['--proc', '/proc']),
    // A private, empty /tmp that vanishes with the command: scratch space that writes nothing to disk outside.
    '--tmpfs',
    '/tmp',
    ...(plan.resident ? ['--proc', RESIDENT_PROC] : []),
  ];
  // Sockets and secrets of the user's session (D-Bus, ssh-agent, Docker): out of sight. The
  // seccomp filter is what denies Unix sockets; these mounts also hide them where it cannot load.
  // A resident's are read-only: shared by its commands, they would be a place to leave something for the next.
  for (const p of plan.hidden ?? []) args.push('--tmpfs', p, ...(plan.resident ? ['--remount-ro', p] : []));
  for (const p of plan.masked ?? []) args.push('--ro-bind', '/dev/null', p);
  // Roots are bound again after /tmp, so a workspace under /tmp stays visible.
  for (const root of plan.roots) args.push(writable ? '--bind' : '--ro-bind', root, root);
  if (writable) args.push(...protectedArgs(plan));
  // Every namespace bubblewrap knows (user when it can, IPC, PID, network, UTS, cgroup).
  args.push('--unshare-all');
  if (plan.network) args.push('--share-net');
  args.push(
    // The sandbox dies when Arbor does, and killing bwrap ends its PID namespace: every process the
    // command started dies with it, `setsid` children included (no escape from the namespace).
    '--die-with-parent',
    // No controlling terminal to push keystrokes into (TIOCSTI).
    '--new-session',
    // Run as root, bwrap would keep every capability, and CAP_SYS_ADMIN can remount `/` read-write.
    '--cap-drop',
    'ALL',
    ...(plan.resident ? ['--cap-add', 'CAP_SETFCAP'] : []),
    '--chdir',
    plan.resident ? '/' : plan.cwd,
  );
  if (plan.seccompFd !== undefined) args.push('--seccomp', String(plan.seccompFd));
  return args;
}

/** The protected parts of a plan, as mounts. */
export type ProtectedPlan = Pick<SandboxPlan, 'readOnly' | 'shadow' | 'pinned' | 'guarded'>;

/**
 * The mounts that keep protected paths inside writable roots (bound writable before them) from
 * change: pinned and guarded folders, then the read-only paths, then the stand-ins. Also what a
 * confined remote program's PID namespace adds over `/` (`remote/namespace-mounts.ts`).
 */
export function protectedArgs(plan: ProtectedPlan): string[] {
  const args: string[] = [];
  // Parents before children (a prefix sorts first), all before the read-only protected paths:
  // each bind copies the host's tree and would cover a protected mount made before it.
  for (const [p, ro] of structure(plan)) args.push(ro ? '--ro-bind' : '--bind', p, p);
  for (const p of plan.readOnly) args.push('--ro-bind', p, p);
  for (const p of plan.shadow) args.push('--tmpfs', p, '--remount-ro', p);
  return args;
}

/** Pinned and guarded folders and a guarded folder's children, sorted by path: path → read-only. */
function structure(plan: ProtectedPlan): [string, boolean][] {
  const ops = new Map<string, boolean>();
  for (const p of plan.pinned ?? []) ops.set(p, false);
  for (const g of plan.guarded ?? []) for (const c of g.children) if (!ops.has(c)) ops.set(c, false);
  for (const g of plan.guarded ?? []) ops.set(g.dir, true);
  return [...ops].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}
