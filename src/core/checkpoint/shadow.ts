import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import type { CheckpointChange } from '../session/events';
import { readEntryInside } from '../tools/entry-inside';
import { ATOMIC_TEMP_SUFFIX } from '../tools/fsio';
import { initFinished } from '../worktree/git';
import { IgnoreRules } from '../worktree/ignore';
import { type GitPlace, git, gitOk } from './git';
import { blobId, readBlob, readBlobSync, writeBlobAs, writeBlobAsSync } from './objects';
import { BlobPins } from './pins';
import { StatIndex } from './stat-index';

// One shadow git repository per workspace root (decision 0059), kept in the store:
// `<storeDir>/checkpoints/<hash of the root's real path>.git`, its work tree the root. It has an
// index of its own (so git's listing only stats unchanged files) and no commits: a snapshot is a
// tree id, a change is a pair of blob ids. The root's own `.git` is never opened by it. Git lists
// what changed; this process reads the bytes, through folders pinned from the root (`take`).

/** A file left out of checkpoints, and why (said once per session). */
/** Blobs up to this size a writing call stores on its own thread (deflate and write take well under a millisecond). */
const SYNC_BLOB_BYTES = 256 * 1024;

export interface Skip {
  path: string;
  reason: 'ignored' | 'too-large';
}

/** One file a tree diff shows changed: absolute path, blob ids (null: absent). */
export interface TreeChange {
  path: string;
  before: string | null;
  after: string | null;
  /** `before` had git's executable mode. */
  beforeExecutable?: true;
}

/**
 * A change as the log records it, made by call `callId` of `tool` in `root` (a file tool's, a
 * command's diff, or one a crash cut and the next open recovered). One mapping for the recorder
 * and the recovery: the keys in one order (the log's bytes), `beforeExecutable` only when git said so.
 */
export function recordedChange(d: TreeChange, root: string, callId: string, tool: string, recovered?: true): CheckpointChange {
  return {
    path: d.path,
    root,
    before: d.before,
    after: d.after,
    callId,
    tool,
    ...(recovered ? { recovered } : {}),
    ...(d.beforeExecutable ? { beforeExecutable: true } : {}),
  };
}

export const DEFAULT_MAX_FILE_BYTES = 10 * 1024 * 1024;
const ZERO = /^0{40}$/;
const ZERO_ID = '0'.repeat(40);
/** Tries of one snapshot: a git that fails part way (a file gone under it, a lock) is asked again; the next try lists the root again. */
const SNAPSHOT_TRIES = 3;

/** A root as one snapshot saw it: its tree, the files left out for size, and when it began looking (`performance.now()`). */
export interface Snapshot {
  tree: string;
  large: string[];
  at: number;
}

/** The shadow repository's folder for a root (real path) under a store. */
export function shadowDirOf(storeDir: string, root: string): string {
  const key = createHash('sha256').update(root).digest('hex').slice(0, 16);
  return path.join(storeDir, 'checkpoints', `${key}.git`);
}

export class ShadowRepo {
  readonly place: GitPlace;
  /** Index operations one after another: two snapshots at once would fight over index.lock. */
  private chain: Promise<unknown> = Promise.resolve();
  private readonly rules: IgnoreRules;
  private readonly writing = new Set<Promise<void>>();
  private readonly queued = new Map<string, Buffer>();
  /** The root's stat digest, and the snapshot git took just after it (see stat-index.ts). */
  private readonly index: StatIndex;
  private last: { digest: string; maxBytes: number; tree: string; large: string[] } | undefined;
  /** The rules and pruned folders (`StatScan.prunedKey`) git was last asked about, and whether it agreed every folder is ignored. */
  private agreed: { key: string; ok: boolean } | undefined;
  /** Snapshots taken by git, and answered from the stat digest without it. */
  readonly counts = { git: 0, skipped: 0 };

  private constructor(
    readonly root: string,
    gitDir: string,
    /** The shadow's own ignore lines (`info/exclude`): `.git`, the checkpoints, the store when inside the root. */
    readonly excludes: readonly string[],
    trustSlackMs?: number,
    /** The blobs and trees this process's recordings hold from a deletion's sweep (`pins.ts`). */
    private readonly pins: BlobPins = new BlobPins(),
  ) {
    this.place = { gitDir, workTree: root };
    this.rules = new IgnoreRules(root, excludes);
    this.index = new StatIndex(root, excludes, trustSlackMs);
  }

