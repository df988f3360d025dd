import { spawnSync } from 'node:child_process';

// The demo's sample workspace must be a git repository so children can work in worktrees
// (issue 24): `npm start` makes it one (init + a first commit) when it is not inside one, and
// leaves an existing repository alone. Arbor's own bookkeeping identity; the user's hooks never run.

const GIT_ARGS = ['-c', 'user.name=Arbor demo', '-c', 'user.email=demo@arbor.invalid', '-c', 'core.hooksPath=/dev/null', '-c', 'commit.gpgsign=false'];

function git(cwd: string, ...args: string[]): { ok: boolean; out: string } {
  const r = spawnSync('git', [...GIT_ARGS, ...args], { cwd, encoding: 'utf8', env: { ...process.env, GIT_TERMINAL_PROMPT: '0' }, timeout: 60_000 });
  return { ok: r.status === 0, out: `${r.stdout ?? ''}${r.stderr ?? ''}`.trim() };
}

/** 'made': a new repository with everything committed; 'existing': it was one already; else why git could not. */
export function ensureSampleRepo(dir: string): { state: 'made' | 'existing' } | { state: 'failed'; why: string } {
  if (git(dir, 'rev-parse', '--is-inside-work-tree').ok) return { state: 'existing' };
  for (const args of [
    ['init', '-q', '-b', 'main'],
    ['add', '-A'],
    ['commit', '-q', '-m', 'The Arbor demo sample workspace'],
  ]) {
    const r = git(dir, ...args);
    if (!r.ok) return { state: 'failed', why: `git ${args[0]} failed: ${r.out || 'no output'}` };
  }
  return { state: 'made' };
}
