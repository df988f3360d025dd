import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { git, notARepo, WorktreeError } from './git';
import { canWriteObjects } from './objects';
import { gitDirNamedBy } from './repo-lock';
import type { RepoFacts } from './snapshot';
import type { WalkMemo } from './work-tree';

// A repository's facts without a git process each time (issue 25, decision 0082). Where a
// checkout's repository is (its top, git folders, index, objects) and the configuration that
// decides whether its files can be snapshotted in-process (`work-tree.ts`) are asked of git once
// per root — `rev-parse` and `config --list --show-origin`, side by side — and kept while every
// file they came from is unchanged (the configuration files git named, and the ones it would
// read if they appeared), no `.git` appeared between the root and the top, and the environment
// git reads them through is the same. HEAD is read from the files on every call: the HEAD file,
// then the loose ref or `packed-refs`. Anything else (a symbolic ref chain, a reftable, an
// unborn branch, a ref that is not there) asks git, as before.

/** The facts of a checkout, and whether its files may be snapshotted in-process. */
export interface RepoState extends RepoFacts {
  gitDir: string;
  commonDir: string;
  /** The in-process snapshot applies (no content filters, line-ending conversion, sparse or odd settings); with the ignore lines git adds to `.gitignore`'s. */
  plain?: { excludeLines: string[] };
  /** What in-process snapshots of this checkout keep between them (`work-tree.ts`). */
  memo: WalkMemo;
}

interface Kept {
  facts: Omit<RepoState, 'head' | 'plain' | 'memo'>;
  memo: WalkMemo;
  /** The configuration allows the in-process snapshot; the global excludes file git reads (if any). */
  config: { plain: boolean; excludesFile?: string };
  /** The files the facts depend on, and their stat signature when the facts were learnt. */
  files: string[];
  signature: string;
  env: string;
}

/**
 * Settings that change what `git add -A` records, and the values under which the in-process
 * snapshot is exact. A setting that is not set has git's default here (Linux), which is fine.
 * Attributes (filters, `text`, `eol`) act only through attributes files, and any of those sends
 * the snapshot to git (`work-tree.ts`, `plainFiles`).
 */
const PLAIN_CONFIG: Record<string, (v: string) => boolean> = {
  'core.autocrlf': (v) => isFalse(v),
  'core.filemode': (v) => isTrue(v),
  'core.symlinks': (v) => isTrue(v),
  'core.ignorecase': (v) => isFalse(v),
  'core.precomposeunicode': (v) => isFalse(v),
  'core.sparsecheckout': (v) => isFalse(v),
  'core.splitindex': (v) => isFalse(v),
  'index.sparse': (v) => isFalse(v),
  'core.bare': (v) => isFalse(v),
  'core.attributesfile': () => false,
  'core.worktree': () => false,
  'extensions.objectformat': (v) => v === 'sha1',
  'extensions.refstorage': (v) => v === 'files',
};

const isTrue = (v: string) => ['', 'true', 'yes', 'on', '1'].includes(v.toLowerCase());
const isFalse = (v: string) => ['false', 'no', 'off', '0'].includes(v.toLowerCase());
/** What git's configuration and location depend on in the environment. */
const ENV_KEYS = [
  'HOME',
  'XDG_CONFIG_HOME',
  'GIT_CONFIG_NOSYSTEM',
  'GIT_CONFIG_SYSTEM',
  'GIT_CONFIG_GLOBAL',
  'GIT_CONFIG_PARAMETERS',
  'GIT_CONFIG_COUNT',
  'GIT_CEILING_DIRECTORIES',
  'GIT_DISCOVERY_ACROSS_FILESYSTEM',
];

export class RepoStateCache {
  private readonly kept = new Map<string, Kept>();

