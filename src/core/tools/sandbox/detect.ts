import { spawn } from 'node:child_process';
import * as os from 'node:os';
import type { Writable } from 'node:stream';
import { HOST_PROGRAM_RULE, hostProgramReal } from '../../process/host-program';
import { bwrapArgs } from './bwrap-args';
import { SECCOMP_ARCHES, unixSocketFilter } from './seccomp';

// Whether an OS sandbox can confine commands here. Probed once per process (per bwrap path)
// and cached: a missing binary or a kernel without the namespaces it needs does not change
// while Arbor runs, and every command would otherwise pay for the probe.

export type SandboxStatus =
  | {
      available: true;
      kind: 'bubblewrap';
      /** The real path every sandbox starts (resolved once, `resolveProgram`). */
      bwrap: string;
      /** As it was named (`bwrap`, a setting's path), for messages. */
      name?: string;
      /** The seccomp filter that denies Unix sockets (undefined: none loads here, and `unixSocketsOpen` says why). */
      filter?: Buffer;
      /** Why confined commands can reach host Unix sockets here, in a sentence; undefined when they cannot. */
      unixSocketsOpen?: string;
    }
  | {
      available: false;
      /** What failed, in a sentence. */
      reason: string;
      /** What to install or change so that commands run confined. */
      remedy: string;
    };

/** The command line bubblewrap is found under when no path is configured. */
export const DEFAULT_BWRAP = 'bwrap';

const INSTALL = 'install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)';
const PROBE_TIMEOUT_MS = 10_000;

const cache = new Map<string, Promise<SandboxStatus>>();

/**
 * The sandbox status for `bwrap` (a path or a name on PATH); the first call for the file it leads
 * to probes, later ones reuse it. Its `bwrap` is that file's real path, and every sandbox starts that one:
 * a name looked up at each start would run whatever a command put first on PATH (a folder of the
 * workspace there: an activated `.venv/bin`, direnv's `PATH_add bin`), unconfined, on the host.
 */
export function sandboxStatus(bwrap: string = DEFAULT_BWRAP): Promise<SandboxStatus> {
  // The name is looked up again at each call (`hostProgram` keeps its answer until a folder is
  // guarded): a call made before a harness guarded its workspace (a second workspace of `arbor acp`)
  // does not pin what it found then. A name found nowhere is not installed: it is never handed to
  // the spawn, whose own PATH lookup would take the first on PATH, a guarded folder's included.
  const file = resolveProgram(bwrap);
  const key = `${bwrap}\0${file}`;
  let status = cache.get(key);
  if (!status) {
    status =
      file.includes('/') || process.platform !== 'linux'
        ? probe(file).then((st) => (st.available && st.bwrap !== bwrap ? { ...st, name: bwrap } : st))
        : Promise.resolve({ available: false, reason: `bubblewrap (${bwrap}) is not installed (${HOST_PROGRAM_RULE})`, remedy: INSTALL });
    cache.set(key, status);
  }
  return status;
}

/**
 * `program`'s real path: a name is looked up in PATH's absolute folders only (`hostProgram`), none at or
 * below the current folder (an empty or relative entry is the current folder; a CLI's is the
 * workspace, so a command could have put its own there before this process started). A path is
 * resolved from here. The name as given when nothing is found (`sandboxStatus` then says it is not installed, running nothing).
 */
export function resolveProgram(program: string, envPath = process.env.PATH ?? '', cwd = process.cwd()): string {
  return hostProgramReal(program, envPath, cwd) ?? program;
}

