import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { checkedRepoKey, nodeKey } from '../core/placement/layout';
import { liveHolder, parseOwner, thisOwner } from '../core/store/lock-owner';
import { LiveToken, sweepTokens } from '../core/store/lock-token';
import { syncRefused } from './errors';

// The far side's record of the nodes it was told are done (`_arbor/sync/release`, decision 0114,
// amended s56). Once a release is answered the home side has forgotten the node's copy: nothing
// will clean its folder up but this side. So each release is written down before its answer, in
// `<repos>/.released/<node>` (outside `--nodes`: no session can name it) with the process that took
// it (its pid and its liveness token, which answers from any PID namespace), and the record goes only once the node's folder is gone (kept as a spare, or removed). What a
// release could not finish — its close or move threw and even the removal failed, or the process was
// killed under way — is swept at the next prepare or close of any far process on this root: a
// record whose process is gone (or is this one, its release over) has its node's folder removed. A
// record of another live process is its own to finish. A node never released (a continuable child,
// a failed turn: the home side's to clean up, or to continue after its link's idle close) has no
// record and is never touched; neither is a node folder the push path made. A node id is a session
// id the home side never prepares again after its release; a prepare of it drops its record first.

export interface ReleasedNode {
  node: string;
  /** The repository key (`<repos>/<repo>.git`). */
  repo: string;
}

export class ReleasedNodes {
  private readonly dir: string;
  /** Where this process's liveness token listens (`.live`: no node's name). */
  private readonly tokens: string;
  private token: Promise<LiveToken | undefined> | undefined;

  constructor(repos: string) {
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
      return LiveToken.make(this.tokens);
    })();
    return this.token;
  }

  /** This process's releases are over: its token goes (its records left read as a dead process's), and its folder once empty. */
  async close(): Promise<void> {
    (await this.token)?.close();
    try {
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

  /** The node's folder is gone: its record too. */
  done(node: string): void {
    try {
      fs.rmSync(path.join(this.dir, node), { force: true });
    } catch {
      // (a record left names a folder that is gone: the next sweep drops it)
    }
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
      if (!isNodeName(node) || busy(node)) continue;
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
 * file) in its place is unlinked, never followed; inside, links are unlinked (`rmSync` does not
 * follow them), so a `.git` or a gitlink folder below its top is only files to remove. A folder
 * whose mode its agent took the write bit from is made writable first, through a descriptor
 * opened without following a link. True when nothing is left at `wt`.
 */
export function removeNodeFolder(wt: string): boolean {
  try {
    fs.rmSync(wt, { recursive: true, force: true });
  } catch {
    writable(wt);
    try {
      fs.rmSync(wt, { recursive: true, force: true });
    } catch {
      // left for the next sweep (its record stays)
    }
  }
  return !present(wt);
}

/** Every folder under `dir` (itself included) given its owner's rwx, links never followed. */
function writable(dir: string): void {
  let fd: number;
  try {
    fd = fs.openSync(dir, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY | fs.constants.O_NOFOLLOW);
  } catch {
    return; // not a folder (a link, a file), or unreadable: rmSync says what it could not remove
  }
  try {
    fs.fchmodSync(fd, (fs.fstatSync(fd).mode & 0o7777) | 0o700);
  } catch {
    // not ours to change
  } finally {
    fs.closeSync(fd);
  }
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries) if (e.isDirectory()) writable(path.join(dir, e.name));
}
