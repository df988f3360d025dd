import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { foldName, hooksPathOf, PROTECTED_DIR_NAMES, WORKSPACE_FILE_SUFFIX } from '../protected-paths';
import { isWithin } from '../real-path';

// Which paths inside writable roots a confined command must not change (the OS side of
// `tools/paths.ts`): `.git`, `.vscode`, `.arbor` and `*.code-workspace` at the top of each
// root, a worktree's or submodule's real git directory, and paths the deployment adds (the
// store). A protected directory that does not exist gets an empty read-only stand-in, so a
// command cannot create `.vscode/settings.json` or a fake `.git` with hooks either.

export interface ProtectedMounts {
  /** Existing protected paths (real paths) to mount read-only. */
  readOnly: string[];
  /** Missing protected directories to cover with an empty read-only directory. */
  shadow: string[];
}

async function real(p: string): Promise<string | undefined> {
  try {
    return await fsp.realpath(p);
  } catch {
    return undefined;
  }
}

/** `.git` as a file (`gitdir: …`): the directory it points at, and that directory's `commondir` (hooks live there). */
async function gitDirsOf(dotGit: string): Promise<string[]> {
  let text: string;
  try {
    const st = await fsp.lstat(dotGit);
    if (!st.isFile()) return [];
    text = await fsp.readFile(dotGit, 'utf8');
  } catch {
    return [];
  }
  const m = /^gitdir:\s*(.+?)\s*$/m.exec(text);
  if (!m) return [];
  const gitdir = await real(path.resolve(path.dirname(dotGit), m[1]));
  if (!gitdir) return [];
  const out = [gitdir];
  try {
    const common = (await fsp.readFile(path.join(gitdir, 'commondir'), 'utf8')).trim();
    const dir = common ? await real(path.resolve(gitdir, common)) : undefined;
    if (dir) out.push(dir);
  } catch {
    // No commondir: a submodule's git directory holds its own hooks.
  }
  return out;
}

/**
 * The protected mounts for `roots` (real paths), plus `extra` paths (e.g. the session store)
 * when they exist inside a root. Paths outside every root need nothing: they are read-only anyway.
 */
export async function protectedMounts(roots: readonly string[], extra: readonly string[] = []): Promise<ProtectedMounts> {
  const readOnly = new Set<string>();
  const shadow = new Set<string>();
  const inRoots = (p: string): boolean => roots.some((r) => isWithin(p, r));
  for (const root of roots) {
    let entries: fs.Dirent[];
    try {
      entries = await fsp.readdir(root, { withFileTypes: true });
    } catch {
      continue;
    }
    const present = new Set<string>();
    for (const e of entries) {
      const name = foldName(e.name);
      const isDir = PROTECTED_DIR_NAMES.includes(name);
      if (!isDir && !name.endsWith(WORKSPACE_FILE_SUFFIX)) continue;
      const abs = path.join(root, e.name);
      // Another running command's stand-in is not a real directory: share the stand-in (and its count).
      if (shadowUsers.has(abs)) continue;
      if (isDir) present.add(name);
      // A symlinked entry (`.vscode -> config/editor`) protects what it points at.
      const target = await real(abs);
      if (target && inRoots(target)) readOnly.add(target);
      if (name === '.git') for (const d of await gitDirsOf(abs)) if (inRoots(d)) readOnly.add(d);
    }
    for (const name of PROTECTED_DIR_NAMES) if (!present.has(name)) shadow.add(path.join(root, name));
    // The repository's configured hooks folder (`core.hooksPath`, e.g. `.husky`) runs code on
    // the next git command, like `.git/hooks`: the file tools ask for it, commands cannot write it.
    const hooks = await hooksPathOf(root);
    const hooksReal = hooks && (await real(hooks));
    if (hooksReal && inRoots(hooksReal)) readOnly.add(hooksReal);
  }
  for (const p of extra) {
    const r = await real(p);
    if (r && inRoots(r)) readOnly.add(r);
  }
  return { readOnly: [...readOnly].sort(), shadow: [...shadow].sort() };
}

// bwrap creates an empty directory on the host where a stand-in is mounted. It is removed
// when the last command of this process that stands on it ends (rmdir: only while empty, so
// a directory someone filled meanwhile stays). Counting users keeps one command's cleanup
// from pulling the stand-in out from under another command still running.
const shadowUsers = new Map<string, number>();

export function holdShadows(paths: readonly string[]): () => void {
  for (const p of paths) shadowUsers.set(p, (shadowUsers.get(p) ?? 0) + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    for (const p of paths) {
      const n = (shadowUsers.get(p) ?? 1) - 1;
      if (n > 0) {
        shadowUsers.set(p, n);
        continue;
      }
      shadowUsers.delete(p);
      try {
        fs.rmdirSync(p);
      } catch {
        // Not there (bwrap failed before mounting) or not empty (someone made it real): leave it.
      }
    }
  };
}
