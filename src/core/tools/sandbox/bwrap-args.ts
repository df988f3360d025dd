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
  /** Share the host's network (default: a network namespace with only a loopback of its own). */
  network: boolean;
  /** The real directory the command starts in. */
  cwd: string;
}

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
    '--proc',
    '/proc',
    // A private, empty /tmp that vanishes with the command: scratch space that writes nothing to disk outside.
    '--tmpfs',
    '/tmp',
  ];
  // Roots are bound again after /tmp, so a workspace under /tmp stays visible.
  for (const root of plan.roots) args.push(writable ? '--bind' : '--ro-bind', root, root);
  if (writable) {
    for (const p of plan.readOnly) args.push('--ro-bind', p, p);
    for (const p of plan.shadow) args.push('--tmpfs', p, '--remount-ro', p);
  }
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
    '--chdir',
    plan.cwd,
  );
  return args;
}
