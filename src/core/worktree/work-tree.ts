import * as fs from 'node:fs';
import * as path from 'node:path';
import { type EntryKind, entryKind, type ListingStamp, relist } from '../tools/dir-listing';
import { OPEN_FOLDER, OPEN_ROOT, pinnable, pinnedPath, READ_AS_IS } from '../tools/pinned-path';
import { IgnoreRules, readRulesFile } from './ignore';
import { type IndexEntry, readPlainIndex, treeOf } from './index-tree';
import { objectId, writeLoose, writeLooseSync, writeObjectSync } from './objects';

// `git add -A` + `write-tree` in-process, for a plain repository (issue 25, decision 0082): the
// tree of a checkout's files now, from its own index and its files, without a git process and
// without touching the index. As git does it: an index entry whose file's stat data is what git
// recorded (and not racily so) keeps its id; any other tracked file is read and hashed; a tracked
// file that is gone is left out; every untracked file or link that no ignore rule covers is read
// and hashed; new blobs and the trees are written as loose objects. Stricter than git where that
// is cheap (every recorded time, inode, owner and size must match to the nanosecond), which can
// only mean hashing a file git would have trusted.
//
// Anything this does not reproduce exactly answers undefined and the caller runs git: an index
// `readPlainIndex` leaves to git, an assume-unchanged or submodule entry, a nested repository, a
// `.gitattributes` anywhere it walks, a symlinked `.gitignore`, an ignore pattern with a bracket
// or a backslash, a name that is not UTF-8, a tracked file that is neither a file nor a link, a
// file over FILE_CAP, more than ENTRY_CAP entries, or any error (a file vanishing under it, a
// folder or a file swapped for a link: every folder is held open from the top and its entries are
// named through it, decision 0097 amended in s51; git then runs confined, `confined.ts`).

const ENTRY_CAP = 20_000;
const FILE_CAP = 64 * 1024 * 1024;
/** Blobs up to this size are written on the calling thread; larger ones through the thread pool. */
const SYNC_WRITE = 256 * 1024;

class LeaveToGit extends Error {}

/** One walk's running state: the parsed index, the listing horizon, what it found so far. */
interface WalkState {
  index: KeptIndex;
  horizon: number;
  out: Item[];
  seen: Set<string>;
  after: Map<string, KeptListing>;
  count: number;
}

/** A recorded or fresh entry of the tree to write. */
interface Item {
  path: string;
  mode: number;
  id: Buffer;
}

export interface WorkTreeRequest {
  /** The checkout's top (a real path). */
  top: string;
  /** Its index file, and the objects folder the new objects go to. */
  index: string;
  objects: string;
  /** Absolute paths left as the index has them (the store, the worktrees folder). */
  excludes: readonly string[];
  /** The ignore lines git reads besides `.gitignore` (global excludes, `info/exclude`). */
  excludeLines: readonly string[];
  /** What the last walk of this checkout kept (updated here). */
  memo?: WalkMemo;
  /** How old a folder's (or the index's) ctime must be for its listing to be kept (default LISTING_SLACK_MS; tests make it 0). */
  slackMs?: number;
}

/**
 * The tree id of the checkout as `git add -A -- . ':(exclude)…'` on a copy of its index and
 * `write-tree` would make it, its objects written. Undefined: ask git.
 */
export async function workTreeOf(req: WorkTreeRequest): Promise<string | undefined> {
  const objectsDir = req.objects;
  const writes: Promise<void>[] = [];
  const store = (id: string, bytes: Buffer) => {
    const file = path.join(objectsDir, id.slice(0, 2), id.slice(2));
    if (bytes.length <= SYNC_WRITE) writeLooseSync(file, 'blob', bytes);
    else writes.push(writeLoose(file, 'blob', bytes));
  };
  try {
    const items = new Walk(req.top, req.index, req.excludes, req.excludeLines, store, req.memo ?? { listings: new Map() }).run(req.slackMs ?? LISTING_SLACK_MS);
    if (!items) return undefined;
    await Promise.all(writes);
    return treeOf(items, (tree) => writeObjectSync(objectsDir, 'tree', tree));
  } catch (err) {
    await Promise.allSettled(writes);
    if (err instanceof LeaveToGit || (err as NodeJS.ErrnoException).code) return undefined;
    throw err;
  }
}