  /** The facts of the checkout holding `dir` (a `NOT_A_REPO` error outside one). */
  async state(dir: string): Promise<RepoState> {
    let k = this.kept.get(dir);
    if (!k || k.env !== envKey() || k.signature !== signatureOf(k.files, k.facts, dir)) {
      k = await learn(dir);
      this.kept.set(dir, k);
    }
    const head = readHead(k.facts.gitDir, k.facts.commonDir) ?? (await headByGit(dir));
    const plain = k.config.plain && head !== undefined && canWriteObjects(head) ? plainFiles(k) : undefined;
    return { ...k.facts, ...(head ? { head } : {}), ...(plain ? { plain } : {}), memo: k.memo };
  }
}

function envKey(): string {
  const config = Object.keys(process.env).filter((k) => k.startsWith('GIT_CONFIG_KEY_') || k.startsWith('GIT_CONFIG_VALUE_'));
  return [...ENV_KEYS, ...config.sort()].map((k) => `${k}=${process.env[k] ?? ''}`).join('\0');
}

async function learn(dir: string): Promise<Kept> {
  const env = envKey();
  const where = git(['rev-parse', '--show-toplevel', '--absolute-git-dir', '--git-common-dir', '--git-path', 'index', '--git-path', 'objects'], { cwd: dir });
  // A configuration git cannot list (a broken include) leaves the snapshot to git, which says what is wrong.
  const conf = git(['config', '-z', '--list', '--show-origin'], { cwd: dir, okCodes: [1] }).catch(() => undefined);
  let out: string;
  try {
    out = (await where).stdout;
  } catch (err) {
    await conf;
    if (err instanceof WorktreeError && err.code === 'NO_GIT') throw err;
    throw notARepo(dir, err);
  }
  const [top, gitDir, common, index, objects] = out.split('\n');
  if (!top || !gitDir || !common || !index || !objects) throw notARepo(dir);
  const facts = { top, gitDir, commonDir: path.resolve(dir, common), index: path.resolve(dir, index), objects: path.resolve(dir, objects) };
  const values = new Map<string, string>();
  const origins = new Set<string>();
  // `-z --show-origin`: "file:<path>" NUL "<key>" [LF "<value>"] NUL, per setting (a key alone is a boolean true).
  const listed = await conf;
  const fields = listed ? listed.stdout.split('\0') : [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const origin = fields[i];
    if (origin.startsWith('file:')) origins.add(path.resolve(dir, origin.slice(5)));
    const nl = fields[i + 1].indexOf('\n');
    values.set((nl < 0 ? fields[i + 1] : fields[i + 1].slice(0, nl)).toLowerCase(), nl < 0 ? '' : fields[i + 1].slice(nl + 1));
  }
  const excludesFile = values.has('core.excludesfile') ? expandHome(values.get('core.excludesfile') ?? '') : xdg('ignore');
  // A relative excludes file is read from wherever git runs: not a place the walk can name.
  const plain = listed !== undefined && [...values].every(([key, v]) => PLAIN_CONFIG[key]?.(v) ?? true) && path.isAbsolute(excludesFile);
  const candidates = [
    '/etc/gitconfig',
    path.join(os.homedir(), '.gitconfig'),
    xdg('config'),
    path.join(facts.commonDir, 'config'),
    path.join(facts.gitDir, 'config.worktree'),
  ];
  const files = [...new Set([...origins, ...candidates])];
  return {
    facts,
    memo: { listings: new Map() },
    config: { plain, ...(excludesFile ? { excludesFile } : {}) },
    files,
    signature: signatureOf(files, facts, dir),
    env,
  };
}

const expandHome = (p: string) => (p.startsWith('~/') ? path.join(os.homedir(), p.slice(2)) : p);
const xdg = (name: string) => path.join(process.env.XDG_CONFIG_HOME || path.join(os.homedir(), '.config'), 'git', name);

/** The signature of the facts: the config files' contents (named by git, or read by it if they appeared), the top's `.git`, and every folder between the root and the top (a `.git` there would make the root another repository's). */
function signatureOf(files: readonly string[], facts: Kept['facts'], dir: string): string {
  const between: string[] = [];
  for (let d = path.resolve(dir); d !== facts.top && d.startsWith(`${facts.top}/`); d = path.dirname(d)) between.push(presence(path.join(d, '.git')));
  return `${files.map(stamp).join('\0')}\0${between.join(' ')}|${presence(path.join(facts.top, '.git'))}`;
}

