import type { Dirent } from 'node:fs';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { dotGitEndsSearch } from '../bare-found';
import { hooksDirsOf, repoHooksDirs } from '../git-hooks';
import { dotLinkTargetProtected, foldName, standInNames } from '../protected-names';
import { type ProtectedEntry, type ProtectedTree, protectedTree, unnameable, type WalkLimits, type WalkOptions } from '../protected-walk';
import { isWithin, type PhysicalWay, physicalPathSync } from '../real-path';
import { shadowUsers } from './shadows';
import { othersStandIns, standsOn } from './stand-in-registry';

// Which paths inside writable roots a confined command must not change (the OS side of
// `tools/protected-paths.ts`, decision 0042): every protected name (`protected-names.ts`: folders,
// and `.mcp.json`, decision 0112) and `*.code-workspace` at any depth (the walk in `protected-walk.ts`), a worktree's or
// submodule's real git directory, each repository's hooks folders (husky's dispatch folder
// included), and paths the deployment adds (the store). A missing protected folder at
// the top of a root gets an empty read-only stand-in, so a command cannot create one there.
//
// A read-only mount protects what is under it, not the name it stands at. A mount point itself
// cannot be renamed or removed, but a folder *above* one can: `mv sub elsewhere; git init sub`
// would leave the user's `git commit` in `sub` running a new repository's hooks. So every folder
// between a root and a protected path is bound onto itself ("pinned"), which makes it a mount
// point too. And a symlink (`.vscode -> cfg`) cannot be mounted on at all (bubblewrap follows
// it and mounts on `cfg`), so the folder holding it is made read-only ("guarded") and its
// other entries are bound writable again: the link cannot be removed or replaced.

/** A root whose walk stopped short at a bound, and since when what appears below it may go unseen (decision 0123). */
export interface Unsearched {
  root: string;
  since: number;
}

export interface ProtectedMounts {
  /** Existing protected paths (real paths) to mount read-only. */
  readOnly: string[];
  /** Missing protected directories to cover with an empty read-only directory. */
  shadow: string[];
  /** Folders above protected paths, bound onto themselves (writable) so they cannot be renamed or removed. */
  pinned: string[];
  /** Folders holding a symlinked protected name: read-only, with `children` (their other entries) bound writable again. */
  guarded: { dir: string; children: string[] }[];
  /** What the command should be told: a bound the walk hit, a folder where new entries cannot be made. */
  notes: string[];
}

/** Entries of a guarded folder bound writable again; past this the rest stay read-only (and a note says so). */
export const MAX_GUARDED_CHILDREN = 1000;

/** Why a folder is guarded (read-only, its entries bound writable again). */
type GuardKind = 'home' | 'unnamed' | 'link' | 'homeLink' | 'homeDotLink';

interface GuardRule {
  /** A folder guarded for several kinds follows the lowest rank's rule and note. */
  rank: number;
  /** Which of its entries are bound writable again (all of them when absent). */
  keeps?: (child: string) => boolean;
  /** What the command is told; `entries`: how many its folder held that could be bound writable. */
  note(dir: string, entries: number): string;
}

