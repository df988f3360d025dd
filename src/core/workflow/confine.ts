import * as fs from 'node:fs';
import * as path from 'node:path';
import { DEFAULT_BWRAP, type SandboxStatus, sandboxStatus } from '../tools/sandbox/detect';

// Where the script process runs (issue 20 point 1, decision 0045). `vm` is not a security
// boundary, so the process around it is confined as commands are, tighter: bubblewrap with
// every namespace of its own (no network at all: no IP, no abstract Unix sockets; its own PID
// namespace, so it can neither see nor signal the host or any other process), all
// capabilities dropped, and a file system of only what Node needs to start — the system's
// libraries (/usr and the /lib links), the Node (or Electron) binary's own folder and the
// entry files, all read-only, plus an empty /tmp of its own. No home, no workspace, no /run,
// no /etc beyond the loader cache. It talks to the host only over its IPC pipe.

/** How the script process is started: inside bubblewrap, or (only when the user allowed it) as a plain child. */
export type Confinement = { kind: 'bubblewrap'; bwrap: string } | { kind: 'none'; reason: string };

/** The bwrap the deployment names, or the one on PATH; its status as commands probe it (cached per process). */
export async function scriptConfinement(bwrapPath: string | undefined): Promise<{ confinement: Confinement; status: SandboxStatus }> {
  const status = await sandboxStatus(bwrapPath ?? DEFAULT_BWRAP);
  if (!status.available) return { confinement: { kind: 'none', reason: `${status.reason}; ${status.remedy}` }, status };
  return { confinement: { kind: 'bubblewrap', bwrap: resolveOnPath(status.bwrap) }, status };
}

/** An absolute path for a program name (the script process gets no PATH to look it up). */
export function resolveOnPath(program: string, envPath = process.env.PATH ?? ''): string {
  if (program.includes('/')) return path.resolve(program);
  for (const dir of envPath.split(path.delimiter)) {
    if (!dir) continue;
    const p = path.join(dir, program);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return p;
    } catch {
      // not here
    }
  }
  return program;
}

/** The system folders a dynamically linked Node needs: bound read-only when a folder, re-made when a link (merged /usr). */
const SYSTEM = ['/usr', '/lib', '/lib64', '/lib32', '/libx32', '/bin'];
const LOADER_FILES = ['/etc/ld.so.cache', '/etc/ld.so.conf'];

/**
 * The bubblewrap arguments that run `node <execArgv> <entry>` confined; `files` are the files
 * the process must read (its entry and what the entry loads), each bound read-only at its own path.
 */
export function confinedArgv(node: string, execArgv: readonly string[], entry: string, files: readonly string[]): string[] {
  // /tmp, /proc and /dev first: the binds below may lie under /tmp (a checkout there) and must stay visible.
  const args: string[] = ['--tmpfs', '/tmp', '--proc', '/proc', '--dev', '/dev'];
  const bound = new Set<string>();
  const bind = (p: string) => {
    if (bound.has(p)) return;
    bound.add(p);
    args.push('--ro-bind', p, p);
  };
  for (const p of SYSTEM) {
    let st: fs.Stats;
    try {
      st = fs.lstatSync(p);
    } catch {
      continue;
    }
    if (st.isSymbolicLink()) args.push('--symlink', fs.readlinkSync(p), p);
    else if (st.isDirectory()) bind(p);
  }
  for (const f of LOADER_FILES) if (fs.existsSync(f)) bind(f);
  // Node's own folder (an Electron binary needs its .pak, ICU and snapshot files beside it).
  const realNode = fs.realpathSync(node);
  const nodeDir = path.dirname(realNode);
  if (!isUnder(nodeDir, '/usr')) bind(nodeDir);
  for (const f of files) bind(fs.realpathSync(f));
  // Nothing it can write: bubblewrap's root, /tmp and /dev are memory (tmpfs), which no RSS counts;
  // writable, a script that escaped its context (and Node's permission flags, or ran without them)
  // filled them with the host's memory unseen. Read-only once the binds above stand on them.
  args.push('--remount-ro', '/tmp', '--remount-ro', '/dev', '--remount-ro', '/');
  args.push('--unshare-all', '--die-with-parent', '--new-session', '--cap-drop', 'ALL', '--chdir', '/', '--', realNode, ...execArgv, fs.realpathSync(entry));
  return args;
}

const isUnder = (p: string, dir: string) => p === dir || p.startsWith(`${dir}/`);
