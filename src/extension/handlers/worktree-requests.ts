import type { Harness } from '../../core/harness';
import type { HostToWebview } from '../../protocol';
import type { HandlerContext, RequestHandlers } from './context';

type WorktreeRequest = 'worktree/review' | 'worktree/apply' | 'worktree/discard' | 'worktree/keep' | 'worktree/clean';

/** The orphans as the panel's notice shows them: by branch (no session ids), with why. A failure to look is no orphan. */
export async function worktreeOrphans(h: Harness): Promise<HostToWebview> {
  const found = await h.worktrees.orphans().catch(() => []);
  return { type: 'worktree/orphans', orphans: found.map((o) => ({ id: o.id, name: o.branch ?? 'a worktree folder', why: o.why })) };
}

/** The worktree bar's requests (decision 0060): review in the diff editor, apply, discard, keep the branch. */
export function worktreeRequests(c: HandlerContext): Pick<RequestHandlers, WorktreeRequest> {
  return {
    'worktree/review': async (_port, m) => {
      const h = await c.ensure();
      const { files } = await h.worktrees.diff(m.sessionId);
      if (!c.hooks.reviewWorktree) throw new Error('There is no editor here to show the changes in; run `arbor worktree diff ID` instead.');
      return { files: await c.hooks.reviewWorktree(m.sessionId, await c.nameOf(m.sessionId), files) };
    },
    'worktree/apply': async (_port, m) => {
      const r = await (await c.ensure()).worktrees.apply(m.sessionId);
      return r.applied ? { applied: true, files: r.files, conflicts: [] } : { applied: false, files: [], conflicts: r.conflicts };
    },
    'worktree/discard': async (_port, m) => {
      await (await c.ensure()).worktrees.discard(m.sessionId);
      return {};
    },
    'worktree/clean': async () => {
      const h = await c.ensure();
      const orphans = await h.worktrees.orphans();
      for (const o of orphans) await h.worktrees.clean(o.id);
      c.broadcast(await worktreeOrphans(h));
      return { cleaned: orphans.length };
    },
    'worktree/keep': async (_port, m) => {
      const { branch } = await (await c.ensure()).worktrees.keep(m.sessionId);
      return { branch };
    },
  };
}
