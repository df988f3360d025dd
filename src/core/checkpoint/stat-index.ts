import { createHash } from 'node:crypto';
import * as path from 'node:path';
import { entryKind, type ListingStamp, lstatOrUndefined, relist } from '../tools/dir-listing';
import { IgnoreRules } from '../worktree/ignore';

// A cheap answer to "could a snapshot of this root differ from the last one?" (decision 0066).
// A command is snapshotted before and after it runs (recorder.ts), and a snapshot is three git
// processes; most commands (tests, builds into ignored folders, `ls`) change nothing git records.
// So a snapshot first walks the root in-process, stat only, and digests what git would look
// at: every entry that is not a folder (name, mode, inode, size, mtime, ctime) in every folder
// that is not ignored. Equal digests mean equal contents, with the same trust git's own index
// puts in stat data: writing a file changes its ctime, which no process can set back.
//
// Two rules keep that sound:
// - The walk runs *before* git reads the files, so a change racing the snapshot shows in the
//   next walk (its stat is newer than the digest's), never hides in a tree taken before it.
// - A digest is trusted only when every entry it covers is older than TRUST_SLACK_MS at the
//   walk's start: a change in the same timestamp tick as the one recorded would leave the stat
//   as it was (git's "racy index"). The slack covers coarse clocks (FAT's 2 s) with room.
// Folders are pruned by the root's ignore rules read in-process (ignore.ts); files are digested
// whether ignored or not (a stat is cheap, and an ignored file changing costs only a git run).
// Every `.gitignore` is in the digest, and the rules are read again when one changed. A file git
// already tracks stays tracked when a rule comes to ignore its folder, and `git add -A` still
// records its changes: the shadow names those files after each change of the rules (`track`),
// and the walk stats them inside the folders it prunes; and the shadow skips nothing until git
// has agreed that every folder the walk prunes is ignored (decision 0070).

/** How far before the walk an entry's times must be for its stat to be trusted. */
export const TRUST_SLACK_MS = 2000;
/** Past this many entries the walk gives up: a snapshot then always runs git (it walks in C). */
export const MAX_INDEXED_ENTRIES = 50_000;

export interface StatScan {
  /** What git would see, digested (entries sorted by folder, then by listing order). */
  digest: string;
  /** Every entry is older than the slack: an equal digest later means equal contents. */
  trusted: boolean;
  /** The ignore rules differ from the ones the tracked files were last named under (`track`). */
  rulesChanged: boolean;
  /** The folders the walk did not enter (relative, `/`-separated): git must agree they are ignored. */
  pruned: string[];
  /** The rules and the pruned folders, as one key: git's agreement holds while it is the same. */
  prunedKey: string;
}

interface Listing extends ListingStamp {
  /** Entries by name: a real folder (walked unless ignored), or anything else (digested). */
  entries: { name: string; dir: boolean }[];
}

export class StatIndex {
  private readonly rules: IgnoreRules;
  /** Folder (relative, '' for the root) → its last listing, re-read when its inode or ctime changed. */
  private listings = new Map<string, Listing>();
  /** The digest of the `.gitignore` files the rules were read with. */
  private rulesOf: string | undefined;
  /** Files the shadow tracks that its rules ignore (relative), and the rules they were named under. */
  private tracked: { rules: string; files: readonly string[] } | undefined;

  constructor(
    private readonly root: string,
    excludes: readonly string[],
    private readonly slackMs = TRUST_SLACK_MS,
  ) {
    this.rules = new IgnoreRules(root, excludes);
  }

  /** The root as it is now, digested; undefined when it holds more than MAX_INDEXED_ENTRIES entries. */
  scan(): StatScan | undefined {
    let s = this.walk();
    if (s && s.ignores !== this.rulesOf) {
      // A `.gitignore` changed since the rules were read (or never read): read them again and walk with them.
      this.rules.forget();
      s = this.walk();
      if (s) this.rulesOf = s.ignores;
    }
    return s && { ...s, rulesChanged: this.tracked?.rules !== this.rulesOf, prunedKey: `${this.rulesOf}\0${s.pruned.join('\0')}` };
  }

  /** The files git tracks that the rules ignore, as `git ls-files -c -i` named them under the rules the last scan read. */
  track(files: readonly string[]): void {
    if (this.rulesOf !== undefined) this.tracked = { rules: this.rulesOf, files: [...files].sort() };
  }

  private walk(): (Omit<StatScan, 'rulesChanged' | 'prunedKey'> & { ignores: string }) | undefined {
    const started = Date.now();
    const horizon = started - this.slackMs;
    const digest = createHash('sha1');
    const ignores = createHash('sha1');
    const after = new Map<string, Listing>();
    let trusted = true;
    let count = 0;
    const pruned: string[] = [];
    const queue = [''];
    for (let i = 0; i < queue.length; i++) {
      const rel = queue[i];
      const l = this.listing(rel, horizon);
      if (!l) {
        digest.update(`${rel}\0?\n`); // unreadable or gone: differs from a readable listing
        continue;
      }
      after.set(rel, l);
      if (!l.trusted) trusted = false;
      count += l.entries.length;
      if (count > MAX_INDEXED_ENTRIES) return undefined;
      for (const e of l.entries) {
        const child = rel === '' ? e.name : `${rel}/${e.name}`;
        if (e.dir) {
          if (!this.rules.ignored(child, true)) queue.push(child);
          else pruned.push(child);
          continue;
        }
        const st = lstatOrUndefined(path.join(this.root, child));
        if (st && Math.max(st.mtimeMs, st.ctimeMs) >= horizon) trusted = false;
        const key = st ? `${child}\0${st.mode}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}\n` : `${child}\0-\n`;
        digest.update(key);
        if (e.name === '.gitignore') ignores.update(key);
      }
    }
    for (const rel of this.tracked?.files ?? []) {
      const st = lstatOrUndefined(path.join(this.root, rel));
      if (st && Math.max(st.mtimeMs, st.ctimeMs) >= horizon) trusted = false;
      digest.update(st ? `+${rel}\0${st.mode}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}\n` : `+${rel}\0-\n`);
    }
    this.listings = after;
    return { digest: digest.digest('hex'), trusted, ignores: ignores.digest('hex'), pruned: pruned.sort() };
  }

  /** A folder's entries, from the last listing when its inode and ctime are unchanged and it was trusted (`tools/dir-listing.ts`). */
  private listing(rel: string, horizon: number): Listing | undefined {
    const dir = path.join(this.root, rel);
    const read = relist(dir, this.listings.get(rel), horizon);
    if (!read || 'cached' in read) return read?.cached;
    return { ...read.stamp, entries: read.dirents.map((d) => ({ name: d.name, dir: entryKind(dir, d) === 'dir' })) };
  }
}
