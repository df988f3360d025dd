import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

// Where a repository keeps the hooks git runs: its configured hooks folder (`core.hooksPath`,
// e.g. `.husky`), and for husky v9 (`core.hooksPath = .husky/_`) the folder above it too: the
// stubs in `.husky/_` only dispatch to `.husky/<hook>`, so the scripts that really run live one
// level up. Both are protected like `.git/hooks` (by the file tools and by the OS sandbox).
// The reads are synchronous on purpose: a few small files per repository, read before every
// command for every nested repository, cost microseconds each, and a trip through libuv's
// thread pool costs far more on a loaded machine (50 nested repositories: ~8 ms async).

/**
 * The real path of the hooks folder of the repository holding `dir` (found as git finds it:
 * the nearest `.git`, folder or `gitdir:` file, at or above `dir`); undefined when none is set.
 */
export async function hooksPathOf(dir: string): Promise<string | undefined> {
  return (await hooksDirsOf(dir))[0];
}

/** Like `hooksPathOf`, plus husky's dispatch folder (the parent of a hooks folder named `_`). */
export async function hooksDirsOf(dir: string): Promise<string[]> {
  for (let top = dir; ; top = path.dirname(top)) {
    const gitDir = gitDirAt(top);
    if (gitDir) return repoHooksDirs(top, gitDir);
    if (path.dirname(top) === top) return [];
  }
}

/** The hooks folders of the repository whose work tree is `top` (it holds a `.git`); empty when it has none configured. */
export async function repoHooksDirs(top: string, gitDir?: string): Promise<string[]> {
  const dir = gitDir ?? gitDirAt(top);
  if (!dir) return [];
  let value: string | undefined;
  for (const file of configFiles(dir)) value = readHooksPath(file) ?? value;
  if (!value) return [];
  const expanded = value.startsWith('~/') ? path.join(os.homedir(), value.slice(2)) : value;
  const real = physicalSync(path.resolve(top, expanded));
  return path.basename(real) === '_' ? [real, path.dirname(real)] : [real];
}

/** The real path of `p`, its missing parts appended to the real path of the part that exists (a hooks folder not made yet is still protected). */
function physicalSync(p: string): string {
  const missing: string[] = [];
  for (let at = p; ; at = path.dirname(at)) {
    try {
      return path.join(fs.realpathSync(at), ...missing);
    } catch {
      if (path.dirname(at) === at) return p;
      missing.unshift(path.basename(at));
    }
  }
}

/** The git directory `dir/.git` names: itself when a folder, the `gitdir:` target when a file. */
export function gitDirAt(dir: string): string | undefined {
  const dotGit = path.join(dir, '.git');
  try {
    const st = fs.statSync(dotGit);
    if (st.isDirectory()) return dotGit;
    const m = /^gitdir:\s*(.+?)\s*$/m.exec(fs.readFileSync(dotGit, 'utf8'));
    return m ? path.resolve(dir, m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** The repository config, then a worktree's own: later files override earlier ones, as in git. */
function configFiles(gitDir: string): string[] {
  let common = gitDir;
  // Not there (the usual case: not a linked worktree): the git folder is the common one. Asked
  // first, because a failed read costs an exception, per repository, per command.
  const commondir = path.join(gitDir, 'commondir');
  if (fs.existsSync(commondir)) {
    try {
      common = path.resolve(gitDir, fs.readFileSync(commondir, 'utf8').trim());
    } catch {
      // Unreadable: read the git folder's own config.
    }
  }
  const files = [path.join(common, 'config')];
  if (common !== gitDir) files.push(path.join(gitDir, 'config.worktree'));
  return files;
}

/**
 * What each config file said, by the file's identity (inode, size, change and modification times
 * to the nanosecond): a command's start asks every nested repository's config, and one stat costs
 * a third of a read. A config written since has another change time, so it is read again; one
 * written in the last two seconds is not kept (file times tick coarser than a nanosecond).
 */
const said = new Map<string, { id: string; value: string | undefined }>();
const MAX_SAID = 4096;
const TRUST_AFTER_NS = 2_000_000_000n;

/** `hooksPath` of the `[core]` section of one git config file (last one wins), or undefined. */
function readHooksPath(file: string): string | undefined {
  const st = fs.statSync(file, { bigint: true, throwIfNoEntry: false });
  if (!st) return undefined;
  const id = `${st.ino}:${st.size}:${st.ctimeNs}:${st.mtimeNs}`;
  const known = said.get(file);
  if (known?.id === id) return known.value;
  const value = parseHooksPath(file);
  // A file changed within the clock's granularity of now could change again under the same
  // times and size: it is kept only once its change time is safely past.
  if (BigInt(Date.now()) * 1_000_000n - st.ctimeNs < TRUST_AFTER_NS) return value;
  if (said.size >= MAX_SAID) said.clear();
  said.set(file, { id, value });
  return value;
}

function parseHooksPath(file: string): string | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
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
