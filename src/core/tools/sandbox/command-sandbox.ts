import type { GroupChild } from '../../process/spawner';
import type { MadeRecord } from '../made-by-commands';
import { type ProtectedEntry, protectedTree, type WalkLimits } from '../protected-walk';
import { isWithin } from '../real-path';
import { bwrapArgs, type ConfinedMode, RESIDENT_PROC, type SandboxPlan } from './bwrap-args';
import { DEFAULT_BWRAP, type SandboxStatus, sandboxStatus } from './detect';
import { hostSockets } from './host-sockets';
import { bindsInsideRoots, shellCheck, writableRule } from './mount-check';
import { type ProtectedMounts, protectedMounts, type Unsearched } from './protected-mounts';
import { type Lease, ResidentPool } from './residents';
import { holdShadows } from './shadows';
import { zygotePath } from './zygote-path';

export interface CommandSandboxOptions {
  /** The bubblewrap binary (default `bwrap` on PATH). */
  bwrapPath?: string;
  /** Whether confined commands may use the IP network; read at each command (default: no network). Unix sockets stay denied. */
  network?: () => boolean;
  /** Paths protected besides the fixed names (the session store, …), read at each command. */
  protectedPaths?: () => readonly string[];
  /** Bounds of the walk for nested protected paths (default `WALK_LIMITS`: 10,000 folders, 24 levels). */
  walk?: WalkLimits;
  /** Resident sandboxes (decision 0103): this process's pool by default; `false` gives every command a bubblewrap of its own. */
  residents?: ResidentPool | false;
  /** Where the protected folders commands make below a root's top are recorded (decision 0111); none: not recorded. */
  made?: MadeRecord;
}

/** How to start one confined command: `file` with `args`, then `--` and the program; `release` after it ends. */
export interface Confinement {
  file: string;
  args: string[];
  network: boolean;
  /** Bytes for the program's fd 3: the seccomp filter bubblewrap loads (`--seccomp 3`). */
  fd3?: Buffer;
  /** What the command's result should say about its sandbox: limits that apply to this command. */
  notes: string[];
  /**
   * Where the workspace's resident sandbox can take the command: start `argv` there instead of
   * `file` with `args` (decision 0103). The same mounts, filter and network, and a PID namespace,
   * /proc and /tmp of the command's own.
   */
  start?: (argv: readonly string[], cwd: string, env: NodeJS.ProcessEnv) => GroupChild;
  /** What runs the command in a bubblewrap of its own (after `--`, before its argv): the check of its mount table (`mount-check.ts`). */
  before?: string[];
  /** After the command has ended; resolves once its stand-ins are gone from the host. */
  release(): Promise<void>;
}

/** The fd bubblewrap reads the seccomp filter from: the first after stdin, stdout and stderr. */
const SECCOMP_FD = 3;

let shared: ResidentPool | undefined;

/** This process's resident sandboxes, when the zygote is here. */
function sharedPool(): ResidentPool | undefined {
  const zygote = zygotePath();
  if (!zygote) return undefined;
  shared ??= new ResidentPool({ zygote });
  return shared;
}

/**
 * The OS sandbox commands run in (DESIGN §6): probed once; then each command runs in its
 * workspace state's resident sandbox (decision 0103), or in a bubblewrap of its own where no
 * resident can run.
 */
export class CommandSandbox {
  /** Roots whose walk after a command is scheduled and not run yet (one per root at a time). */
  private readonly afterWalks = new Set<string>();

  constructor(private readonly options: CommandSandboxOptions = {}) {}

  /** What the walks of this sandbox's roots saw appear, recorded (decision 0111). */
  private recordAppeared(entries: readonly ProtectedEntry[], unsearched: readonly Unsearched[] = []): void {
    if ((entries.length === 0 && unsearched.length === 0) || !this.options.made) return;
    try {
      this.options.made.record(entries);
      // A walk that stopped short: what appears where it did not reach is judged by its birth (decision 0123).
      for (const u of unsearched) this.options.made.recordUnsearched(u.root, u.since);
    } catch (err) {
      // The record cannot be written (a full disk, a read-only home): the command is not failed for it, but it is said.
      console.error(
        `arbor: could not record the protected folders commands made (${entries.map((e) => e.path).join(', ')}) in ${this.options.made.file}: ${(err as Error).message}`,
      );
    }
  }

  /**
   * After a command: its roots walked again, off the command's path (the next turn of the event
   * loop), so what the last command of a session made is recorded too. The listings it reads are
   * the next command's walk's cache: a folder is listed again only once per change.
   */
  private walkAfter(roots: readonly string[]): void {
    if (!this.options.made) return;
    const todo = roots.filter((r) => !this.afterWalks.has(r));
    if (todo.length === 0) return;
    for (const r of todo) this.afterWalks.add(r);
    setImmediate(() => {
      void (async () => {
        const appeared: ProtectedEntry[] = [];
        const unsearched: Unsearched[] = [];
        for (const r of todo) {
          this.afterWalks.delete(r);
          const tree = await protectedTree(r, this.options.walk, { appeared: true }).catch(() => undefined);
          if (tree?.appeared) appeared.push(...tree.appeared);
          if (tree?.unsearchedSince !== undefined) unsearched.push({ root: r, since: tree.unsearchedSince });
        }
        this.recordAppeared(appeared, unsearched);
      })();
    });
  }

