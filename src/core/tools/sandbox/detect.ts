import { spawn } from 'node:child_process';
import { bwrapArgs } from './bwrap-args';

// Whether an OS sandbox can confine commands here. Probed once per process (per bwrap path)
// and cached: a missing binary or a kernel without the namespaces it needs does not change
// while Arbor runs, and every command would otherwise pay for the probe.

export type SandboxStatus =
  | { available: true; kind: 'bubblewrap'; bwrap: string }
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

/** The sandbox status for `bwrap` (a path or a name on PATH); the first call probes, later ones reuse it. */
export function sandboxStatus(bwrap: string = DEFAULT_BWRAP): Promise<SandboxStatus> {
  let status = cache.get(bwrap);
  if (!status) {
    status = probe(bwrap);
    cache.set(bwrap, status);
  }
  return status;
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
  // namespace), so "available" means a real command will start, not only that a file exists.
  const args = bwrapArgs({ mode: 'read-only', roots: [], readOnly: [], shadow: [], network: false, cwd: '/' });
  const r = await new Promise<{ code: number | null; error?: string; stderr: string }>((resolve) => {
    let stderr = '';
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(bwrap, [...args, '--', '/bin/sh', '-c', 'exit 0'], { stdio: ['ignore', 'ignore', 'pipe'] });
    } catch (e) {
      resolve({ code: null, error: (e as Error).message, stderr });
      return;
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
  return { available: true, kind: 'bubblewrap', bwrap };
}

/** One line for logs and notices: what confines commands here, or why nothing does and what to install. */
export function describeSandboxStatus(s: SandboxStatus): string {
  return s.available ? `commands run in an OS sandbox (bubblewrap, ${s.bwrap})` : `no OS sandbox: ${s.reason}; ${s.remedy}`;
}
