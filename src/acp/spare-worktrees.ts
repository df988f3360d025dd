import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { foldName } from '../core/tools/protected-names';
import { bareRepo, git } from '../core/worktree/git';

// The far side's worktrees of finished nodes, kept for the next node of the same repository
// (decision 0114). Making a node's worktree writes every file of the commit (1,000 files: 140–
// 500 ms of CPU on the test machine, nearly all of it the file system creating files); a kept one
// is moved into the new node's folder (a rename) and reset to the new commit, which writes only
// the files that differ. The reset leaves exactly the commit: every tracked file checked against
// the index's stat data (and rewritten when it differs), everything untracked or ignored removed,
// the worktree's own git state (HEAD, index) made anew. A worktree whose folders the last agent
// changed the modes of is not kept. Spares live in `<repos>/.spare/<repo>/`, outside `--nodes`:
// no session can name one. Each call below runs under the repository's lock held alone (the
// caller's): `git worktree move` reads every worktree's entry, as `worktree add` does.

/** The most a repository keeps (a fan-out's slots on one placement are fewer); past it a finished node's worktree is removed. */
export const MAX_SPARES = 8;
/** What a worktree's own git folder keeps across a reuse: the rest (a reflog, ORIG_HEAD, a rebase's state) is the last node's. */
const KEPT_GIT_FILES = new Set(['HEAD', 'index', 'gitdir', 'commondir']);

export class SpareWorktrees {
  private readonly root: string;
  /** The mode git gives a folder it makes (0777 less the umask): a folder of another mode was changed by an agent. */
  private readonly dirMode: number;

  constructor(repos: string) {
    this.root = path.join(repos, '.spare');
    const probe = fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-mode-'));
    try {
      fs.mkdirSync(path.join(probe, 'd'));
      this.dirMode = fs.statSync(path.join(probe, 'd')).mode & 0o7777;
    } finally {
      fs.rmSync(probe, { recursive: true, force: true });
    }
  }

  private folderOf(repoDir: string): string {
    return path.join(this.root, path.basename(repoDir, '.git'));
  }

  /** The spares of a repository, oldest first. */
  private list(repoDir: string): string[] {
    const dir = this.folderOf(repoDir);
    try {
      return fs
        .readdirSync(dir)
        .map((n) => path.join(dir, n))
        .sort((a, b) => fs.lstatSync(a).mtimeMs - fs.lstatSync(b).mtimeMs);
    } catch {
      return [];
    }
  }

  /**
   * Keep a finished node's worktree `wt` (its folder and `.git` already checked both ways) for the
   * next node. False: it was removed instead (enough are kept, its folders' modes were changed, or
   * the move failed). The caller holds the repository's lock alone.
   */
  async keep(repoDir: string, wt: string): Promise<boolean> {
    if (this.list(repoDir).length < MAX_SPARES && this.foldersUnchanged(wt)) {
      fs.mkdirSync(this.folderOf(repoDir), { recursive: true });
      const to = path.join(this.folderOf(repoDir), randomBytes(8).toString('hex'));
      const moved = await git(['worktree', 'move', wt, to], bareRepo(repoDir)).then(
        () => true,
        () => false,
      );
      if (moved) {
        fs.utimesSync(to, new Date(), new Date()); // (the order spares are taken in)
        return true;
      }
    }
    await remove(repoDir, wt);
    return false;
  }

  /** A kept worktree moved to `wt` (which must not exist): true when one was. The caller holds the repository's lock alone. */
  async take(repoDir: string, wt: string): Promise<boolean> {
    for (const spare of this.list(repoDir)) {
      const moved = await git(['worktree', 'move', spare, wt], bareRepo(repoDir)).then(
        () => true,
        () => false,
      );
      if (moved) return true;
      await remove(repoDir, spare);
    }
    return false;
  }

  /**
   * A taken worktree made exactly `commit`: its own git state but HEAD and the index dropped, HEAD
   * detached at the commit, the index and the files reset to it (files whose stat data differ from
   * the index are written again), and everything untracked or ignored removed. Throws when any
   * step fails: the caller removes it and makes the node's worktree anew.
   */
  async reset(gitDir: string, wt: string, commit: string): Promise<void> {
    if (!this.foldersUnchanged(wt)) throw new Error(`a folder of ${wt} has another mode than git gives its folders`);
    const g = (args: string[]) => git(['--git-dir', gitDir, '--work-tree', wt, ...args], { cwd: wt });
    await g(['update-ref', '--no-deref', 'HEAD', commit]);
    // (After the HEAD's move, whose reflog names the last node's HEAD.)
    for (const name of fs.readdirSync(gitDir)) if (!KEPT_GIT_FILES.has(name)) fs.rmSync(path.join(gitDir, name), { recursive: true, force: true });
    await g(['read-tree', '-u', '--reset', commit]);
    await g(['clean', '-ffdxq']);
    // Neither the reset nor the clean looks inside a submodule's folder (a gitlink): what the last
    // node left there would be the next node's. Only an empty one is taken as the commit's.
    const listed = await g(['ls-files', '--stage', '-z']);
    for (const entry of listed.stdout.split('\0')) {
      if (!entry.startsWith('160000 ')) continue;
      const at = path.join(wt, entry.slice(entry.indexOf('\t') + 1));
      if (fs.existsSync(at) && (!fs.lstatSync(at).isDirectory() || fs.readdirSync(at).length > 0))
        throw new Error(`the submodule folder ${at} of a kept worktree is not empty`);
    }
  }

  /**
   * Every folder of `wt` (itself included) has the mode git gives its folders, and no entry below
   * its top is named `.git` (`clean -ffdx` leaves one in a tracked folder: a repository the last
   * node's agent planted, whose config the next node's git would run).
   */
  private foldersUnchanged(wt: string): boolean {
    const walk = (dir: string): boolean => {
      if ((fs.lstatSync(dir).mode & 0o7777) !== this.dirMode) return false;
      for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        const top = dir === wt;
        if (!top && foldName(e.name) === '.git') return false;
        if (e.isDirectory() && !(top && e.name === '.git') && !walk(path.join(dir, e.name))) return false;
      }
      return true;
    };
    try {
      return walk(wt);
    } catch {
      return false;
    }
  }

  /** Remove every spare of every repository (the far side closes; one killed leaves at most MAX_SPARES a repository, taken or removed by the next). */
  async removeAll(): Promise<void> {
    let repos: string[];
    try {
      repos = fs.readdirSync(this.root);
    } catch {
      return;
    }
    for (const r of repos) {
      const repoDir = path.join(path.dirname(this.root), `${r}.git`);
      for (const spare of this.list(repoDir)) await remove(repoDir, spare);
      fs.rmSync(this.folderOf(repoDir), { recursive: true, force: true });
    }
  }
}

/** A worktree gone: git's removal, else its folder; its entry pruned. */
async function remove(repoDir: string, wt: string): Promise<void> {
  await git(['worktree', 'remove', '--force', '--force', wt], bareRepo(repoDir)).catch(() => fs.rmSync(wt, { recursive: true, force: true }));
  await git(['worktree', 'prune'], bareRepo(repoDir)).catch(() => undefined);
}
