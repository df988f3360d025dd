import type { Dirent } from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { isWithin, physicalPath } from './real-path';
import type { ToolContext } from './tool';

// Which write targets need the user's approval in every sandbox mode (decision 0005, 0022):
// files that configure the editor, git or Arbor, found by name, through the symlinks that
// alias them, through the repository's configured hooks folder, and the host's own paths.

export type ProtectContext = Pick<ToolContext, 'roots' | 'protectedPaths'>;

/** Directories inside a root whose contents configure the editor, git or Arbor itself. */
const PROTECTED_DIRS: ReadonlyMap<string, string> = new Map([
  ['.git', "'.git' holds the repository's config and hooks; a hook runs code on the next git command"],
  ['.vscode', "'.vscode' holds VS Code workspace settings and tasks; changing them can widen what runs without asking"],
  ['.arbor', "'.arbor' holds Arbor's own settings; an agent must not change its own permissions"],
]);
/** The protected directory names, folded (the OS sandbox protects the same ones). */
export const PROTECTED_DIR_NAMES: readonly string[] = [...PROTECTED_DIRS.keys()];
export const WORKSPACE_FILE_SUFFIX = '.code-workspace';
const WORKSPACE_FILE_REASON = "a '.code-workspace' file holds VS Code workspace settings and tasks; changing it can widen what runs without asking";

const HOOKS_PATH_REASON = "the repository's hooks folder (git config core.hooksPath): a hook runs code on the next git command";

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
  for (const extra of ctx.protectedPaths ?? []) {
    const real = await physicalPath(path.resolve(extra.path));
    if (real.ok && isWithin(r.realPath, real.path)) return extra.reason;
  }
  for (const root of ctx.roots) {
    const reason = await aliasOfProtected(r.realPath, path.resolve(root));
    if (reason) return reason;
  }
  return undefined;
}

/** Why a root-relative path is protected, or undefined. Case-insensitive, like the file systems VS Code runs on. */
export function protectedReason(relative: string): string | undefined {
  const parts = relative.split(/[\\/]/).filter((s) => s !== '' && s !== '.');
  for (const part of parts) {
    const reason = PROTECTED_DIRS.get(foldName(part));
    if (reason) return reason;
  }
  const last = parts.length ? foldName(parts[parts.length - 1]) : '';
  if (last.endsWith(WORKSPACE_FILE_SUFFIX)) return WORKSPACE_FILE_REASON;
  return undefined;
}

/** Lower case, and trailing dots and spaces dropped (Windows ignores them: `.git.` is `.git`). */
export function foldName(name: string): string {
  return name.toLowerCase().replace(/[. ]+$/, (m) => (m.length === name.length ? m : ''));
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
    const reason = PROTECTED_DIRS.get(name) ?? (name.endsWith(WORKSPACE_FILE_SUFFIX) ? WORKSPACE_FILE_REASON : undefined);
    if (!reason) continue;
    const target = await physicalPath(path.join(root, entry.name));
    if (!target.ok) continue;
    if (isWithin(realPath, target.path)) return reason;
    folders.push({ dir: target.path, reason, git: name === '.git' });
  }
  const hooks = await hooksPathOf(root);
  if (hooks) {
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

/**
 * The real path of the hooks folder the repository holding `root` is configured with
 * (`core.hooksPath` in its config, e.g. `.husky`), or undefined when none is set. The
 * repository is found as git finds it: the nearest `.git` (folder, or file naming the git
 * folder of a worktree) at or above the root; a worktree reads its common config too.
 */
export async function hooksPathOf(root: string): Promise<string | undefined> {
  for (let top = root; ; top = path.dirname(top)) {
    const gitDir = await gitDirAt(top);
    if (gitDir) {
      let value: string | undefined;
      for (const file of await configFiles(gitDir)) value = (await readHooksPath(file)) ?? value;
      if (!value) return undefined;
      const expanded = value.startsWith('~/') ? path.join(os.homedir(), value.slice(2)) : value;
      const real = await physicalPath(path.resolve(top, expanded));
      return real.ok ? real.path : undefined;
    }
    if (path.dirname(top) === top) return undefined;
  }
}

async function gitDirAt(dir: string): Promise<string | undefined> {
  const dotGit = path.join(dir, '.git');
  try {
    const st = await fsp.stat(dotGit);
    if (st.isDirectory()) return dotGit;
    const m = /^gitdir:\s*(.+?)\s*$/m.exec(await fsp.readFile(dotGit, 'utf8'));
    return m ? path.resolve(dir, m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** The repository config, then a worktree's own: later files override earlier ones, as in git. */
async function configFiles(gitDir: string): Promise<string[]> {
  let common = gitDir;
  try {
    common = path.resolve(gitDir, (await fsp.readFile(path.join(gitDir, 'commondir'), 'utf8')).trim());
  } catch {
    // Not a linked worktree: the git folder is the common one.
  }
  const files = [path.join(common, 'config')];
  if (common !== gitDir) files.push(path.join(gitDir, 'config.worktree'));
  return files;
}

/** `hooksPath` of the `[core]` section of one git config file (last one wins), or undefined. */
async function readHooksPath(file: string): Promise<string | undefined> {
  let text: string;
  try {
    text = await fsp.readFile(file, 'utf8');
  } catch {
    return undefined;
  }
  let inCore = false;
  let value: string | undefined;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    const section = /^\[\s*([A-Za-z0-9.-]+)(\s+"[^"]*")?\s*\]/.exec(line);
    if (section) {
      inCore = section[1].toLowerCase() === 'core' && !section[2];
      continue;
    }
    if (!inCore) continue;
    const kv = /^hookspath\s*=\s*(.*)$/i.exec(line);
    if (kv) value = unquote(kv[1]);
  }
  return value || undefined;
}

/** A git config value: quotes removed, a comment (`#`, `;`) outside quotes dropped. */
function unquote(v: string): string {
  let out = '';
  let quoted = false;
  for (let i = 0; i < v.length; i++) {
    const c = v[i];
    if (c === '"') quoted = !quoted;
    else if (!quoted && (c === '#' || c === ';')) break;
    else if (c === '\\' && i + 1 < v.length) out += v[++i];
    else out += c;
  }
  return out.trim();
}
