import * as fs from 'node:fs';
import * as path from 'node:path';

// A `git` of the test's own, first on PATH: Arbor runs the git PATH names at each call (the
// spawner looks the name up in the PATH of the environment it is given), so a wrapper placed
// there runs where Arbor's git would — unconfined on the host, or inside the sandbox that wraps
// it — and can act at a chosen point of git's work: before it, after it, or inside it (a clean
// filter git runs on a file's bytes as it reads them). No seam in the code under test.

/** The real path of the git that PATH names now (the one a wrapper runs). */
export function realGit(): string {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!path.isAbsolute(dir)) continue;
    const p = path.join(dir, 'git');
    try {
      fs.accessSync(p, fs.constants.X_OK);
      if (fs.statSync(p).isFile()) return fs.realpathSync(p);
    } catch {
      // (not here)
    }
  }
  throw new Error('no git on PATH: these tests need git');
}

/** Writes `dir/git`, a `/bin/sh` script with this body (`$REAL` is the real git), made executable. */
export function writeGitWrapper(dir: string, body: string): string {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'git');
  fs.writeFileSync(file, `#!/bin/sh\nREAL=${shq(realGit())}\n${body}\n`, { mode: 0o755 });
  return file;
}

/** Runs `fn` with `dir` first on PATH, the PATH as it was afterwards. */
export async function withPathFirst<T>(dir: string, fn: () => Promise<T>): Promise<T> {
  const was = process.env.PATH;
  process.env.PATH = `${dir}${path.delimiter}${was ?? '/usr/bin:/bin'}`;
  try {
    return await fn();
  } finally {
    process.env.PATH = was;
  }
}

/** A word quoted for `sh`. */
export function shq(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * sh lines that set `$sub` to git's subcommand: the first argument that is no option, after the
 * `-c name=value` and `-C dir` pairs Arbor puts first.
 */
export const SUBCOMMAND = `sub=; skip=
for a in "$@"; do
  if [ -n "$skip" ]; then skip=; continue; fi
  case "$a" in -c|-C) skip=1 ;; -*) ;; *) sub=$a; break ;; esac
done`;
