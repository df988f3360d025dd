import * as fs from 'node:fs';
import * as path from 'node:path';
import type { WorktreeState } from '../session/events';
import { git } from './git';
import { isInside } from './names';
import { lockOf } from './repo-lock';

// What nothing live owns (decision 0060): every folder in Arbor's worktrees folder and every
// `git worktree list` entry inside it, judged by its node (the folder's name is the child's id).
// Nothing here is removed: the caller offers it, the human (or `arbor worktree clean`) decides.

export type OrphanReason = 'no-node' | 'closed' | 'interrupted' | 'missing-folder';

export interface Orphan {
  id: string;
  path: string;
  /** From `git worktree list` (absent: git no longer knows the folder). */
  branch?: string;
  repo?: string;
  /** The node's worktree state, when the node exists. */
  state?: WorktreeState | 'none';
  reason: OrphanReason;
  /** In words, with what to do. */
  why: string;
}

export interface OrphanQuery {
  dir: string;
  /** A folder of the repository to ask `git worktree list`. */
  repoRoot?: string;
  /** The node's worktree state: undefined = no such node; 'none' = a node without its own worktree. */
  state(id: string): WorktreeState | 'none' | undefined;
  /** Sessions whose turn a crash cut. */
  interrupted: ReadonlySet<string>;
}

const WHY: Record<OrphanReason, string> = {
  'no-node': 'its conversation no longer exists (deleted, or Arbor stopped before the subagent was created)',
  closed: 'it was applied, discarded or kept, but Arbor stopped before the folder was removed',
  interrupted: 'a crash cut its subagent mid-turn; review it first if you want its work',
  'missing-folder': 'git still lists it but its folder is gone',
};

export async function findOrphans(query: OrphanQuery): Promise<Orphan[]> {
  // git lists real paths: compare with the folder's real path (a store under a symlinked folder).
  const q = { ...query, dir: fs.existsSync(query.dir) ? fs.realpathSync(query.dir) : query.dir };
  const entries = new Map<string, { path: string; branch?: string; repo?: string }>();
  for (const name of safeList(q.dir)) entries.set(name, { path: path.join(q.dir, name) });
  const listed = q.repoRoot ? await gitWorktrees(q.repoRoot).catch(() => []) : [];
  for (const w of listed) {
    if (!isInside(w.path, q.dir) || w.path === q.dir) continue;
    const id = path.relative(q.dir, w.path).split(path.sep)[0];
    entries.set(id, { path: w.path, ...(w.branch ? { branch: w.branch } : {}), repo: w.repo, ...(w.missing ? { missing: true } : {}) });
  }
  const out: Orphan[] = [];
  for (const [id, e] of entries) {
    const state = q.state(id);
    const missing = !fs.existsSync(e.path);
    const reason: OrphanReason | undefined =
      state === undefined
        ? 'no-node'
        : state !== 'open' && state !== 'none'
          ? 'closed'
          : missing
            ? 'missing-folder'
            : q.interrupted.has(id)
              ? 'interrupted'
              : state === 'none'
                ? 'no-node'
                : undefined;
    if (!reason) continue;
    out.push({
      id,
      path: e.path,
      ...(e.branch ? { branch: e.branch } : {}),
      ...(e.repo ? { repo: e.repo } : {}),
      ...(state ? { state } : {}),
      reason,
      why: WHY[reason],
    });
  }
  return out.sort((a, b) => a.id.localeCompare(b.id));
}

function safeList(dir: string): string[] {
  try {
    return fs
      .readdirSync(dir, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name);
  } catch {
    return [];
  }
}

/** `git worktree list --porcelain`, parsed: path, branch (without `refs/heads/`), whether git marks it prunable. */
async function gitWorktrees(root: string): Promise<{ path: string; branch?: string; repo: string; missing: boolean }[]> {
  const top = (await git(['rev-parse', '--show-toplevel'], { cwd: root })).stdout.trim();
  const text = (await lockOf(top).shared(() => git(['worktree', 'list', '--porcelain'], { cwd: top }))).stdout;
  const out: { path: string; branch?: string; repo: string; missing: boolean }[] = [];
  for (const block of text.split('\n\n')) {
    const lines = block.split('\n');
    const wt = lines.find((l) => l.startsWith('worktree '));
    if (!wt) continue;
    const branch = lines.find((l) => l.startsWith('branch '))?.slice('branch refs/heads/'.length);
    out.push({ path: wt.slice('worktree '.length), ...(branch ? { branch } : {}), repo: top, missing: lines.some((l) => l.startsWith('prunable')) });
  }
  return out;
}