async function probe(bwrap: string): Promise<SandboxStatus> {
  if (process.platform !== 'linux') {
    return {
      available: false,
      reason: `Arbor has no OS sandbox for ${process.platform} yet (it uses bubblewrap on Linux)`,
      remedy: 'run Arbor on Linux with bubblewrap installed',
    };
  }
  // The probe runs the same confinement a command gets (read-only, no network, new PID
  // namespace, the seccomp filter), so "available" means a real command will start, not only
  // that a file exists. A kernel that refuses the filter still confines files and network:
  // available, and the status says Unix sockets stay reachable.
  const filter = unixSocketFilter();
  if (filter) {
    const withFilter = await run(bwrap, filter);
    if (withFilter.code === 0) return { available: true, kind: 'bubblewrap', bwrap, filter };
    const plain = await run(bwrap);
    if (plain.code === 0) {
      const said = withFilter.stderr.trim().split('\n')[0] || `exit code ${withFilter.code}`;
      return { available: true, kind: 'bubblewrap', bwrap, unixSocketsOpen: `the kernel refused the seccomp filter that denies Unix sockets (${said})` };
    }
    return verdict(bwrap, plain);
  }
  const r = await run(bwrap);
  if (r.code !== 0) return verdict(bwrap, r);
  return {
    available: true,
    kind: 'bubblewrap',
    bwrap,
    unixSocketsOpen: `Arbor has no seccomp filter for ${process.arch}${os.endianness() === 'LE' ? '' : ' (big-endian)'} (it has one for ${SECCOMP_ARCHES.join(', ')})`,
  };
}

interface ProbeRun {
  code: number | null;
  error?: string;
  stderr: string;
}

function run(bwrap: string, filter?: Buffer): Promise<ProbeRun> {
  const args = bwrapArgs({ mode: 'read-only', roots: [], readOnly: [], shadow: [], network: false, cwd: '/', seccompFd: filter ? 3 : undefined });
  return new Promise<ProbeRun>((resolve) => {
    let stderr = '';
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(bwrap, [...args, '--', '/bin/sh', '-c', 'exit 0'], { stdio: ['ignore', 'ignore', 'pipe', ...(filter ? ['pipe' as const] : [])] });
    } catch (e) {
      resolve({ code: null, error: (e as Error).message, stderr });
      return;
    }
    const fd3 = child.stdio[3] as Writable | null | undefined;
    if (fd3 && filter) {
      fd3.on('error', () => undefined);
      fd3.end(filter);
    }
    const timer = setTimeout(() => child.kill('SIGKILL'), PROBE_TIMEOUT_MS);
    child.stderr!.on('data', (d: Buffer) => {
      if (stderr.length < 2000) stderr += d.toString();
    });
    child.on('error', (e: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve({ code: null, error: e.code === 'ENOENT' ? 'ENOENT' : e.message, stderr });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

/** A failed probe, as a status that says what to install or change. */
function verdict(bwrap: string, r: ProbeRun): SandboxStatus {
  if (r.error === 'ENOENT') return { available: false, reason: `bubblewrap (${bwrap}) is not installed`, remedy: INSTALL };
  if (r.error !== undefined) return { available: false, reason: `bubblewrap (${bwrap}) could not be started: ${r.error}`, remedy: INSTALL };
  if (r.code !== 0) {
    const said = r.stderr.trim().split('\n')[0] || `exit code ${r.code}`;
    return {
      available: false,
      reason: `bubblewrap (${bwrap}) cannot create a sandbox here: ${said}`,
      remedy:
        'allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, or an AppArmor profile for bwrap), or run outside a container that forbids them',
    };
  }
  return { available: false, reason: `bubblewrap (${bwrap}) failed its probe`, remedy: INSTALL };
}

/** One line for logs and notices: what confines commands here, or why nothing does and what to install. */
export function describeSandboxStatus(s: SandboxStatus): string {
  if (!s.available) return `no OS sandbox: ${s.reason}; ${s.remedy}`;
  const sockets = s.unixSocketsOpen ? `; Unix sockets are NOT blocked: ${s.unixSocketsOpen}` : '';
  return `commands run in an OS sandbox (bubblewrap, ${s.name ?? s.bwrap})${sockets}`;
}
