import * as fs from 'node:fs';
import * as path from 'node:path';

// Git looking for its repository from a folder stops at the first folder, going up, that holds a
// `.git` — or that *is* a git folder itself (`HEAD`, `objects/`, `refs/`: a bare repository).
// A command cannot write `.git`, but it can write those names into a workspace folder, and git
// then reads their `config` as the repository's (`core.fsmonitor`: a program it runs whenever it
// reads an index; decision 0110). Arbor's git therefore never takes a bare repository it finds:
// `safe.bareRepository=explicit` where git knows it (2.38 on), and this walk, the same one git
// makes, before every git it runs from a folder (older gits ignore the setting).

/**
 * Whether `dir` may be a git folder to git's discovery: a `HEAD` (a file, or a link: git reads a
 * link's target as a ref) with `objects/` and `refs/` folders, or a `commondir` file naming where
 * those are (a linked worktree's git folder). Looser than git, never stricter: a folder it passes
 * over is one git passes over too.
 */
function isGitFolder(dir: string): boolean {
  const at = (name: string) => path.join(dir, name);
  const head = entry(at('HEAD'), false);
  if (!head || head.isDirectory()) return false;
  const folder = (p: string) => !!entry(p, true)?.isDirectory();
  return entry(at('commondir'), false) !== undefined || (folder(at('objects')) && folder(at('refs')));
}

/** What is at `p` (through a link when `follow`), or undefined: absent, or not reachable (as git's own `stat` finds nothing there). */
function entry(p: string, follow: boolean): fs.Stats | undefined {
  try {
    return follow ? fs.statSync(p, { throwIfNoEntry: false }) : fs.lstatSync(p, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

/**
 * The bare repository git would find from `cwd` (that folder or one above, before any `.git`),
 * or undefined. A `.git` file (a linked worktree, a submodule) or a `.git` git folder ends the
 * walk as it ends git's; an empty `.git` (the sandbox's stand-in) does not, as it does not for git.
 */
export function bareFoundFrom(cwd: string): string | undefined {
  for (let dir = path.resolve(cwd); ; ) {
    if (dotGitEndsSearch(dir)) return undefined;
    if (isGitFolder(dir)) return dir;
    const up = path.dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
}

/**
 * Whether git's discovery ends at `dir`'s `.git` before it asks whether `dir` itself is a bare
 * repository: a `.git` file (git stops there, valid or not) or a `.git` git folder. An empty or
 * broken `.git` folder does not end it (git 2.39: `dir` with an empty `.git` and a planted `HEAD`,
 * `objects/`, `refs/` is taken as bare).
 */
export function dotGitEndsSearch(dir: string): boolean {
  const dotGit = path.join(dir, '.git');
  const st = entry(dotGit, true);
  return !!st?.isFile() || (!!st?.isDirectory() && isGitFolder(dotGit));
}

/** What a bare repository found from `dir` says, with what to do. */
export function bareFoundMessage(found: string, dir: string): string {
  return `${found} is itself a bare repository to git (HEAD, config, objects and refs in the folder, no .git), so a child cannot get its own worktree from ${dir}: Arbor never runs git on a repository found that way, since a command in the workspace can write them (and a program its config names would run outside the sandbox). Remove them if a command made them, or open the folder whose .git holds the repository, or start the child without isolation.`;
}
