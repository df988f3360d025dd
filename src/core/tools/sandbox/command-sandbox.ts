import type { WalkLimits } from '../protected-walk';
import { bwrapArgs, type ConfinedMode } from './bwrap-args';
import { DEFAULT_BWRAP, type SandboxStatus, sandboxStatus } from './detect';
import { hostSockets } from './host-sockets';
import { type ProtectedMounts, protectedMounts } from './protected-mounts';
import { holdShadows } from './shadows';

export interface CommandSandboxOptions {
  /** The bubblewrap binary (default `bwrap` on PATH). */
  bwrapPath?: string;
  /** Whether confined commands may use the IP network; read at each command (default: no network). Unix sockets stay denied. */
  network?: () => boolean;
  /** Paths protected besides the fixed names (the session store, …), read at each command. */
  protectedPaths?: () => readonly string[];
  /** Bounds of the walk for nested protected paths (default `WALK_LIMITS`: 10,000 folders, 24 levels). */
  walk?: WalkLimits;
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
  release(): void;
}

/** The fd bubblewrap reads the seccomp filter from: the first after stdin, stdout and stderr. */
const SECCOMP_FD = 3;

/** The OS sandbox commands run in (DESIGN §6): probed once, then one bubblewrap per command. */
export class CommandSandbox {
  constructor(private readonly options: CommandSandboxOptions = {}) {}

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
    const mounts: ProtectedMounts =
      mode === 'workspace-write'
        ? await protectedMounts(roots, this.options.protectedPaths?.() ?? [], this.options.walk)
        : { readOnly: [], shadow: [], pinned: [], guarded: [], notes: [] };
    const network = this.networkAllowed();
    const notes = [...mounts.notes];
    if (status.unixSocketsOpen) notes.push(`Unix sockets on the host are not blocked: ${status.unixSocketsOpen}`);
    const release = holdShadows(mounts.shadow);
    const args = bwrapArgs({
      mode,
      roots,
      ...mounts,
      ...hostSockets(),
      network,
      cwd,
      seccompFd: status.filter ? SECCOMP_FD : undefined,
    });
    return { file: status.bwrap, args, network, fd3: status.filter, notes, release };
  }
}
