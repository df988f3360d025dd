import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { checkedRepoKey, nodeKey } from '../core/placement/layout';
import { liveHolder, parseOwner, thisOwner } from '../core/store/lock-owner';
import { LiveToken, sweepTokens } from '../core/store/lock-token';
import { OPEN_FOLDER, pinnable } from '../core/tools/pinned-path';
import { removeTree } from '../core/tools/remove-tree';
import { syncRefused } from './errors';

// The far side's record of the nodes it was told are done (`_arbor/sync/release`, decision 0114,
// amended s56). Once a release is answered the home side has forgotten the node's copy: nothing
// will clean its folder up but this side. So each release is written down before its answer, in
// `<repos>/.released/<node>` (outside `--nodes`: no session can name it) with the process that took
// it (its pid and its liveness token, which answers from any PID namespace), and the record goes only once the node's folder is gone (kept as a spare, or removed). What a
// release could not finish — its close or move threw and even the removal failed, or the process was
// killed under way — is swept at the next prepare or close of any far process on this root: a
// record whose process is gone (or is this one, its release over) has its node's folder removed (one
// that cannot be for good — no permission, read-only, a mount — is said once, not retried: 0119). A
// record of another live process is its own to finish. A node never released (a continuable child,
// a failed turn: the home side's to clean up, or to continue after its link's idle close) has no
// record and is never touched; neither is a node folder the push path made. A node id is a session
// id the home side never prepares again after its release; a prepare of it drops its record first.

export interface ReleasedNode {
  node: string;
  /** The repository key (`<repos>/<repo>.git`). */
  repo: string;
}

/**
 * Why a removal fails that trying again will not change: no permission (another user's files, an
 * immutable one), a read-only file system, a mount point below the node's folder (Linux's only EBUSY
 * for a folder's removal).
 */
const LASTING_FAILURES = new Set(['EACCES', 'EPERM', 'EROFS', 'EBUSY']);

export class ReleasedNodes {
  private readonly dir: string;
  /** Released nodes whose folder or record a sweep could not remove for a reason retrying will not change: said once, not tried again here. */
  private readonly stuck = new Set<string>();
  /** Where this process's liveness token listens (`.live`: no node's name). */
  private readonly tokens: string;
  private token: Promise<LiveToken | undefined> | undefined;

  constructor(
    repos: string,
    /** A line for the person running the far side (stderr). */
    private readonly warn: (line: string) => void = () => undefined,
  ) {
    this.dir = path.join(repos, '.released');
    this.tokens = path.join(this.dir, '.live');
  }

  /**
   * This process's liveness token (decision 0098's), made at its first release (nothing is made
   * for a far side that releases nothing) and held until `close`: a far process in another PID namespace (each `arbor acp` in a sandbox or
   * container of its own) cannot ask a pid of ours, and would read a live release's record as a
   * dead one's (its pid 2 is "ours, a leftover" there).
   */
  private live(): Promise<LiveToken | undefined> {
    this.token ??= (async () => {
      try {
        fs.mkdirSync(this.tokens, { recursive: true });
        await sweepTokens(this.tokens, undefined);
      } catch {
        return undefined; // judged by its pid alone, as before
      }
      // Another far process's close removes `.live` when it finds it empty, as it may be between the
      // mkdir and the listen: then its listen fails, and this process's releases would be recorded
      // with no token (read as a dead process's from another PID namespace). Made again, and asked again.
      for (let i = 0; ; i++) {
        const token = await LiveToken.make(this.tokens);
        if (token || i === 4 || present(this.tokens)) return token;
        try {
          fs.mkdirSync(this.tokens, { recursive: true });
        } catch {
          return undefined;
        }
      }
    })();
    return this.token;
  }

  /** This process's releases are over: its token goes (its records left read as a dead process's), and its folder once empty. */
  async close(): Promise<void> {
    (await this.token)?.close();
    try {
      // (Removed between another far process's making it and its token's listen: that one makes it again, `live`.)
      fs.rmdirSync(this.tokens);
    } catch {
      // another live far process's token is in it (or a dead one's, swept by the next to start)
    }
  }

  /** The release of `node` written down, whole (a temporary file renamed), before it is answered; SYNC_FAILED when it cannot be. */
  async mark(node: string, repo: string): Promise<void> {
    const token = await this.live();
    const tmp = path.join(this.dir, `.${randomBytes(6).toString('hex')}.tmp`);
    try {
      fs.mkdirSync(this.dir, { recursive: true });
      const owner = { ...thisOwner(), ...(token ? { live: token.name } : {}) };
      fs.writeFileSync(tmp, JSON.stringify({ repo, owner }), { mode: 0o600, flag: 'wx' });
      fs.renameSync(tmp, path.join(this.dir, node));
    } catch (err) {
      fs.rmSync(tmp, { force: true });
      throw syncRefused('SYNC_FAILED', `could not record node ${node}'s release here (${String(err)}); its folder stays for the placement's cleanup`);
    }
  }

  /** The node's folder is gone: its record too. The error when the record stays (the next sweep drops it, unless that error stays too). */
  done(node: string): NodeJS.ErrnoException | undefined {
    try {
      fs.rmSync(path.join(this.dir, node), { force: true });
      return undefined;
    } catch (e) {
      return e as NodeJS.ErrnoException;
    }
  }

