import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { type GitPlace, git, gitOk } from './git';
import { readBlob, writeBlob } from './objects';

// One shadow git repository per workspace root (decision 0059), kept in the store:
// `<storeDir>/checkpoints/<hash of the root's real path>.git`, its work tree the root. It has an
// index of its own (so `git add -A` only stats unchanged files) and no commits: a snapshot is a
// tree id, a change is a pair of blob ids. The root's own `.git` is never opened by it.

/** A file left out of checkpoints, and why (said once per session). */
export interface Skip {
  path: string;
  reason: 'ignored' | 'too-large';
}

/** One file a tree diff shows changed: absolute path, blob ids (null: absent). */
export interface TreeChange {
  path: string;
  before: string | null;
  after: string | null;
}

export const DEFAULT_MAX_FILE_BYTES = 10 * 1024 * 1024;
const ZERO = /^0{40}$/;

/** The shadow repository's folder for a root (real path) under a store. */
export function shadowDirOf(storeDir: string, root: string): string {
  const key = createHash('sha256').update(root).digest('hex').slice(0, 16);
  return path.join(storeDir, 'checkpoints', `${key}.git`);
}

export class ShadowRepo {
  readonly place: GitPlace;
  /** Index operations one after another: two snapshots at once would fight over index.lock. */
  private chain: Promise<unknown> = Promise.resolve();
  /** check-ignore answers by relative path; dropped whenever a `.gitignore` changes. */
  private ignoredCache = new Map<string, boolean>();
  private batch: { paths: Set<string>; run: Promise<Set<string>> } | undefined;

  private constructor(
    readonly root: string,
    gitDir: string,
    /** The shadow's own ignore lines (`info/exclude`): `.git`, the checkpoints, the store when inside the root. */
    readonly excludes: readonly string[],
  ) {
    this.place = { gitDir, workTree: root };
  }

  /** Open (creating on first use) the shadow repository of `root` under `storeDir`. */
  static async open(storeDir: string, root: string): Promise<ShadowRepo> {
    const gitDir = shadowDirOf(storeDir, root);
    const inside = path.relative(root, storeDir);
    // The store inside the root (a CLI `--store .arbor-store`) is never recorded.
    const excludes = [
      '.git',
      '/.arbor/checkpoints/',
      ...(inside && !inside.startsWith('..') && !path.isAbsolute(inside) ? [`/${inside.split(path.sep).join('/')}/`] : []),
    ];
    const repo = new ShadowRepo(root, gitDir, excludes);
    if (!fs.existsSync(path.join(gitDir, 'HEAD'))) {
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

  storeBlob(bytes: Buffer): Promise<string> {
    return writeBlob(this.place.gitDir, bytes);
  }

  /** A blob's bytes, read in-process (the shadow never packs: gc is off, files over the cap are left out); undefined when gone. */
  blob(id: string): Promise<Buffer | undefined> {
    return readBlob(this.place.gitDir, id);
  }

  /** Whether the root's ignore rules (its `.gitignore`s and the shadow's excludes) leave a path out; calls close together share one git. */
  async ignored(rel: string): Promise<boolean> {
    const known = this.ignoredCache.get(rel);
    if (known !== undefined) return known;
    if (!this.batch) {
      const paths = new Set<string>();
      // Started on the next turn of the event loop: every call of a step asks before it runs.
      const run = new Promise<void>((r) => setImmediate(r)).then(async () => {
        this.batch = undefined;
        const out = await git(this.place, ['check-ignore', '--no-index', '-z', '--stdin'], Buffer.from([...paths].map((p) => `${p}\0`).join('')));
        const hit = new Set(out.stdout.split('\0').filter(Boolean));
        for (const p of paths) this.ignoredCache.set(p, hit.has(p));
        return hit;
      });
      this.batch = { paths, run };
    }
    this.batch.paths.add(rel);
    return (await this.batch.run).has(rel);
  }

  /** A `.gitignore` changed: ignore answers are asked again. */
  forgetIgnores(): void {
    this.ignoredCache.clear();
  }

  /**
   * The root as a tree id now: files over `maxBytes` are left out (and returned), ignored ones
   * are never seen. Stat-only for files unchanged since the last snapshot (the shadow index).
   */
  snapshot(maxBytes: number): Promise<{ tree: string; large: string[] }> {
    const run = this.chain.then(async () => {
      const candidates = (await gitOk(this.place, ['ls-files', '-z', '--others', '--modified', '--exclude-standard'])).split('\0').filter(Boolean);
      const large: string[] = [];
      await Promise.all(
        [...new Set(candidates)].map(async (rel) => {
          const st = await fsp.lstat(path.join(this.root, rel)).catch(() => undefined);
          if (st?.isFile() && st.size > maxBytes) large.push(rel);
        }),
      );
      large.sort();
      const spec = ['.', ...large.map((rel) => `:(exclude,literal)${rel}`)];
      await gitOk(this.place, ['add', '-A', '--', ...spec]);
      const tree = (await gitOk(this.place, ['write-tree'])).trim();
      return { tree, large: large.map((rel) => path.join(this.root, rel)) };
    });
    this.chain = run.catch(() => undefined);
    return run;
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
      changes.push({ path: path.join(this.root, parts[i + 1]), before: ZERO.test(oldId) ? null : oldId, after: ZERO.test(newId) ? null : newId });
    }
    return changes;
  }
}

/** The shadow repositories of a store, one per root, opened once. */
export class Shadows {
  private readonly open = new Map<string, Promise<ShadowRepo>>();

  constructor(readonly storeDir: string) {}

  of(root: string): Promise<ShadowRepo> {
    let p = this.open.get(root);
    if (!p) {
      p = ShadowRepo.open(this.storeDir, root);
      p.catch(() => this.open.delete(root));
      this.open.set(root, p);
    }
    return p;
  }
}
