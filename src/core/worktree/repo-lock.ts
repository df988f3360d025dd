import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * One repository's worktree bookkeeping, in this process (decision 0081): `git worktree add`
 * writes `worktrees/<name>/` one file at a time, and every git step that reads all worktrees'
 * entries — another `worktree add`, a prune, a `checkout -b` (is the branch out elsewhere?) —
 * fails on one half made ("failed to read worktrees/<name>/commondir"). Such steps take the
 * repository alone; the work that reads no other worktree (writing a worktree's files) shares it.
 * Writers wait for the readers under way and new readers wait for a waiting writer, so neither
 * starves. Another process's git (the user's own) is not covered: this is Arbor against itself.
 */
export class RepoLock {
  private readers = 0;
  private writer = false;
  private readonly queue: { write: boolean; go: () => void }[] = [];

  shared<T>(fn: () => Promise<T>): Promise<T> {
    return this.with(false, fn);
  }

  alone<T>(fn: () => Promise<T>): Promise<T> {
    return this.with(true, fn);
  }

  private async with<T>(write: boolean, fn: () => Promise<T>): Promise<T> {
    await this.acquire(write);
    try {
      return await fn();
    } finally {
      if (write) this.writer = false;
      else this.readers--;
      this.pump();
    }
  }

  private acquire(write: boolean): Promise<void> {
    if (this.queue.length === 0 && !this.writer && (!write || this.readers === 0)) {
      this.take(write);
      return Promise.resolve();
    }
    return new Promise((go) => this.queue.push({ write, go }));
  }

  private take(write: boolean): void {
    if (write) this.writer = true;
    else this.readers++;
  }

  private pump(): void {
    while (this.queue.length > 0 && !this.writer) {
      const next = this.queue[0]!;
      if (next.write && this.readers > 0) return;
      this.queue.shift();
      this.take(next.write);
      next.go();
      if (next.write) return;
    }
  }
}

const locks = new Map<string, RepoLock>();

/** The lock of the repository whose common git folder (or bare repository) is `gitDir` (a real path). */
export function repoLock(gitDir: string): RepoLock {
  let l = locks.get(gitDir);
  if (!l) locks.set(gitDir, (l = new RepoLock()));
  return l;
}

/**
 * The common git folder of the repository holding `dir`, found without running git: the `.git`
 * folder above it, or — from inside a worktree — the folder its `.git` file and `commondir` name.
 * Absent a `.git` above it, `dir` itself (a lock of its own, never shared by mistake).
 */
export function commonGitDir(dir: string): string {
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    const found = gitDirAt(path.join(d, '.git'));
    if (found) return found;
    if (path.dirname(d) === d) return path.resolve(dir);
  }
}

/** The lock of the repository holding `dir` (see `commonGitDir`). */
export function lockOf(dir: string): RepoLock {
  return repoLock(commonGitDir(dir));
}

/** The git folder a `.git` file names (`gitdir: <path>`, resolved beside it); undefined for no such file or line (a `.git` folder throws: the caller's lstat says which). */
export function gitDirNamedBy(dotGitFile: string): string | undefined {
  const named = /^gitdir: (.+)$/m.exec(fs.readFileSync(dotGitFile, 'utf8'))?.[1]?.trim();
  return named ? path.resolve(path.dirname(dotGitFile), named) : undefined;
}

/** What a `.git` at this path makes the common git folder: undefined when there is none. */
function gitDirAt(dotGit: string): string | undefined {
  let st: fs.Stats;
  try {
    st = fs.statSync(dotGit);
  } catch {
    return undefined;
  }
  if (st.isDirectory()) return fs.realpathSync(dotGit);
  try {
    const gitDir = gitDirNamedBy(dotGit);
    if (!gitDir) return undefined;
    // A worktree's git folder names the common one; a submodule's is its own.
    const common = fs.existsSync(path.join(gitDir, 'commondir')) ? fs.readFileSync(path.join(gitDir, 'commondir'), 'utf8').trim() : '.';
    return fs.realpathSync(path.resolve(gitDir, common));
  } catch {
    return undefined;
  }
}