/** Stores a blob (its id and bytes). */
type Store = (id: string, bytes: Buffer) => void;

/** A folder's listing kept between snapshots of one repository: read again only when the folder changed (`tools/dir-listing.ts`). */
export interface KeptListing extends ListingStamp {
  /** Each entry's name as bytes (latin1: git's order and the index's spelling) and as text (the file system's), and what it is. */
  entries: { key: string; name: string; kind: EntryKind }[];
}

/** The user's index as last parsed, with the stat data of the file it was read from. */
interface KeptIndex {
  ino: bigint;
  size: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
  entries: IndexEntry[];
  tracked: Map<string, Tracked>;
  /** Every folder holding a tracked file, at any depth. */
  trackedDirs: Set<string>;
}

/**
 * An index entry with the stat data a clean file must show, as `lstat` gives it (computed once per
 * index read, not per walk: the comparison is then a few bigint equalities), or none when the
 * entry is racily clean (recorded in the same instant as the index was written or later) and its
 * file is hashed whatever its stat data says.
 */
interface Tracked {
  e: IndexEntry;
  stat?: { mtimeNs: bigint; ctimeNs: bigint; ino: bigint; uid: bigint; gid: bigint; size: bigint };
}

/** What one walk of a checkout keeps for the next (`RepoState.memo`): its folders' listings and its parsed index. */
export interface WalkMemo {
  listings: Map<string, KeptListing>;
  index?: KeptIndex;
  /** A packed HEAD's tree, as git said it (`checkout.ts`): a loose one is read each time. */
  headTree?: { head: string; tree: string };
}

/** A listing is trusted (kept for the next walk) when its folder's ctime is older than this at the walk's start (decision 0066's slack). */
const LISTING_SLACK_MS = 2000;

class Walk {
  private readonly rules: IgnoreRules;
  private readonly skip: string[];

  constructor(
    private readonly top: string,
    private readonly indexFile: string,
    excludes: readonly string[],
    private readonly excludeLines: readonly string[],
    private readonly store: Store,
    private readonly memo: WalkMemo,
  ) {
    this.rules = new IgnoreRules(top, excludeLines);
    this.skip = excludes
      .map((p) => path.relative(top, p))
      .filter((r) => r !== '' && !r.startsWith('..') && !path.isAbsolute(r))
      .map((r) => keyOf(r.split(path.sep).join('/')));
  }

