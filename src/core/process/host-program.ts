import * as fs from 'node:fs';
import * as path from 'node:path';

// The programs Arbor itself runs on the host by name — git for checkpoints and worktrees,
// bubblewrap, ssh and the container runtime for placements, a remote agent's command — are
// looked up on PATH. A PATH folder a confined command can write is a way out of its sandbox:
// the user's PATH often names a folder of the workspace (an activated `.venv/bin`, direnv's
// `PATH_add bin`, `node_modules/.bin`), a command writes its own `git` there, and the next
// checkpoint runs it unconfined, as the user. So a name is looked up only in PATH's absolute
// folders (an empty or relative entry is the folder a program starts in: a workspace) that are
// not inside a folder any harness of this process lets its commands write (`guardFolders`: its
// workspace roots and its worktrees), nor, where a caller names one, below `below`; a program
// found elsewhere whose real file lies in one of those is passed over too (a link into the
// workspace). A folder once guarded stays guarded for the process's life: a workspace closed
// still holds what its commands wrote, and PATH does not change.

const guarded = new Set<string>();
let version = 0;
/** What a lookup found: the program as PATH spells it, and its real file (links followed). */
interface Found {
  file: string;
  real: string;
}
const found = new Map<string, Found | undefined>();
const paths = new Map<string, string>();

/** Folders a harness's commands may write (real paths): no program Arbor runs by name is taken from inside them. */
export function guardFolders(dirs: readonly string[]): void {
  for (const d of dirs) {
    const real = realOr(d);
    if (guarded.has(real)) continue;
    guarded.add(real);
    version++;
  }
}

/** Whether `p` (a real path) is one of the guarded folders or inside one. */
export function insideGuarded(p: string): boolean {
  for (const g of guarded) if (isAtOrBelow(p, g)) return true;
  return false;
}

/**
 * The path of the program PATH names `name` (as PATH spells it: a program may read its own name;
 * see above for the folders passed over), or undefined when there is none outside them. A name
 * with a `/` is the user's own choice of file: resolved from the current folder, and returned
 * when it is an executable file.
 */
export function hostProgram(name: string, pathVar: string = process.env.PATH ?? '', below?: string): string | undefined {
  return lookup(name, pathVar, below)?.file;
}

/** As `hostProgram`, the program's real file (links followed): what a caller that starts it again and again keeps (bubblewrap). */
export function hostProgramReal(name: string, pathVar: string = process.env.PATH ?? '', below?: string): string | undefined {
  return lookup(name, pathVar, below)?.real;
}

function lookup(name: string, pathVar: string, below: string | undefined): Found | undefined {
  if (name.includes('/')) {
    const file = path.resolve(name);
    const real = executable(file);
    return real ? { file, real } : undefined;
  }
  const key = `${version}\0${below ?? ''}\0${pathVar}\0${name}`;
  if (found.has(key)) return found.get(key);
  let hit: Found | undefined;
  for (const dir of hostPathDirs(pathVar, below)) {
    const file = path.join(dir, name);
    const real = executable(file);
    if (real && !insideGuarded(real)) {
      hit = { file, real };
      break;
    }
  }
  if (found.size > 256) found.clear();
  found.set(key, hit);
  return hit;
}

/**
 * PATH without the folders a confined command could write (see above): the PATH of a program
 * Arbor runs itself (git, ssh, the container engine), which looks programs up on it in turn
 * (git runs ssh, a filter, a pager).
 */
export function hostPath(pathVar: string = process.env.PATH ?? ''): string {
  const key = `${version}\0${pathVar}`;
  let kept = paths.get(key);
  if (kept === undefined) {
    kept = hostPathDirs(pathVar).join(path.delimiter);
    if (paths.size > 64) paths.clear();
    paths.set(key, kept);
  }
  return kept;
}

function hostPathDirs(pathVar: string, below?: string): string[] {
  const here = below === undefined || below === '/' ? undefined : realOr(below);
  return pathVar.split(path.delimiter).filter((dir) => {
    if (!path.isAbsolute(dir)) return false;
    const at = realOr(dir);
    return !(here !== undefined && isAtOrBelow(at, here)) && !insideGuarded(at);
  });
}

/** What a message says of where programs are looked for, for a "not found" error. */
export const HOST_PROGRAM_RULE =
  "Arbor looks for the programs it runs itself in PATH's absolute folders outside the workspace (a confined command could write one inside it)";

/** The real path of `p` when it is an executable file. */
function executable(p: string): string | undefined {
  try {
    fs.accessSync(p, fs.constants.X_OK);
    return fs.statSync(p).isFile() ? fs.realpathSync(p) : undefined;
  } catch {
    return undefined;
  }
}

function realOr(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}

function isAtOrBelow(p: string, dir: string): boolean {
  const rel = path.relative(dir, p);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/**
 * How to start `file` (a program found outside the guarded folders) so that nothing of it is
 * looked up on PATH: a script whose first line is `#!/usr/bin/env NAME [args]` (`claude`, `codex`,
 * `npx`: `#!/usr/bin/env node`) would have `env` find NAME first on PATH, a guarded folder's
 * too — so NAME is looked up here (`hostProgram`) and started with the script as its argument.
 * Any other file starts as it is (the kernel reads an absolute `#!` itself). Undefined when NAME
 * is found nowhere outside the guarded folders, or the `env` line uses options this cannot
 * follow (the caller says the program cannot start).
 */
export function hostLaunch(file: string, args: readonly string[], pathVar: string = process.env.PATH ?? ''): { file: string; args: string[] } | undefined {
  const line = firstLine(file);
  const m = line === undefined ? null : /^#!\s*(\S+)(?:\s+(.*))?$/.exec(line);
  if (!m || path.basename(m[1]) !== 'env') return { file, args: [...args] };
  let words = (m[2] ?? '').trim().split(/\s+/).filter(Boolean);
  if (words[0] === '-S') words = words.slice(1);
  const name = words[0];
  if (!name || name.startsWith('-') || name.includes('=')) return undefined;
  const interpreter = hostProgram(name, pathVar);
  return interpreter ? { file: interpreter, args: [...words.slice(1), file, ...args] } : undefined;
}

/** The first line of a file (up to 256 bytes), or undefined when it cannot be read. */
function firstLine(file: string): string | undefined {
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, 'r');
    const buf = Buffer.alloc(256);
    const n = fs.readSync(fd, buf, 0, buf.length, 0);
    const text = buf.subarray(0, n).toString('utf8');
    const end = text.indexOf('\n');
    return end < 0 ? text : text.slice(0, end);
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}
