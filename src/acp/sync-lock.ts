/**
 * One repository's readers and writers on the far side of a placement (decision 0081): `git
 * worktree add` writes `worktrees/<name>/` one file at a time, and a step that reads every ref of
 * the repository (an unbundle's checks, a prune) must not meet one half-made. Worktree adds share
 * (each has a name of its own); those steps take the repository alone. Writers wait for the
 * readers under way and new readers wait for a waiting writer, so neither starves.
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