  /** Open (creating on first use) the shadow repository of `root` under `storeDir`; `trustSlackMs`: see stat-index.ts. */
  static async open(storeDir: string, root: string, trustSlackMs?: number, pins?: BlobPins): Promise<ShadowRepo> {
    const gitDir = shadowDirOf(storeDir, root);
    // Compared as real paths: the root is one, the store's folder may be named through a link.
    const inside = path.relative(root, fs.existsSync(storeDir) ? fs.realpathSync(storeDir) : storeDir);
    // The store inside the root (a CLI `--store .arbor-store`) is never recorded.
    // The tools' atomic writes pass through a temp file beside the target: a command snapshotted
    // while a file tool of the same step writes would record it as its own change (decision 0070).
    const excludes = [
      '.git',
      `*${ATOMIC_TEMP_SUFFIX}`,
      '/.arbor/checkpoints/',
      ...(inside && !inside.startsWith('..') && !path.isAbsolute(inside) ? [`/${inside.split(path.sep).join('/')}/`] : []),
    ];
    const repo = new ShadowRepo(root, gitDir, excludes, trustSlackMs, pins);
    if (!initFinished(gitDir)) {
      await fsp.mkdir(gitDir, { recursive: true, mode: 0o700 });
      await gitOk({ ...repo.place, init: true }, ['init', '--quiet', '--bare', gitDir]);
    }
    await fsp.mkdir(path.join(gitDir, 'info'), { recursive: true });
    await fsp.writeFile(path.join(gitDir, 'info', 'exclude'), `${excludes.join('\n')}\n`);
    return repo;
  }

