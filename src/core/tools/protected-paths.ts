import type { Dirent } from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { dotGitEndsSearch } from './bare-found';
import { hooksDirsOf, repoHooksDirs } from './git-hooks';
import { dotLinkTargetProtected, foldName, HOOKS_PATH_REASON, protectedNameReason } from './protected-names';
import { protectedTree } from './protected-walk';
import { isWithin, physicalPath } from './real-path';
import type { ToolContext } from './tool';

export { hooksPathOf } from './git-hooks';

// Which write targets need the user's approval in every sandbox mode (decision 0005, 0022, 0042):
// files that configure the editor, git or Arbor, found by name at any depth, through the
// symlinks that alias them (at any depth), through the hooks folders of the repository and of
// the repositories nested in it (husky's dispatch folder included), and the host's own paths.

export type ProtectContext = Pick<ToolContext, 'roots' | 'protectedPaths'>;

/** Entries of a protected folder looked at for symlinks that lead out of it, per write. */
const MAX_SCANNED = 2000;
/** Parts of `.git` that hold data, not configuration: never scanned (they can be huge). */
const GIT_DATA = new Set(['objects', 'refs', 'logs', 'lfs', 'modules', 'packed-refs', 'index']);

/**
 * Why writing `realPath` needs approval, or undefined. A target inside a root is judged by
 * its root-relative name; one outside every root (full-access) by every part of its real
 * path, so the `.git` and `.vscode` of a repository above the root stay protected. Then the
 * aliases: the folders protected by name, the repository's hooks folder, and every symlink
 * inside them lead somewhere, and that somewhere is protected too.
 */
export async function protectionOf(ctx: ProtectContext, r: { realPath: string; root?: string; relative: string }): Promise<string | undefined> {
  const byName = protectedReason(r.root ? r.relative : r.realPath);
  if (byName) return byName;
  if (r.root && isTopHead(r.relative) && !dotGitEndsSearch(r.root)) return BARE_TOP_REASON;
  const home = await homeDotEntryOf(ctx, r.realPath);
  if (home) return home;
  for (const extra of ctx.protectedPaths ?? []) {
    const real = await physicalPath(path.resolve(extra.path));
    if (real.ok && isWithin(r.realPath, real.path)) return extra.reason;
  }
  for (const root of ctx.roots) {
    const reason = (await aliasOfProtected(r.realPath, path.resolve(root))) ?? (await nestedAliasOf(r.realPath, path.resolve(root)));
    if (reason) return reason;
  }
  // The hooks folders of the repository holding the target (a nested one, or one above the root).
  if (firstWithin(r.realPath, await hooksDirsOf(path.dirname(r.realPath)))) return HOOKS_PATH_REASON;
  return undefined;
}

/**
 * `HEAD` at the top of a root git passes over (no `.git` that is a repository): with `config`,
 * `objects/` and `refs/` beside it, git takes the folder itself for a bare repository, and its
 * config for the one to obey (decision 0123, amended s58; commands get a stand-in there).
 */
const BARE_TOP_REASON =
  "'HEAD' at the top of a folder that is not a repository makes it one to git (with config, objects and refs beside it): its config could name a program the user's git runs outside the sandbox";

function isTopHead(relative: string): boolean {
  const parts = relative.split(/[\\/]/).filter((s) => s !== '' && s !== '.');
  return parts.length === 1 && foldName(parts[0]) === 'head';
}

export const HOME_DOT_REASON =
  'a dot file or folder of your home folder, which is inside the workspace (shell profiles, .gitconfig, .config, .ssh): your shell, git and desktop run what it says on their next start (decision 0123)';

/**
 * A home folder inside a root keeps its dot entries from commands (the sandbox makes them
 * read-only, decision 0123); the file tools ask for them as for a protected name, or the model
 * writes `~/.bashrc` with write_file where `echo >> ~/.bashrc` is refused. A dot entry that is a
 * symlink (`~/.bashrc -> dotfiles/bashrc`) lends its protection to what it leads to (amended s59),
 * resolved at each check: only the home folder's own entries that are links.
 */
async function homeDotEntryOf(ctx: ProtectContext, realPath: string): Promise<string | undefined> {
  const home = await linkFreeReal(os.homedir());
  if (home === undefined) return undefined;
  const roots = await realRoots(ctx);
  if (!roots.some((r) => isWithin(home, r))) return undefined;
  if (isWithin(realPath, home) && realPath !== home && path.relative(home, realPath).split(path.sep)[0].startsWith('.')) return HOME_DOT_REASON;
  return homeDotLinkTo(home, roots, realPath);
}

async function realRoots(ctx: ProtectContext): Promise<string[]> {
  const out: string[] = [];
  for (const root of ctx.roots) {
    const real = await linkFreeReal(path.resolve(root));
    if (real !== undefined) out.push(real);
  }
  return out;
}

/** The dot entry of `home` that is a symlink leading to `realPath` or above it, as a reason naming the link. */
async function homeDotLinkTo(home: string, roots: readonly string[], realPath: string): Promise<string | undefined> {
  let entries: Dirent[];
  try {
    entries = await fsp.readdir(home, { withFileTypes: true });
  } catch {
    return undefined;
  }
  for (const e of entries) {
    if (!e.name.startsWith('.') || !e.isSymbolicLink()) continue;
    const link = path.join(home, e.name);
    const target = await physicalPath(link);
    if (!target.ok || !dotLinkTargetProtected(target.path, home, roots)) continue;
    if (isWithin(realPath, target.path)) return `${HOME_DOT_REASON}; this path is what ${link} links to`;
  }
  return undefined;
}

