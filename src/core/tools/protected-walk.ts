import * as path from 'node:path';
import { entryKind, kindOf, type ListingStamp, relist } from './dir-listing';
import { foldName, namesGeneration, protectedNameReason } from './protected-names';

// Every protected entry (`protected-names.ts`: `.git`, `.vscode`, …, `.mcp.json`, `*.code-workspace`, names a deployment adds) at any depth of a
// root, found by a bounded walk (decision 0042). The OS sandbox mounts them read-only for each
// command, and the file tools follow the symlinked ones and read the nested repositories' hooks
// folders, so both protect the same set.
//
// The walk runs at every command start, but cheaply: each directory's listing is cached with
// the directory's inode and ctime, and re-read only when they changed. The ctime is the sound
// key: adding, removing or renaming an entry changes it, and unlike the mtime no process can
// set it back (`touch -d` changes the ctime too; only the clock, which needs CAP_SYS_TIME,
// could). A listing taken within CTIME_SLACK_MS of the directory's ctime is not trusted, since
// a change in the same clock tick leaves the ctime as it was (git's "racy index" problem).
// So a nested repository a command creates is found by the next command's walk, before its hooks
// can be written.

/** Directories looked at per root and walk, and how deep: past either, the walk stops and says so. */
export interface WalkLimits {
  maxDirs: number;
  maxDepth: number;
}
export const WALK_LIMITS: WalkLimits = { maxDirs: 10_000, maxDepth: 24 };
/**
 * Folders whose contents are not walked: package trees, huge and written by installers. A
 * repository or `.vscode` inside one is not protected (said in decision 0042): nothing runs its
 * hooks or reads its settings unless a user opens it as a workspace of its own.
 */
const NOT_WALKED = new Set(['node_modules', '.venv', '__pycache__', '.tox', '.mypy_cache', '.pytest_cache', '.gradle', '.next', '.turbo']);
/** Folders listed between two turns of the event loop (the walk is synchronous, see `listing`). */
const YIELD_EVERY = 500;
const CTIME_SLACK_MS = 1000;

export interface ProtectedEntry {
  /** Absolute path (under the root as given, not resolved). */
  path: string;
  /** The directory holding it. */
  dir: string;
  kind: 'dir' | 'file' | 'link' | 'other';
  /** Folded name: a protected folder's, `.mcp.json`, or one ending in `.code-workspace`. */
  name: string;
}

export interface ProtectedTree {
  entries: ProtectedEntry[];
  /** Set when a bound stopped the walk: what was not looked at, in a sentence for the model and the log. */
  truncated?: string;
  /**
   * With `WalkOptions.appeared`: the protected entries below this root's top that this walk found
   * and the last asking walk of the root did not (a command, or anything else, made them between
   * the two), each said once. Whoever asked records them: nothing a confined command wrote becomes
   * trusted configuration (decision 0111). They travel with the walk of their own root, so two
   * workspaces' sandboxes in one process never take each other's.
   */
  appeared?: ProtectedEntry[];
  /**
   * With `WalkOptions.appeared`, when this walk hit a bound and the last asking walk of the root did
   * not (or there was none in this process): since when (ms) what appears below the root may go
   * unseen, there where the walk stops short. Whoever asked records it (`MadeRecord.recordUnsearched`):
   * a command that makes thousands of folders first must not make a `.arbor` past them trusted
   * (decision 0123). Said once per such stretch of walks.
   */
  unsearchedSince?: number;
  /**
   * Folders holding a subfolder whose name is not valid UTF-8: Node cannot name it (its name reads
   * with U+FFFD in it), so nothing below it is searched, and the sandbox makes the holding folder
   * read-only (`protected-mounts.ts`) with its other entries writable again (decision 0123).
   */
  unnamedIn?: string[];
}

interface Listing extends ListingStamp {
  subdirs: string[];
  found: { name: string; raw: string; kind: ProtectedEntry['kind'] }[];
  /** Subfolders that cannot be named (not valid UTF-8): not walked. */
  unnamed: number;
}

/** Per root: directory → its last listing (any walk's: the next walk re-reads only what changed). */
const cache = new Map<string, Map<string, Listing>>();
/** The protected names the cached listings were matched against (`namesGeneration`): a name added since makes them stale. */
let cachedGeneration = namesGeneration();

/**
 * Per root: the listings of the last walk that asked what appeared (decision 0111), and whether
 * it reached every folder (then a folder absent from it is new, not one it did not reach). Apart
 * from `cache`: a walk that does not ask (the file tools') must not use up what the next asking
 * walk would find.
 */
const askedLast = new Map<string, { listings: Map<string, Listing>; complete: boolean; at: number }>();

export interface WalkOptions {
  /**
   * Also say what appeared below the root's top since the last walk of this root that asked
   * (`ProtectedTree.appeared`): the sandbox's walks, which record it (`made-by-commands.ts`).
   */
  appeared?: boolean;
}