  /**
   * What a sweep could not remove (`what`: the node's folder, or its record): tried again by the
   * next sweep, unless retrying cannot change it (no permission, a read-only file system, a mount:
   * every prepare would pay a removal, a walk, the repository's lock and git runs for nothing).
   * Such a node is said once, with what to do, and left out of this process's orphans (the next far
   * process's first sweep tries once).
   */
  failed(node: string, what: string, err: NodeJS.ErrnoException, todo: string): void {
    if (!LASTING_FAILURES.has(err.code ?? '') || this.stuck.has(node)) return;
    this.stuck.add(node);
    this.warn(
      `arbor acp: released node ${node}: ${what} cannot be removed (${err.message}); this process will not try again: ${todo} (${path.join(this.dir, node)}).`,
    );
  }

  /**
   * The released nodes whose folders nobody will remove but the caller: recorded by a process that
   * no longer runs, or by this one and not `busy` (its release over, unfinished). Unreadable
   * records (not ours) are left alone.
   */
  async orphans(busy: (node: string) => boolean): Promise<ReleasedNode[]> {
    let names: string[];
    try {
      names = fs.readdirSync(this.dir);
    } catch {
      return [];
    }
    const out: ReleasedNode[] = [];
    const mine = (await this.token)?.name;
    for (const node of names) {
      if (!isNodeName(node) || this.stuck.has(node) || busy(node)) continue;
      let rec: { repo?: unknown; owner?: unknown };
      try {
        rec = JSON.parse(fs.readFileSync(path.join(this.dir, node), 'utf8'));
      } catch {
        continue;
      }
      const owner = JSON.stringify(rec.owner ?? null);
      const parsed = parseOwner(owner);
      if (typeof rec.repo !== 'string' || !isRepoKey(rec.repo) || !parsed) continue;
      // Ours (our token, or without one our own pid, which reads as stale there): its release is
      // over, `busy` said. Another's: its token answers from any PID namespace, else its pid.
      if ((mine === undefined || parsed.live !== mine) && (await liveHolder(owner, this.tokens))) continue;
      out.push({ node, repo: rec.repo });
    }
    return out;
  }
}

function isNodeName(n: string): boolean {
  try {
    return nodeKey(n) === n;
  } catch {
    return false;
  }
}

function isRepoKey(k: string): boolean {
  try {
    return checkedRepoKey(k) === k;
  } catch {
    return false;
  }
}

/** Whether anything is at `p` (a dangling link too). */
export function present(p: string): boolean {
  try {
    fs.lstatSync(p);
    return true;
  } catch {
    return false;
  }
}

/**
 * A node's folder removed without running git in it or following a link out of it: a link (or a
 * file) in its place is unlinked, never followed; inside, each folder is emptied through the one
 * above it held open (`removeTree`: its agent may still run and swap a folder for a link, which
 * `fs.rm`'s path-based recursion would list and delete through), so a `.git` or a gitlink folder
 * below its top is only files to remove. A folder
 * whose mode its agent took the write bit from is made writable as the second removal reaches it
 * (`removeTree`'s `writable`: however deep; where folders cannot be pinned, first by `writable`). Undefined when
 * nothing is left at `wt`, else what the last removal threw.
 */
export function removeNodeFolder(wt: string): NodeJS.ErrnoException | undefined {
  try {
    removeTree(wt);
  } catch {
    if (!pinnable()) writable(wt);
    try {
      removeTree(wt, { writable: true });
    } catch (e) {
      return present(wt) ? (e as NodeJS.ErrnoException) : undefined; // left for the next sweep (its record stays)
    }
  }
  return present(wt) ? Object.assign(new Error(`${wt} is still there`), { code: 'EEXIST' }) : undefined;
}

/**
 * Every folder under `dir` (itself included) given its owner's rwx, no link followed at each last
 * name: where folders cannot be pinned (no /proc), before the removal by path. Where they can,
 * `removeTree`'s `writable` does it through the folders it holds open (decision 0114 amended s58).
 */
function writable(dir: string): void {
  let fd: number;
  try {
    fd = fs.openSync(dir, OPEN_FOLDER);
  } catch {
    return; // not a folder (a link, a file), or unreadable: rmSync says what it could not remove
  }
  try {
    writableFrom(fd, dir);
  } finally {
    fs.closeSync(fd);
  }
}

/** The folder held open as `fd` (at `shown`; only where folders cannot be pinned) and every folder below it made writable, by path. */
function writableFrom(fd: number, shown: string): void {
  try {
    fs.fchmodSync(fd, (fs.fstatSync(fd).mode & 0o7777) | 0o700);
  } catch {
    // not ours to change
  }
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(shown, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries) {
    if (!e.isDirectory()) continue;
    let child: number;
    try {
      // By its path, its last name not followed: a swap above it is not seen (nothing can be pinned here).
      child = fs.openSync(path.join(shown, e.name), OPEN_FOLDER);
    } catch {
      continue;
    }
    try {
      writableFrom(child, path.join(shown, e.name));
    } finally {
      fs.closeSync(child);
    }
  }
}