/**
 * Existing absolute paths with no symlink on the way, each its own real path: resolved once per
 * process. Only these are kept. A link on the way (`HOME=/work/me -> /work/real`) can be pointed elsewhere
 * by a confined command when it sits in a root (it is no protected name), which would move the
 * home folder the shell reads under a cached answer: such a path is resolved at every check. A
 * path with no link stays its own real path unless a folder on it is renamed or replaced by a
 * link, which a confined command cannot do: a folder above every root is read-only to it, a
 * root is a mount point, and a home folder inside a root is guarded with the folders up to the
 * root pinned (`sandbox/protected-mounts.ts`). An unconfined command could, but it can also
 * write the file itself. Bounded: roots and home are few; past the bound nothing more is kept.
 */
const LINK_FREE = new Set<string>();
const MAX_LINK_FREE = 256;

async function linkFreeReal(absolute: string): Promise<string | undefined> {
  if (LINK_FREE.has(absolute)) return absolute;
  // Kept only when it exists: a missing home folder may yet be made, as a link, by a command.
  const existing = await fsp.realpath(absolute).catch(() => undefined);
  if (existing === absolute) {
    if (LINK_FREE.size < MAX_LINK_FREE) LINK_FREE.add(absolute);
    return absolute;
  }
  const real = await physicalPath(absolute);
  return real.ok ? real.path : undefined;
}

function firstWithin(p: string, dirs: readonly string[]): string | undefined {
  return dirs.find((d) => isWithin(p, d));
}

/**
 * Below the root (the walk the OS sandbox uses, decision 0042): a symlinked protected entry
 * (`pkg/.vscode -> ../shared/editor`) protects its target, and each nested repository its
 * hooks folders (husky's dispatch folder included).
 */
async function nestedAliasOf(realPath: string, rootGiven: string): Promise<string | undefined> {
  const rootReal = await physicalPath(rootGiven);
  const root = rootReal.ok ? rootReal.path : rootGiven;
  const tree = await protectedTree(root);
  for (const e of tree.entries) {
    if (e.dir === root) continue; // aliasOfProtected looked at the root's own entries, links inside them too
    if (e.kind === 'link') {
      const target = await physicalPath(e.path);
      if (target.ok && isWithin(realPath, target.path)) return protectedNameReason(e.name);
    }
    if (e.name === '.git' && firstWithin(realPath, await repoHooksDirs(e.dir))) return HOOKS_PATH_REASON;
  }
  return undefined;
}

/** Why a root-relative path is protected, or undefined. Case-insensitive, like the file systems VS Code runs on. */
export function protectedReason(relative: string): string | undefined {
  const parts = relative.split(/[\\/]/).filter((s) => s !== '' && s !== '.');
  for (const [i, part] of parts.entries()) {
    const reason = protectedNameReason(part, i === parts.length - 1 ? 'entry' : 'folder');
    if (reason) return reason;
  }
  return undefined;
}

/**
 * The folders whose contents are protected, as real paths: each protected entry of the root
 * (followed when it is a symlink: `.vscode -> config/editor` makes `config/editor` protected)
 * and the repository's hooks folder. Within each, symlinks lead further (`.git/hooks ->
 * ../tools/hooks`, `.vscode/settings.json -> ../shared/settings.json`): their targets are
 * protected as well, however deep the link sits.
 */
async function aliasOfProtected(realPath: string, rootGiven: string): Promise<string | undefined> {
  const rootReal = await physicalPath(rootGiven);
  const root = rootReal.ok ? rootReal.path : rootGiven;
  let entries: Dirent[];
  try {
    entries = await fsp.readdir(root, { withFileTypes: true });
  } catch {
    return undefined;
  }
  const folders: { dir: string; reason: string; git: boolean }[] = [];
  for (const entry of entries) {
    const name = foldName(entry.name);
    const reason = protectedNameReason(entry.name);
    if (!reason) continue;
    const target = await physicalPath(path.join(root, entry.name));
    if (!target.ok) continue;
    if (isWithin(realPath, target.path)) return reason;
    folders.push({ dir: target.path, reason, git: name === '.git' });
  }
  for (const hooks of await hooksDirsOf(root)) {
    if (isWithin(realPath, hooks)) return HOOKS_PATH_REASON;
    folders.push({ dir: hooks, reason: HOOKS_PATH_REASON, git: false });
  }
  for (const folder of folders) {
    const reason = await linkedOutOf(realPath, folder);
    if (reason) return reason;
  }
  return undefined;
}

/** Whether a symlink inside `folder` (breadth first, bounded, `.git` data skipped) leads to `realPath`. */
async function linkedOutOf(realPath: string, folder: { dir: string; reason: string; git: boolean }): Promise<string | undefined> {
  const queue = [folder.dir];
  let seen = 0;
  while (queue.length && seen < MAX_SCANNED) {
    const dir = queue.shift()!;
    let entries: Dirent[];
    try {
      entries = await fsp.readdir(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      if (++seen > MAX_SCANNED) break;
      const abs = path.join(dir, entry.name);
      if (entry.isSymbolicLink()) {
        const target = await physicalPath(abs);
        if (target.ok && isWithin(realPath, target.path)) return folder.reason;
      } else if (entry.isDirectory() && !(folder.git && dir === folder.dir && GIT_DATA.has(entry.name))) {
        queue.push(abs);
      }
    }
  }
  return undefined;
}