/** The protected entries under `root` (a real path), from cached listings where the directories did not change. */
export async function protectedTree(root: string, limits: WalkLimits = WALK_LIMITS, options: WalkOptions = {}): Promise<ProtectedTree> {
  if (cachedGeneration !== namesGeneration()) {
    // A name added or taken back: every listing is matched again. What the last asking walk of each
    // root saw stays: what a command made since is still found as appeared (an entry of a newly
    // added name counts as appeared too, which only records it: the record's readers ask about the
    // built-in folders alone).
    cache.clear();
    cachedGeneration = namesGeneration();
  }
  const before = cache.get(root) ?? new Map<string, Listing>();
  const started = Date.now();
  const lastAsked = options.appeared ? askedLast.get(root) : undefined;
  const asked = options.appeared ? (lastAsked ?? { listings: new Map<string, Listing>(), complete: false, at: started }) : undefined;
  const after = new Map<string, Listing>();
  const entries: ProtectedEntry[] = [];
  const appeared: ProtectedEntry[] = [];
  const unnamedIn: string[] = [];
  let level = [root];
  let visited = 0;
  let truncated: string | undefined;
  for (let depth = 0; level.length > 0; depth++) {
    if (depth > limits.maxDepth) {
      truncated = `folders deeper than ${limits.maxDepth} levels (e.g. ${level[0]}) were not searched`;
      break;
    }
    if (visited + level.length > limits.maxDirs) {
      truncated = `only the first ${limits.maxDirs} folders were searched (the walk stopped ${depth} levels down)`;
      level = level.slice(0, limits.maxDirs - visited);
    }
    visited += level.length;
    const listings: (Listing | undefined)[] = [];
    for (let i = 0; i < level.length; i++) {
      if (i > 0 && i % YIELD_EVERY === 0) await new Promise((r) => setImmediate(r));
      listings.push(listing(level[i], before.get(level[i])));
    }
    const next: string[] = [];
    level.forEach((dir, i) => {
      const l = listings[i];
      if (!l) return;
      after.set(dir, l);
      // New since the last walk that asked: a listing other than that walk's (or a folder that walk
      // did not have) with a protected name it did not hold. The top's own names are not: a command cannot make them
      // (each missing one has a read-only stand-in), and the stand-ins come and go there.
      const was = asked?.listings.get(dir);
      const fresh =
        asked && dir !== root && (was ? was !== l : asked.complete) ? l.found.filter((f) => !was?.found.some((o) => o.raw === f.raw && o.kind === f.kind)) : [];
      for (const f of l.found) entries.push({ path: path.join(dir, f.raw), dir, kind: f.kind, name: f.name });
      for (const f of fresh) appeared.push({ path: path.join(dir, f.raw), dir, kind: f.kind, name: f.name });
      for (const sub of l.subdirs) next.push(path.join(dir, sub));
      if (l.unnamed > 0) unnamedIn.push(dir);
    });
    if (truncated) break;
    level = next;
  }
  // Past a bound, what an earlier walk found stays protected: a command cannot hide a known
  // repository by making thousands of folders that use up the walk before it is reached.
  if (truncated) for (const e of carriedOver(before, after)) entries.push(e);
  cache.set(root, after);
  // A folder Node cannot name hides what is below it from this walk, as a bound does (the sandbox makes it read-only).
  const stoppedShort = !!truncated || unnamedIn.length > 0;
  if (asked) askedLast.set(root, { listings: after, complete: !stoppedShort, at: started });
  // Unseen from the last whole walk on (or from this one, the first: before it nothing is known anyway).
  const unsearchedSince = asked && stoppedShort && (!lastAsked || lastAsked.complete) ? (lastAsked?.at ?? started) : undefined;
  const unseen = 'a .git, .vscode or .arbor there that no earlier walk found is writable by commands';
  return {
    entries,
    ...(truncated ? { truncated: `protected folders below ${root}: ${truncated}; ${unseen}` } : {}),
    ...(asked ? { appeared } : {}),
    ...(unsearchedSince !== undefined ? { unsearchedSince } : {}),
    ...(unnamedIn.length > 0 ? { unnamedIn } : {}),
  };
}

/** The protected entries of folders an earlier walk listed and this one did not reach, where they still exist. */
function carriedOver(before: Map<string, Listing>, after: Map<string, Listing>): ProtectedEntry[] {
  const out: ProtectedEntry[] = [];
  for (const [dir, l] of before) {
    if (after.has(dir) || l.found.length === 0) continue;
    after.set(dir, { ...l, trusted: false });
    for (const f of l.found) {
      const p = path.join(dir, f.raw);
      const kind = kindOf(p);
      if (kind) out.push({ path: p, dir, kind, name: f.name });
    }
  }
  return out;
}

/** One folder's listing, from the cache when its inode and ctime are unchanged (`dir-listing.ts`). */
function listing(dir: string, cached: Listing | undefined): Listing | undefined {
  const read = relist(dir, cached, Date.now() - CTIME_SLACK_MS);
  if (!read || 'cached' in read) return read?.cached;
  const subdirs: string[] = [];
  const found: Listing['found'] = [];
  let unnamed = 0;
  for (const d of read.dirents) {
    const kind = entryKind(dir, d);
    if (!kind) continue;
    if (protectedNameReason(d.name)) {
      // Not descended: a protected folder is mounted read-only whole.
      found.push({ name: foldName(d.name), raw: d.name, kind });
    } else if (kind === 'dir' && !NOT_WALKED.has(d.name)) {
      if (unnameable(dir, d.name)) unnamed++;
      else subdirs.push(d.name);
    }
  }
  return { ...read.stamp, subdirs, found, unnamed };
}

/**
 * A name read from a listing that names nothing: bytes that are not valid UTF-8 read as U+FFFD, and
 * the path made of that string is another (missing) one. A real U+FFFD in a name is there.
 */
export function unnameable(dir: string, name: string): boolean {
  return name.includes('\uFFFD') && kindOf(path.join(dir, name)) === undefined;
}