/** One row per kind of guard: a kind without its rule is a compile error. */
const GUARDS: { readonly [K in GuardKind]: GuardRule } = {
  // The home folder inside a root: its dot entries are what the user's shell, git and desktop run next.
  home: {
    rank: 0,
    keeps: (child) => !path.basename(child).startsWith('.'),
    note: (dir) =>
      `${dir} is your home folder, inside the workspace: its dot files and folders (shell profiles, .gitconfig, .config, .ssh) are read-only to commands and none can be made, and no entry can be created, renamed or removed directly in it (its other folders and files stay writable); open a project folder inside it as the workspace instead`,
  },
  // A subfolder the walk cannot name (not valid UTF-8): it stays read-only, whole.
  unnamed: {
    rank: 1,
    note: (dir) =>
      `${dir} holds a folder whose name is not valid UTF-8, which Arbor cannot search for protected names: that folder is read-only to commands, and no entry can be created, renamed or removed directly in ${dir}; rename it to a valid name to make it writable again`,
  },
  // A symlinked protected name (or a linked `HEAD` at a bare-looking top): a link cannot be mounted on.
  link: {
    rank: 2,
    note: (dir, entries) =>
      `${dir} holds a symlinked protected name, so commands cannot create, rename or remove entries directly in it (its existing files and folders stay writable)` +
      (entries > MAX_GUARDED_CHILDREN ? `; only its first ${MAX_GUARDED_CHILDREN} entries stay writable` : '') +
      '; create files there with write_file',
  },
  // A symlink on `$HOME`'s way: pointed elsewhere, the next shell would read another folder's dot files.
  homeLink: {
    rank: 3,
    note: (dir, entries) =>
      `${dir} holds a symlink on the way to your home folder (${os.homedir()}), so commands cannot create, rename or remove entries directly in it and the link keeps leading where it does (its existing files and folders stay writable)` +
      (entries > MAX_GUARDED_CHILDREN ? `; only its first ${MAX_GUARDED_CHILDREN} entries stay writable` : '') +
      '; create files there with write_file, or set HOME to the real path of your home folder',
  },
  // A symlink on the way from a linked dot entry of the home folder (`~/.bashrc -> dotfiles/bashrc`) to what it leads to.
  homeDotLink: {
    rank: 4,
    note: (dir, entries) =>
      `${dir} holds a symlink on the way to what a dot file of your home folder (${os.homedir()}) links to, so commands cannot create, rename or remove entries directly in it and the link keeps leading where it does (its existing files and folders stay writable)` +
      (entries > MAX_GUARDED_CHILDREN ? `; only its first ${MAX_GUARDED_CHILDREN} entries stay writable` : '') +
      '; create files there with write_file',
  },
};

// The reads below are synchronous on purpose, as in `protected-walk.ts` and `git-hooks.ts`: a
// realpath or a small read costs microseconds, while a hop through libuv's thread pool per
// nested repository cost milliseconds a command on a loaded machine (50 nested repositories:
// ~6 ms of the command's start, decision 0066).
function real(p: string): string | undefined {
  try {
    return fs.realpathSync.native(p);
  } catch {
    return undefined;
  }
}

/** `.git` as a file (`gitdir: …`): the directory it points at, and that directory's `commondir` (hooks live there). */
function gitDirsOf(dotGit: string): string[] {
  let text: string;
  try {
    const st = fs.lstatSync(dotGit);
    if (!st.isFile()) return [];
    text = fs.readFileSync(dotGit, 'utf8');
  } catch {
    return [];
  }
  const m = /^gitdir:\s*(.+?)\s*$/m.exec(text);
  if (!m) return [];
  const gitdir = real(path.resolve(path.dirname(dotGit), m[1]));
  if (!gitdir) return [];
  const out = [gitdir];
  try {
    const common = fs.readFileSync(path.join(gitdir, 'commondir'), 'utf8').trim();
    const dir = common ? real(path.resolve(gitdir, common)) : undefined;
    if (dir) out.push(dir);
  } catch {
    // No commondir: a submodule's git directory holds its own hooks.
  }
  return out;
}

/**
 * The protected mounts for `roots` (real paths), plus `extra` paths (e.g. the session store)
 * when they exist inside a root. Paths outside every root need nothing: they are read-only anyway.
 * With `walk.appeared`, also what appeared below the roots' tops since their last asking walk.
 */
