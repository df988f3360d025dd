import * as fs from 'node:fs';
import * as path from 'node:path';
import { bwrapArgs } from '../tools/sandbox/bwrap-args';
import { sandboxStatus } from '../tools/sandbox/detect';
import { hostSockets } from '../tools/sandbox/host-sockets';
import { git } from './git';

// Where a git that reads a workspace's files runs (decision 0097, amended in s51). `git add -A`
// reads by path, and a command running beside it can exchange a folder on the way with a link
// (renameat2 RENAME_EXCHANGE): git then lists and reads the folder the link names, and stores its
// files as the workspace's — in the repository's objects, then in a child's worktree. Run inside
// a sandbox with a confined command's view (the whole file system read-only, the user's session
// folders and host sockets hidden, a /tmp and a /proc of its own), whatever a link leads git to
// is something the command could read itself. Only what git must write is writable: the
// repository's objects, the folder of the index it writes. Where bubblewrap does not run, no
// command is confined either (nothing is hidden from one), and git runs as before. The bubblewrap
// is the deployment's configured one, as its commands': `bwrap` is threaded from the harness's
// `commands.bwrapPath` (the CLI's ARBOR_BWRAP) to every caller.

/**
 * `git add -A [-- pathspec]` of the checkout at `top`, confined (`confinedLine`). `bwrap` is the
 * bubblewrap the deployment's commands run under (`CommandSandbox`'s `bwrapPath`, default `bwrap`):
 * the same one, or git would go unconfined where its commands are confined. With `index` (a
 * separate index file, `GIT_INDEX_FILE`) the checkout's own index is left alone and only that
 * file's folder is writable; without, the checkout's own git folder is. `objects`: where the new
 * objects go (default the repository's).
 */
export async function confinedAdd(top: string, opts: { bwrap: string; pathspec?: readonly string[]; index?: string; objects?: string }): Promise<void> {
  const { gitDir, commonDir } = await gitDirs(top);
  const objects = opts.objects ?? path.join(commonDir, 'objects');
  // A separate index: only its folder is written, the checkout's own git folder stays read-only; else git writes the checkout's index.
  const readable = opts.index ? [commonDir, gitDir] : [commonDir];
  const writable = [opts.index ? path.dirname(opts.index) : gitDir, objects];
  const wrap = await confinedLine(top, readable, writable, opts.bwrap);
  const spec = opts.pathspec?.length ? ['--', ...opts.pathspec] : [];
  await git(['add', '-A', ...spec], { cwd: top, ...(opts.index ? { env: { GIT_INDEX_FILE: opts.index } } : {}), ...(wrap ? { wrap } : {}) });
}

/**
 * The wrapper around a workspace-reading git: `bwrap` (the configured bubblewrap, probed as
 * commands' is: `sandboxStatus`) and its arguments up to `--`, or none where no sandbox runs.
 * `top` and `readable` (the repository's git folders, which may be where a command sees nothing:
 * under the host's /tmp) are bound read-only, `writable` (its objects, the index's folder) writable.
 */
async function confinedLine(
  top: string,
  readable: readonly string[],
  writable: readonly string[],
  bwrap: string,
): Promise<{ file: string; args: string[] } | undefined> {
  const status = await sandboxStatus(bwrap);
  if (!status.available) return undefined;
  const real = fs.realpathSync(top);
  const args = bwrapArgs({ mode: 'read-only', roots: [real], readOnly: [], shadow: [], ...hostSockets(), network: false, cwd: real });
  for (const dir of readable) {
    const r = fs.realpathSync(dir);
    args.push('--ro-bind', r, r);
  }
  for (const dir of writable) {
    const r = fs.realpathSync(dir);
    args.push('--bind', r, r);
  }
  return { file: status.bwrap, args };
}

/** The git folders of the checkout at `top` (`gitDirsOf`), asking git where `.git` says nothing plain (a `GIT_DIR` setup). */
export async function gitDirs(top: string): Promise<{ gitDir: string; commonDir: string }> {
  const known = gitDirsOf(top);
  if (known) return known;
  const [gitDir, commonDir] = (await git(['rev-parse', '--git-dir', '--git-common-dir'], { cwd: top })).stdout.split('\n');
  return { gitDir: path.resolve(top, gitDir), commonDir: path.resolve(top, commonDir) };
}

/**
 * The git folders of the checkout at `top` (real paths): its own (`.git`, or a linked worktree's
 * `.git/worktrees/<name>`) and the common one holding the objects; undefined when `.git` is
 * neither a folder nor a `gitdir:` file (then git is asked: `gitDirs`).
 */
export function gitDirsOf(top: string): { gitDir: string; commonDir: string } | undefined {
  const dotGit = path.join(top, '.git');
  try {
    const st = fs.statSync(dotGit);
    if (st.isDirectory()) return { gitDir: fs.realpathSync(dotGit), commonDir: fs.realpathSync(dotGit) };
    const m = /^gitdir: (.+)$/m.exec(fs.readFileSync(dotGit, 'utf8'));
    if (!m) return undefined;
    const gitDir = fs.realpathSync(path.resolve(top, m[1].trim()));
    let commonDir = gitDir;
    try {
      commonDir = fs.realpathSync(path.resolve(gitDir, fs.readFileSync(path.join(gitDir, 'commondir'), 'utf8').trim()));
    } catch {
      // (no commondir file: the git folder is the common one)
    }
    return { gitDir, commonDir };
  } catch {
    return undefined;
  }
}