  run(slackMs: number): Item[] | undefined {
    const horizon = Date.now() - slackMs;
    const index = this.readIndex(BigInt(horizon) * 1_000_000n);
    if (!index) return undefined;
    checkLines(this.excludeLines);
    const walk: WalkState = { index, horizon, out: [], seen: new Set(), after: new Map(), count: 0 };
    // Every folder is held open from the top and read through its descriptor (decision 0097, s51):
    // a folder a command swaps for a link is not followed (ELOOP: git's way then, run confined).
    const top = fs.openSync(this.top, OPEN_ROOT);
    try {
      if (!this.visit(top, '', '', false, walk)) return undefined;
    } finally {
      fs.closeSync(top);
    }
    const { out, seen, after } = walk;
    // Tracked files not met are gone (deleted, or under a folder that is now a file or a link), except under the excludes: those stay as recorded.
    for (const e of index.entries) if (!seen.has(e.path) && this.skip.some((s) => e.path.startsWith(`${s}/`) || e.path === s)) out.push(e);
    this.memo.listings.clear();
    for (const [rel, l] of after) if (l.trusted) this.memo.listings.set(rel, l);
    return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  /** One folder (open as `fd`) and, depth first, the folders in it git would walk; false: leave it to git. */
  private visit(fd: number, key: string, rel: string, ignored: boolean, w: WalkState): boolean {
    const { tracked, trackedDirs } = w.index;
    // Named through the folder's descriptor where the system can (Linux with /proc); elsewhere by path, as before.
    const here = pinnable() ? pinnedPath(fd) : rel === '' ? this.top : `${this.top}/${rel}`;
    const listing = this.list(rel, `${here}/.`, w.horizon);
    w.after.set(rel, listing);
    w.count += listing.entries.length;
    if (w.count > ENTRY_CAP * 2) return false;
    for (const d of listing.entries) {
      if (d.key.toLowerCase() === '.git') {
        if (key === '' && d.key === '.git') continue;
        return false; // a nested repository (git adds it as a submodule entry), or a name git refuses
      }
      const child = key === '' ? d.key : `${key}/${d.key}`;
      const childRel = rel === '' ? d.name : `${rel}/${d.name}`;
      const at = `${here}/${d.name}`;
      if (this.skip.some((s) => child === s || child.startsWith(`${s}/`))) continue;
      if (d.key === '.gitattributes') return false;
      if (d.key === '.gitignore') {
        if (d.kind !== 'file') return false; // git does not follow a linked one; the in-process rules would
        checkLines(readRulesFile(at).split(/\r?\n/)); // (never blocking: swapped for a FIFO since the listing, it reads as empty)
      }
      if (d.kind === 'dir') {
        const covered = ignored || this.rules.ignored(childRel, true);
        if (covered && !trackedDirs.has(child)) continue;
        // A link or a file there now (ELOOP, ENOTDIR) or gone: thrown, and git takes over.
        const sub = fs.openSync(at, OPEN_FOLDER);
        try {
          if (!this.visit(sub, child, childRel, covered, w)) return false;
        } finally {
          fs.closeSync(sub);
        }
        continue;
      }
      const t = tracked.get(child);
      if (d.kind === 'other') {
        if (t) return false; // git refuses a tracked FIFO or socket; let it say so
        continue; // git passes over an untracked one
      }
      if (t) {
        w.seen.add(child);
        w.out.push(this.current(t, at));
      } else if (!ignored && !this.rules.ignored(childRel)) w.out.push(this.fresh(child, at));
    }
    return true;
  }

  /** The user's index, parsed: the kept one while its file is the same (git replaces it by a rename; kept only when older than the slack, as a listing). */
  private readIndex(horizonNs: bigint): KeptIndex | undefined {
    const now = fs.statSync(this.indexFile, { bigint: true });
    const kept = this.memo.index;
    if (kept && kept.ino === now.ino && kept.size === now.size && kept.mtimeNs === now.mtimeNs && kept.ctimeNs === now.ctimeNs) return kept;
    const fd = fs.openSync(this.indexFile, 'r');
    let buf: Buffer;
    let st: fs.BigIntStats;
    try {
      buf = fs.readFileSync(fd);
      st = fs.fstatSync(fd, { bigint: true });
    } finally {
      fs.closeSync(fd);
    }
    this.memo.index = undefined;
    const entries = readPlainIndex(buf);
    if (!entries || entries.length > ENTRY_CAP) return undefined;
    const tracked = new Map<string, Tracked>();
    const trackedDirs = new Set<string>();
    for (const e of entries) {
      if (e.assumeValid || (e.mode & 0o170000) === 0o160000) return undefined;
      const mtimeNs = BigInt(e.mtimeS) * 1_000_000_000n + BigInt(e.mtimeN);
      const ctimeNs = BigInt(e.ctimeS) * 1_000_000_000n + BigInt(e.ctimeN);
      const ids = { ino: BigInt(e.ino), uid: BigInt(e.uid), gid: BigInt(e.gid), size: BigInt(e.size) };
      tracked.set(e.path, mtimeNs < st.mtimeNs ? { e, stat: { mtimeNs, ctimeNs, ...ids } } : { e });
      for (let i = e.path.indexOf('/'); i >= 0; i = e.path.indexOf('/', i + 1)) trackedDirs.add(e.path.slice(0, i));
    }
    const read: KeptIndex = { ino: st.ino, size: st.size, mtimeNs: st.mtimeNs, ctimeNs: st.ctimeNs, entries, tracked, trackedDirs };
    if (st.ctimeNs < horizonNs) this.memo.index = read;
    return read;
  }

  /** A folder's entries: the kept listing while the folder is unchanged, else read now. */
  private list(rel: string, dir: string, horizon: number): KeptListing {
    const read = relist(dir, this.memo.listings.get(rel), horizon);
    if (!read) throw new LeaveToGit(); // gone or unreadable under the walk: git says what it makes of it
    if ('cached' in read) return read.cached;
    const entries: KeptListing['entries'] = [];
    for (const d of read.dirents) {
      const kind = entryKind(dir, d);
      if (kind) entries.push({ key: keyOf(d.name), name: d.name, kind });
    }
    return { ...read.stamp, entries };
  }

  /**
   * A tracked file: its recorded id while its stat data is what git recorded and not racily so,
   * else hashed afresh. Racily clean as git says (with nanoseconds): recorded in the same instant
   * as the index was written or later, when a change since could have left the stat data as it was.
   */
  private current(t: Tracked, at: string): Item {
    const st = fs.lstatSync(at, { bigint: true });
    const { e, stat: r } = t;
    const clean =
      r !== undefined &&
      modeOf(st) === e.mode &&
      st.mtimeNs === r.mtimeNs &&
      st.ctimeNs === r.ctimeNs &&
      (st.ino & 0xffffffffn) === r.ino &&
      st.uid === r.uid &&
      st.gid === r.gid &&
      (st.size & 0xffffffffn) === r.size;
    return clean ? e : this.fresh(e.path, at, st, e.id);
  }

  /**
   * The file or link at `at` (a name in a folder held open) hashed, its blob stored (unless it is
   * the one the index names: that one is in the repository). The file is opened without following
   * a link and must be the inode the listing's `lstat` saw: one swapped since is left to git.
   */
  private fresh(key: string, at: string, st = fs.lstatSync(at, { bigint: true }), recorded?: Buffer): Item {
    const mode = modeOf(st);
    if (st.size > BigInt(FILE_CAP)) throw new LeaveToGit();
    const bytes = mode === 0o120000 ? fs.readlinkSync(at, { encoding: 'buffer' }) : readSame(at, st);
    const id = objectId('blob', bytes);
    if (recorded?.toString('hex') !== id) this.store(id, bytes);
    return { path: key, mode, id: Buffer.from(id, 'hex') };
  }
}

/** The regular file at `at` (no link followed, never blocking on a FIFO), when it is still the inode `st` describes; else left to git. */
function readSame(at: string, st: fs.BigIntStats): Buffer {
  const fd = fs.openSync(at, READ_AS_IS);
  try {
    const now = fs.fstatSync(fd, { bigint: true });
    if (!now.isFile() || now.ino !== st.ino || now.dev !== st.dev) throw new LeaveToGit();
    return fs.readFileSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** A name's bytes as latin1 text (git's order, the index's spelling); a name that is not UTF-8 (read back with U+FFFD) is left to git. */
function keyOf(name: string): string {
  const bytes = Buffer.from(name);
  if (bytes.length === name.length) return name; // ASCII
  if (name.includes('\ufffd')) throw new LeaveToGit();
  return bytes.toString('latin1');
}

/** Git's mode of a file: a link, or a regular file executable by its owner or not. */
function modeOf(st: fs.BigIntStats): number {
  if (st.isSymbolicLink()) return 0o120000;
  if (!st.isFile()) throw new LeaveToGit();
  return st.mode & 0o100n ? 0o100755 : 0o100644;
}

/** Ignore patterns the in-process rules are sure to read as git does: none with a bracket expression or an escape. */
function checkLines(lines: readonly string[]): void {
  for (const l of lines) if (!l.startsWith('#') && /[[\\]/.test(l)) throw new LeaveToGit();
}
