import { bwrapArgs, type ConfinedMode } from './bwrap-args';
import { DEFAULT_BWRAP, type SandboxStatus, sandboxStatus } from './detect';
import { holdShadows, protectedMounts } from './protected-mounts';

export interface CommandSandboxOptions {
  /** The bubblewrap binary (default `bwrap` on PATH). */
  bwrapPath?: string;
  /** Whether confined commands may use the network; read at each command (default: no network). */
  network?: () => boolean;
  /** Paths protected besides the fixed names (the session store, …), read at each command. */
  protectedPaths?: () => readonly string[];
}

/** How to start one confined command: `file` with `args`, then `--` and the program; `release` after it ends. */
export interface Confinement {
  file: string;
  args: string[];
  network: boolean;
  release(): void;
}

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
    const mounts = mode === 'workspace-write' ? await protectedMounts(roots, this.options.protectedPaths?.() ?? []) : { readOnly: [], shadow: [] };
    const network = this.networkAllowed();
    const release = holdShadows(mounts.shadow);
    return { file: status.bwrap, args: bwrapArgs({ mode, roots, readOnly: mounts.readOnly, shadow: mounts.shadow, network, cwd }), network, release };
  }
}