/** Whether a `.git` is there, and which (its folder's times change with every git command; only being there matters). */
function presence(file: string): string {
  try {
    return String(fs.lstatSync(file).ino);
  } catch {
    return '-';
  }
}

/** A config file's content (`git branch -D` rewrites the file without changing what it says: its stat data would send every child to git). */
function stamp(file: string): string {
  try {
    return fs.readFileSync(file, 'latin1');
  } catch {
    return '-';
  }
}

/** The in-process snapshot's ignore lines (global excludes, then `info/exclude`), or undefined when an attributes file git would read is there. */
function plainFiles(k: Kept): { excludeLines: string[] } | undefined {
  if (fs.existsSync(xdg('attributes')) || fs.existsSync(path.join(k.facts.commonDir, 'info', 'attributes'))) return undefined;
  const lines = (file: string | undefined) => {
    if (!file) return [];
    try {
      return fs.readFileSync(file, 'utf8').split(/\r?\n/);
    } catch {
      return [];
    }
  };
  return { excludeLines: [...lines(k.config.excludesFile), ...lines(path.join(k.facts.commonDir, 'info', 'exclude'))] };
}

/**
 * A linked worktree's top, common git folder and HEAD, read from its files (real paths): the
 * `.git` file at or above `dir`, its `commondir`, then `readHead`. Undefined for anything else
 * (a repository's own `.git` folder, no `.git`, a HEAD that is not plain): git is asked then.
 */
export function linkedWorktreeAt(dir: string): { top: string; commonDir: string; head: string } | undefined {
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    let st: fs.Stats;
    try {
      st = fs.lstatSync(path.join(d, '.git'));
    } catch {
      if (path.dirname(d) === d) return undefined;
      continue;
    }
    if (!st.isFile()) return undefined;
    try {
      const gitDir = gitDirNamedBy(path.join(d, '.git'));
      if (!gitDir) return undefined;
      const commonDir = fs.realpathSync(path.resolve(gitDir, fs.readFileSync(path.join(gitDir, 'commondir'), 'utf8').trim()));
      const head = readHead(gitDir, commonDir);
      return head ? { top: fs.realpathSync(d), commonDir, head } : undefined;
    } catch {
      return undefined;
    }
  }
}

/** The commit HEAD names, read from the files: undefined where that is not plain (git is asked then). */
export function readHead(gitDir: string, commonDir: string): string | undefined {
  try {
    if (fs.existsSync(path.join(commonDir, 'reftable'))) return undefined;
    const head = fs.readFileSync(path.join(gitDir, 'HEAD'), 'latin1').trim();
    if (/^[0-9a-f]{40}$/.test(head)) return head;
    const ref = /^ref: (refs\/heads\/[^\s]+)$/.exec(head)?.[1];
    if (!ref || ref.split('/').some((p) => p === '..' || p === '.' || p === '')) return undefined;
    let loose: string | undefined;
    try {
      loose = fs.readFileSync(path.join(commonDir, ref), 'latin1').trim();
    } catch {
      loose = undefined;
    }
    if (loose !== undefined) return /^[0-9a-f]{40}$/.test(loose) ? loose : undefined;
    const packed = fs.readFileSync(path.join(commonDir, 'packed-refs'), 'latin1');
    for (const line of packed.split('\n')) if (line.endsWith(` ${ref}`) && /^[0-9a-f]{40} /.test(line)) return line.slice(0, 40);
    return undefined;
  } catch {
    return undefined;
  }
}

async function headByGit(cwd: string): Promise<string | undefined> {
  const r = await git(['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], { cwd, okCodes: [1] });
  return r.code === 0 ? r.stdout.trim() : undefined;
}