  /** `abs` relative to the root with `/`, or undefined when it is not inside. */
  relative(abs: string): string | undefined {
    const rel = path.relative(this.root, abs);
    if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) return undefined;
    return rel.split(path.sep).join('/');
  }

  /** Store bytes as a blob and wait until it is written. */
  async storeBlob(bytes: Buffer): Promise<string> {
    const id = blobId(bytes);
    this.pins.pin(id);
    await writeBlobAs(this.place.gitDir, id, bytes);
    return id;
  }

  /**
   * A blob's id at once; its object is written later, when the step's calls are all answered
   * (`kick`), so a tool call never waits for it nor competes with it for the disk. `blob` and
   * `settled` write what is queued and wait. A write that fails leaves the id without content:
   * a rewind then says that file's earlier content is unavailable.
   */
  storeLater(bytes: Buffer): string {
    const id = blobId(bytes);
    this.pins.pin(id);
    this.queued.set(id, bytes);
    return id;
  }

  /**
   * Write one queued blob now, on this thread when small (a writing call's `before`, which its intent names:
   * `call-intent.ts`); one being written by an earlier step's kick is waited for.
   */
  async storeNow(id: string): Promise<void> {
    const bytes = this.queued.get(id);
    if (!bytes) {
      while (this.writing.size) await Promise.all([...this.writing]);
      return;
    }
    this.queued.delete(id);
    // A large file's deflate would hold the loop: off the thread, as the queued ones go.
    if (bytes.length <= SYNC_BLOB_BYTES) writeBlobAsSync(this.place.gitDir, id, bytes);
    else await writeBlobAs(this.place.gitDir, id, bytes);
  }

  /** Start writing the queued blobs. */
  kick(): void {
    for (const [id, bytes] of this.queued) {
      const w = writeBlobAs(this.place.gitDir, id, bytes).catch(() => undefined);
      this.writing.add(w);
      void w.finally(() => this.writing.delete(w));
    }
    this.queued.clear();
  }

  /** Every blob queued so far is written. */
  async settled(): Promise<void> {
    this.kick();
    while (this.writing.size) await Promise.all([...this.writing]);
  }

  /** A blob's bytes read on the calling thread, for a caller that awaited `settled()`; undefined when gone. */
  blobNow(id: string): Buffer | undefined {
    return readBlobSync(this.place.gitDir, id);
  }

  /** A blob's bytes, read in-process (the shadow never packs: gc is off, files over the cap are left out); undefined when gone. */
  async blob(id: string): Promise<Buffer | undefined> {
    await this.settled();
    return readBlob(this.place.gitDir, id);
  }

  /** Whether the root's ignore rules (its `.gitignore`s and the shadow's excludes) leave a path out; read in-process. */
  ignored(rel: string): boolean {
    return this.rules.ignored(rel);
  }

  /** A `.gitignore` changed: ignore answers are read again. */
  forgetIgnores(): void {
    this.rules.forget();
  }

  /**
   * The root as a tree id now: files over `maxBytes` are left out (and returned), ignored ones
   * are never seen. Stat-only for files unchanged since the last snapshot (the shadow index).
   * When the root's stat digest equals the one taken just before the last snapshot, nothing
   * git records changed since: that snapshot is the answer, and no git runs (decisions 0066, 0070).
   */
  snapshot(maxBytes: number): Promise<Snapshot> {
    const run = this.chain.then(async () => {
      const at = performance.now();
      // Walked before git reads the files: a change racing this snapshot is newer than the digest.
      const scan = this.index.scan();
      const last = this.last;
      if (
        scan &&
        !scan.rulesChanged &&
        this.agreed?.key === scan.prunedKey &&
        this.agreed.ok &&
        last &&
        last.digest === scan.digest &&
        last.maxBytes === maxBytes
      ) {
        this.counts.skipped++;
        this.pins.pinTree(last.tree);
        return { tree: last.tree, large: [...last.large], at };
      }
      this.last = undefined;
      this.counts.git++;
      for (let attempt = 1; ; attempt++) {
        try {
          const out = await this.take(maxBytes);
          this.pins.pinTree(out.tree);
          if (scan?.rulesChanged) {
            // Rules changed (or never read): name the tracked files they ignore, for the next walks.
            this.index.track((await gitOk(this.place, ['ls-files', '-z', '--cached', '--ignored', '--exclude-standard'])).split('\0').filter(Boolean));
          } else if (scan?.trusted && (await this.gitAgrees(scan))) this.last = { digest: scan.digest, maxBytes, tree: out.tree, large: [...out.large] };
          return { ...out, at };
        } catch (e) {
          if (attempt >= SNAPSHOT_TRIES) throw e;
        }
      }
    });
    this.chain = run.catch(() => undefined);
    return run;
  }

  /**
   * Whether git ignores every folder the walk pruned by the in-process rules (asked once per set of
   * rules and folders): a folder they ignore and git does not would hide its new files from the
   * shortcut, so then nothing is skipped (decision 0070).
   */
  private async gitAgrees(scan: { pruned: string[]; prunedKey: string }): Promise<boolean> {
    if (this.agreed?.key !== scan.prunedKey) {
      let ok = true;
      if (scan.pruned.length) {
        const stdin = Buffer.from(scan.pruned.map((rel) => `${rel}/\0`).join(''));
        const said = new Set((await git(this.place, ['check-ignore', '-z', '--stdin', '--no-index'], stdin)).stdout.split('\0'));
        ok = scan.pruned.every((rel) => said.has(`${rel}/`));
      }
      this.agreed = { key: scan.prunedKey, ok };
    }
    return this.agreed.ok;
  }

  /**
   * One try of a snapshot: what git finds changed (`ls-files`: names only), each read here through
   * its folder pinned from the root (`tools/entry-inside.ts`) and stored by this process, the
   * index told their ids (`update-index --index-info`, then `--refresh` for their stat data), the
   * tree. Git itself reads no file's bytes into the shadow: `git add -A` followed a folder a
   * command swapped for a link and stored a file outside as the workspace's (decision 0097, s51).
   * Files over the size cap are left as the index has them, and returned.
   */
  private async take(maxBytes: number): Promise<{ tree: string; large: string[] }> {
    const listed = (await gitOk(this.place, ['ls-files', '-z', '--others', '--modified', '--exclude-standard'])).split('\0');
    const large: string[] = [];
    const gone: string[] = [];
    const kept: string[] = [];
    const writes: Promise<void>[] = [];
    let n = 0;
    for (const rel of new Set(listed)) {
      // A nested repository (`dir/`) is not recorded; a name that is not UTF-8 cannot be named back to git from here.
      if (!rel || rel.endsWith('/') || rel.includes('\ufffd')) continue;
      if (++n % 128 === 0) await new Promise((r) => setImmediate(r)); // (a first snapshot of many files: the loop turns)
      const e = readEntryInside(path.join(this.root, rel), this.root, maxBytes);
      if (e.kind === 'large') large.push(rel);
      else if (e.kind === 'gone') gone.push(`0 ${ZERO_ID}\t${rel}\0`);
      else {
        const id = blobId(e.bytes);
        this.pins.pin(id);
        if (e.bytes.length <= SYNC_BLOB_BYTES) writeBlobAsSync(this.place.gitDir, id, e.bytes);
        else writes.push(writeBlobAs(this.place.gitDir, id, e.bytes));
        kept.push(`${e.mode.toString(8)} ${id}\t${rel}\0`);
      }
    }
    await Promise.all(writes);
    // Removals first: a file that became a folder leaves its entry before the folder's files come in.
    if (gone.length || kept.length) {
      await gitOk(this.place, ['update-index', '-z', '--index-info'], Buffer.from([...gone, ...kept].join('')));
      // The entries just given have no stat data: git takes it now (a file whose bytes are the id's), so the next listing passes over them.
      // (Best effort: without it the next listing names them again and they are read again.)
      if (kept.length) await git(this.place, ['update-index', '-q', '--refresh']);
    }
    large.sort();
    const tree = (await gitOk(this.place, ['write-tree'])).trim();
    return { tree, large: large.map((rel) => path.join(this.root, rel)) };
  }

  /** Regular files that differ between two trees (symlinks and nested repositories are not recorded). */
  async diff(a: string, b: string): Promise<TreeChange[]> {
    if (a === b) return [];
    const out = await gitOk(this.place, ['diff-tree', '-r', '-z', '--no-renames', a, b]);
    const parts = out.split('\0');
    const changes: TreeChange[] = [];
    for (let i = 0; i + 1 < parts.length; i += 2) {
      const head = parts[i].replace(/^:/, '').split(' ');
      if (head.length < 5) break;
      const [oldMode, newMode, oldId, newId] = head;
      const file = (m: string) => m === '000000' || m.startsWith('100');
      if (!file(oldMode) || !file(newMode)) continue;
      changes.push({
        path: path.join(this.root, parts[i + 1]),
        before: ZERO.test(oldId) ? null : oldId,
        after: ZERO.test(newId) ? null : newId,
        ...(oldMode === '100755' ? { beforeExecutable: true as const } : {}),
      });
    }
    return changes;
  }
}