  /** Whether a sandbox can start here (cached per process and bwrap path). */
  status(): Promise<SandboxStatus> {
    return sandboxStatus(this.options.bwrapPath ?? DEFAULT_BWRAP);
  }

  networkAllowed(): boolean {
    return this.options.network?.() ?? false;
  }

  /** The bubblewrap command line for a command in `cwd` under `mode`; undefined when no sandbox can start. */
  async confine(mode: ConfinedMode, roots: readonly string[], cwd: string): Promise<Confinement | undefined> {
    const status = await this.status();
    if (!status.available) return undefined;
    // The programs that make the sandbox run on the host, unconfined, or hold every command of a
    // resident: one a command can write (a workspace folder) is never started.
    // Whatever this command's mode: a command of another session, in workspace-write, can write there.
    const writable = (p: string | undefined): boolean => !!p && roots.some((r) => isWithin(p, r));
    if (writable(status.bwrap)) {
      throw new Error(
        `bubblewrap (${status.bwrap}) is inside the workspace, where commands can replace it, so no command is started with it: install bubblewrap outside the workspace (e.g. /usr/bin/bwrap), remove the workspace's folder from PATH, or set ARBOR_BWRAP`,
      );
    }
    let pool = this.options.residents === false ? undefined : (this.options.residents ?? sharedPool());
    // A zygote inside the workspace (Arbor on its own checkout: dist/arbor-zygote): a bubblewrap per command instead.
    if (pool && writable(pool.zygote)) pool = undefined;
    // Only a sandbox that records asks what appeared: one without a record leaves it to one with.
    const {
      appeared = [],
      unsearched = [],
      ...mounts
    }: ProtectedMounts & { appeared?: ProtectedEntry[]; unsearched?: Unsearched[] } = mode === 'workspace-write'
      ? await protectedMounts(roots, this.options.protectedPaths?.() ?? [], this.options.walk, { appeared: !!this.options.made })
      : { readOnly: [], shadow: [], pinned: [], guarded: [], notes: [] };
    this.recordAppeared(appeared, unsearched);
    const walked = mode === 'workspace-write' ? roots : [];
    const network = this.networkAllowed();
    const notes = [...mounts.notes];
    if (status.unixSocketsOpen) notes.push(`Unix sockets on the host are not blocked: ${status.unixSocketsOpen}`);
    const plan: SandboxPlan = { mode, roots, ...mounts, ...hostSockets(), network, cwd, seccompFd: status.filter ? SECCOMP_FD : undefined };
    const args = bwrapArgs(plan);
    // A folder of the workspace bound writable onto itself can be raced (`mount-check.ts`): the
    // sandbox's mount table is checked before anything runs in it.
    const raceable = bindsInsideRoots(args, roots);
    const lease = pool ? await this.resident(pool, status.bwrap, status.filter, plan, raceable) : undefined;
    const held = await holdShadows(mounts.shadow, roots);
    const release = async (): Promise<void> => {
      await held();
      this.walkAfter(walked);
    };
    if (!lease) {
      // A bubblewrap of its own checks its table itself, in a shell, before the command.
      const before = raceable ? ['/bin/sh', '-c', shellCheck(writableRule(roots, args)), 'arbor-mount-check'] : undefined;
      return { file: status.bwrap, args, network, fd3: status.filter, notes, release, ...(before ? { before } : {}) };
    }
    const { resident } = lease;
    return {
      file: status.bwrap,
      args,
      network,
      fd3: status.filter,
      notes,
      // The stand-ins are this command's: the zygote makes each folder in the command's namespaces,
      // where all but the workspace is read-only, as bubblewrap did (never the host, through a link
      // a command running meanwhile swapped in after the walk).
      start: (argv, dir, env) => resident.run(argv, dir, env, mounts.shadow),
      release: () => {
        lease.release();
        return release();
      },
    };
  }

  /** The resident sandbox for `plan`'s state, when one can run it. */
  private async resident(pool: ResidentPool, bwrap: string, filter: Buffer | undefined, plan: SandboxPlan, raceable = false): Promise<Lease | undefined> {
    // The zygote binds each root under /tmp again over a command's new /tmp; /tmp itself as a root it cannot keep.
    const keep = plan.roots.filter((r) => r.startsWith('/tmp/'));
    if (plan.roots.includes('/tmp') || keep.length > MAX_KEEP) return undefined;
    // Stand-ins are each command's own (`start` above), not the state's.
    const args = bwrapArgs({ ...plan, shadow: [], resident: true });
    // Without the network, each command's loopback is its own, as in a bubblewrap of its own.
    const zygoteArgs = ['--proc', RESIDENT_PROC, ...(plan.network ? [] : ['--net-ns']), ...keep.flatMap((k) => ['--keep', k])];
    return pool.lease({ bwrap, args, fd3: filter, zygoteArgs, ...(raceable ? { checkRoots: plan.roots } : {}) });
  }
}

/** Roots under /tmp the zygote binds again for each command, at most (`MAX_KEEP` in native/zygote.h). */
const MAX_KEEP = 64;