export async function protectedMounts(
  roots: readonly string[],
  extra: readonly string[] = [],
  limits?: WalkLimits,
  walk: WalkOptions = {},
): Promise<ProtectedMounts & Pick<ProtectedTree, 'appeared'> & { unsearched?: Unsearched[] }> {
  const appeared: ProtectedEntry[] = [];
  const unsearched: Unsearched[] = [];
  const readOnly = new Set<string>();
  const shadow = new Set<string>();
  /** Guarded folders and why (the lowest-ranked kind when there are several). */
  const guardedDirs = new Map<string, GuardKind>();
  const guard = (dir: string, kind: GuardKind): void => {
    const was = guardedDirs.get(dir);
    if (was === undefined || GUARDS[kind].rank < GUARDS[was].rank) guardedDirs.set(dir, kind);
  };
  const notes: string[] = [];
  // Stand-ins of this process's commands and of other Arbor processes': empty folders the host
  // removes when the last command on them ends, so a command must get a stand-in of its own there
  // (its own read-only mount, and a say in the removal), never a read-only mount of the folder
  // that the removal would dissolve under it.
  const others = othersStandIns();
  const standIn = (p: string): boolean => shadowUsers.has(p) || standsOn(others, p);
  const rootOf = (p: string): string | undefined => roots.find((r) => isWithin(p, r));
  const protect = (p: string | undefined): void => {
    if (p && rootOf(p)) readOnly.add(p);
  };
  // A configured hooks folder not made yet: a stand-in, like a missing `.git`. Where its parent is
  // missing too (`core.hooksPath = .config/hooks` and no `.config`), the stand-in goes on the
  // highest missing folder on the way, so no command can make the path git runs hooks from (a
  // stand-in is made where its parent exists: bubblewrap would make missing parents on the host,
  // and nothing would remove them).
  const protectHooks = (dirs: readonly string[]): void => {
    for (const d of dirs)
      protectOrStandIn(
        d,
        (missing) =>
          `${missing} cannot be created by commands: git's core.hooksPath points into it (${d}), and a hooks folder is protected; create it with write_file (it asks first) or point core.hooksPath elsewhere`,
      );
  };
  // A path inside a root that must not change: read-only when it exists, else a stand-in on the
  // highest missing folder of its way (`note` says why, when that is not the path itself).
  const protectOrStandIn = (d: string, note: (missing: string) => string): void => {
    const root = rootOf(d);
    if (!root) return;
    // Another command's stand-in, on the folder or above it: share it.
    let shared: string | undefined;
    for (let a = d; a !== root && !shared; a = path.dirname(a)) if (standIn(a)) shared = a;
    if (shared) shadow.add(shared);
    else if (fs.existsSync(d)) readOnly.add(d);
    else {
      let missing = d;
      while (path.dirname(missing) !== root && !fs.existsSync(path.dirname(missing))) missing = path.dirname(missing);
      shadow.add(missing);
      const why = missing !== d ? note(missing) : '';
      if (why) notes.push(why);
    }
  };
  // The top of a root whose `.git` git does not stop at (none, or an empty one) must never become a
  // bare repository to the user's git (decision 0123, amended s58): a `HEAD` there is what git reads
  // first, in that folder itself (a `commondir` moves only `objects/` and `refs/`). A missing one gets
  // a stand-in (git cannot read a folder as a ref); an existing file is read-only, a folder pinned,
  // and a link (which bubblewrap cannot mount on) guards the top, as a symlinked protected name does.
  const pinnedHeads: string[] = [];
  const bareTop = (root: string): void => {
    if (dotGitEndsSearch(root)) return;
    const head = path.join(root, 'HEAD');
    const st = fs.lstatSync(head, { throwIfNoEntry: false });
    if (!st || standIn(head)) shadow.add(head);
    else if (st.isSymbolicLink()) guard(root, 'link');
    else if (st.isDirectory()) pinnedHeads.push(head);
    else readOnly.add(head);
  };
  for (const root of roots) {
    const tree = await protectedTree(root, limits, walk);
    if (tree.truncated) notes.push(tree.truncated);
    if (tree.appeared) appeared.push(...tree.appeared);
    for (const d of tree.unnamedIn ?? []) guard(d, 'unnamed');
    if (tree.unsearchedSince !== undefined) unsearched.push({ root, since: tree.unsearchedSince });
    const presentAtTop = new Set<string>();
    const entries = tree.entries.filter((e) => !standIn(e.path));
    for (const e of entries) {
      if (e.dir === root) presentAtTop.add(e.name);
      // A symlinked entry (`.vscode -> config/editor`) protects what it points at, and its folder guards the link.
      if (e.kind === 'link') guard(e.dir, 'link');
    }
    for (const e of entries) for (const p of protectedBy(e)) protect(p);
    for (const e of entries) if (e.name === '.git' && e.dir !== root) protectHooks(await repoHooksDirs(e.dir, e.kind === 'dir' ? e.path : undefined));
    for (const name of standInNames()) if (!presentAtTop.has(foldName(name))) shadow.add(path.join(root, name));
    bareTop(root);
    // The hooks folders of the repository holding the root (`core.hooksPath`, e.g. `.husky`;
    // with husky's `.husky/_` also `.husky`): they run code on the next git command, like `.git/hooks`.
    protectHooks(await hooksDirsOf(root));
  }
  for (const p of extra) protect(real(p));
  // The home folder inside a root (a workspace that is ~, or above it): its dot files are what the
  // user's shell, git and desktop run next (`.bashrc`, `.gitconfig`, `.config/autostart`), made or
  // changed. Guarded: read-only, its own folders and files bound writable again, never its dot entries.
  const pinnedWay: string[] = [];
  // `$HOME`'s way as the kernel takes it. A path realpath cannot resolve (`x/../home` with no `x`)
  // still leads to an existing folder once a command makes what is missing: that folder is the
  // home folder all the same, and each missing entry (or file) the way leaves again by `..` gets a
  // stand-in (read-only where it exists), or the command makes `x` (as a link: `..` then leads
  // elsewhere). One on the way to a missing end is the missing home folder's (below).
  const homeWay: PhysicalWay = { links: [], dirs: [], notDirs: [] };
  // Not `path.resolve`: it drops `x/..` by text, where the kernel enters `x` (a link, maybe) and climbs from what it reaches.
  // A HOME that is its own real path (the usual case) has nothing on its way to look at.
  const realHome = real(os.homedir());
  const homeResolved =
    realHome === os.homedir()
      ? { ok: true as const, path: realHome }
      : physicalPathSync(path.isAbsolute(os.homedir()) ? os.homedir() : path.resolve(os.homedir()), homeWay);
  const homeEnd = homeResolved.ok ? homeResolved.path : undefined;
  const home = realHome ?? (homeEnd !== undefined && fs.statSync(homeEnd, { throwIfNoEntry: false })?.isDirectory() ? homeEnd : undefined);
  for (const d of homeWay.notDirs ?? [])
    if (homeEnd !== undefined && !isWithin(homeEnd, d) && rootOf(d) && !roots.includes(d)) {
      protectOrStandIn(d, () => '');
      notes.push(
        `${d} cannot be created or replaced by commands: your home folder's path (${os.homedir()}) passes through it; set HOME to the real path of your home folder`,
      );
    }
  if (home && rootOf(home) && !standIn(home)) {
    guard(home, 'home');
    protectDotLinkTargets(home, roots, { guard, protect: protectOrStandIn, rootOf, standIn, pinnedWay: (d) => pinnedWay.push(d) });
  }
  // A home folder missing when the command starts (decision 0123, amended s59): made by the command
  // (`mkdir -p ~/.config/autostart`, or a link to a folder of its choosing), the next shell would
  // read its dot files. A stand-in holds its place while the command runs, removed after, as for a
  // missing hooks folder (or, where its parent is missing too, the highest missing folder on its way).
  // An existing home folder outside every root (the usual case) costs nothing more.
  else if (!home || standIn(home)) {
    const missing = homeEnd;
    if (missing && rootOf(missing) && !roots.includes(missing) && (!fs.existsSync(missing) || standIn(missing))) {
      protectOrStandIn(missing, () => '');
      notes.push(
        `your home folder (${os.homedir()}) does not exist and lies inside the workspace: commands cannot create it, nor anything in it; create it outside Arbor, or set HOME to an existing folder`,
      );
    }
  }
  // `$HOME` through symlinks (`/w/me -> /w/a/b`, `/w/a -> /w/c`): guarding the folder it leads to
  // now is not enough, since a command could point a link on the way elsewhere (or move the folder
  // holding it and leave a new link of that name) and write the new target's dot files in the same
  // run. Each link on the way that lies in a root has its folder guarded, so it stays where it is
  // and leads where it does, and each folder the way enters there is pinned (one it leaves by `..`
  // too), so none can be moved and replaced by a link. A home path with no link costs nothing more.
  if (home !== os.homedir()) {
    for (const link of homeWay.links) if (rootOf(link)) guard(path.dirname(link), 'homeLink');
    for (const d of homeWay.dirs) if (rootOf(d) && !roots.includes(d) && !standIn(d)) pinnedWay.push(d);
  }

  const guarded: ProtectedMounts['guarded'] = [];
  for (const [dir, kind] of [...guardedDirs].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const rule = GUARDS[kind];
    const children = writableChildren(dir, standIn).filter((c) => rule.keeps?.(c) ?? true);
    guarded.push({ dir, children: children.slice(0, MAX_GUARDED_CHILDREN) });
    notes.push(rule.note(dir, children.length));
  }
  // A stand-in whose folder is read-only anyway (guarded, or inside a protected path such as a
  // hooks folder configured inside `.git`) is not needed, and bwrap could not make it there.
  const shadows = [...shadow].filter((p) => !guardedDirs.has(path.dirname(p)) && ![...readOnly].some((ro) => isWithin(path.dirname(p), ro))).sort();
  // A stand-in's folders are pinned too: a stand-in, like a read-only mount, protects the name it
  // stands at only while its folder stays (`mv lib/tools t; mkdir -p lib/tools/hooks` put a hook
  // where `core.hooksPath = tools/hooks` points, past the stand-in that moved along).
  const pinned = new Set<string>([...pinnedHeads.filter((p) => !guardedDirs.has(path.dirname(p))), ...pinnedWay]);
  for (const p of [...readOnly, ...guardedDirs.keys(), ...shadows, ...pinnedWay]) {
    const root = rootOf(p);
    if (!root) continue;
    for (let d = path.dirname(p); d !== root && isWithin(d, root); d = path.dirname(d)) pinned.add(d);
  }
  return { readOnly: [...readOnly].sort(), shadow: shadows, pinned: [...pinned].sort(), guarded, notes, ...(walk.appeared ? { appeared, unsearched } : {}) };
}