/** The shadow repositories of a store, one per root, opened once. */
export class Shadows {
  private readonly open = new Map<string, Promise<ShadowRepo>>();
  /** What this process's recordings hold from a deletion's sweep, over every root. */
  readonly pins = new BlobPins();

  constructor(
    readonly storeDir: string,
    private readonly trustSlackMs?: number,
  ) {}

  /** Snapshots so far over every root: by git, and skipped (the stat digest unchanged). */
  async counts(): Promise<{ git: number; skipped: number }> {
    const all = await Promise.all([...this.open.values()].map((p) => p.catch(() => undefined)));
    return all.reduce((n, s) => ({ git: n.git + (s?.counts.git ?? 0), skipped: n.skipped + (s?.counts.skipped ?? 0) }), { git: 0, skipped: 0 });
  }

  /** Write the blobs queued for a root's shadow (see `ShadowRepo.storeLater`). */
  kick(root: string): void {
    void this.open.get(root)?.then((s) => s.kick());
  }

  /** Every queued blob of every shadow written (a closing harness). */
  async settled(): Promise<void> {
    await Promise.all([...this.open.values()].map(async (p) => (await p.catch(() => undefined))?.settled()));
  }

  /** The shadows opened so far (those that opened). */
  async opened(): Promise<ShadowRepo[]> {
    return (await Promise.all([...this.open.values()].map((p) => p.catch(() => undefined)))).filter((s): s is ShadowRepo => s !== undefined);
  }

  of(root: string): Promise<ShadowRepo> {
    let p = this.open.get(root);
    if (!p) {
      p = ShadowRepo.open(this.storeDir, root, this.trustSlackMs, this.pins);
      p.catch(() => this.open.delete(root));
      this.open.set(root, p);
    }
    return p;
  }
}
