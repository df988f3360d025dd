import type { Harness } from '../../core/harness';
import type { HostToWebview } from '../../protocol';
import type { HandlerContext, RequestHandlers } from './context';

type WorktreeRequest = 'worktree/review' | 'worktree/apply' | 'worktree/discard' | 'worktree/keep' | 'worktree/clean';

/** The orphans as the panel's notice shows them: by branch (no session ids), with why. A failure to look is no orphan. */
async function lookForOrphans(h: Harness): Promise<HostToWebview> {
  const found = await h.worktrees.orphans().catch(() => []);
  return { type: 'worktree/orphans', orphans: found.map((o) => ({ id: o.id, name: o.branch ?? 'a worktree folder', why: o.why })) };
}

/** The look under way per harness: views that connect meanwhile share it. */
const looking = new WeakMap<Harness, Promise<HostToWebview>>();

/**
 * The orphans for a view that connected: one look (a git run) at a time, shared by every
 * `webview/ready` that arrives while it runs — a view posting ready in a loop starts no git per message.
 */
export function worktreeOrphans(h: Harness): Promise<HostToWebview> {
  let look = looking.get(h);
  if (!look) {
    look = lookForOrphans(h).finally(() => looking.delete(h));
    looking.set(h, look);
  }
  return look;
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
      const h = await c.ensure();
      let r = await h.worktrees.apply(m.sessionId);
      // Only protected paths held (a placed child's): the human decides, having seen them named.
      if (!r.applied && r.conflicts.length && r.conflicts.every((x) => x.protected) && c.hooks.confirmProtected) {
        if (
          await c.hooks.confirmProtected(
            await c.nameOf(m.sessionId),
            r.conflicts.map((x) => x.path),
          )
        )
          r = await h.worktrees.apply(m.sessionId, { protectedOk: true });
      }
      return r.applied
        ? { applied: true, files: r.files, conflicts: [] }
        : { applied: false, files: [], conflicts: r.conflicts.map(({ path, message }) => ({ path, message })) };
    },
    'worktree/discard': async (_port, m) => {
      await (await c.ensure()).worktrees.discard(m.sessionId);
      return {};
    },
    'worktree/clean': async () => {
      const h = await c.ensure();
      const orphans = await h.worktrees.orphans();
      for (const o of orphans) await h.worktrees.clean(o.id);
      c.broadcast(await lookForOrphans(h)); // a fresh look, never one begun before the clean
      return { cleaned: orphans.length };
    },
    'worktree/keep': async (_port, m) => {
      const { branch } = await (await c.ensure()).worktrees.keep(m.sessionId);
      return { branch };
    },
  };
}