interface DotLinkOps {
  guard(dir: string, kind: GuardKind): void;
  protect(p: string, note: (missing: string) => string): void;
  rootOf(p: string): string | undefined;
  standIn(p: string): boolean;
  pinnedWay(dir: string): void;
}

/**
 * The home folder inside a root (decision 0123, amended s59): a dot entry of it that is a symlink
 * (`~/.bashrc -> dotfiles/bashrc`, as GNU stow makes them) keeps its link (the folder is guarded),
 * and what it leads to inside a root gets the dot entry's protection: read-only (a stand-in where
 * it is missing), each link on the way there kept (its folder guarded) and each folder entered
 * pinned, as for `$HOME`'s own way. Only the home folder's own entries that are links are resolved
 * (one read of the folder the guard lists anyway), never the tree. A target at or above the home
 * folder is left to the home guard (making it read-only would take the whole workspace).
 */
function protectDotLinkTargets(home: string, roots: readonly string[], ops: DotLinkOps): void {
  let entries: Dirent[];
  try {
    entries = fs.readdirSync(home, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries) {
    if (!e.name.startsWith('.') || !e.isSymbolicLink()) continue;
    const link = path.join(home, e.name);
    const way: PhysicalWay = { links: [], dirs: [] };
    const target = physicalPathSync(link, way);
    if (!target.ok) continue;
    // The way is kept whatever the target: a link in a root leading out (`dots/l -> /elsewhere`), replaced, would lead back in.
    for (const l of way.links) if (l !== link && ops.rootOf(l)) ops.guard(path.dirname(l), 'homeDotLink');
    for (const d of way.dirs) if (ops.rootOf(d) && !roots.includes(d) && !ops.standIn(d) && !isWithin(home, d)) ops.pinnedWay(d);
    if (!dotLinkTargetProtected(target.path, home, roots)) continue;
    ops.protect(
      target.path,
      (missing) =>
        `${missing} cannot be created by commands: your home folder's ${e.name} links into it (${target.path}); create it with write_file (it asks first)`,
    );
  }
}

/**
 * What one protected entry makes read-only: itself (a symlink: its target), and for a `.git`
 * file the git directory it names. The walk only descends real folders of a real root, so a
 * non-link entry's path is real.
 */
function protectedBy(e: ProtectedEntry): string[] {
  const out: string[] = [];
  const self = e.kind === 'link' ? real(e.path) : e.path;
  if (self) out.push(self);
  if (e.name !== '.git') return out;
  if (e.kind !== 'dir') out.push(...gitDirsOf(e.path));
  return out;
}

/** The entries of a guarded folder that can be bound writable again: folders and files (a symlink cannot be mounted on). */
function writableChildren(dir: string, standIn: (p: string) => boolean): string[] {
  let entries: Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  // Another command's stand-in (an empty `.arbor` it mounted) stays read-only: writable, it could be filled before that command removes it.
  // One whose name is not valid UTF-8 cannot be named to bubblewrap, and stays read-only with all below it.
  return entries
    .filter((e) => (e.isDirectory() || e.isFile()) && !standIn(path.join(dir, e.name)) && !unnameable(dir, e.name))
    .map((e) => path.join(dir, e.name))
    .sort();
}
