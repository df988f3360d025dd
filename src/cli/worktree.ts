import type { Harness } from '../core/harness';
import { WorktreeError } from '../core/worktree/git';
import type { WorktreeListing } from '../core/worktree/service';
import { type ParsedArgs, UsageError } from './args';
import type { Command, Io } from './output';

// `arbor worktree list|diff|apply|discard|keep|clean` (decision 0060): the lifecycle of
// children that ran in their own git worktrees, by the child's session id. Apply exits 1 on a
// conflict and changes nothing; a refusal says its code and what to do (exit 1).

type Sub = (h: Harness, id: string | undefined, args: ParsedArgs, io: Io) => Promise<number>;

function line(l: WorktreeListing): string {
  const files = l.changesUnread
    ? ` · ${l.changesUnread}`
    : l.filesChanged === undefined
      ? ''
      : ` · ${l.filesChanged} file${l.filesChanged === 1 ? '' : 's'} changed`;
  // A placed child's folder holds no files until asked (decision 0093): its work is its branch.
  const unwritten = l.unwritten ? `  (files not written here; its work is on ${l.branch}; write them with: git -C ${l.path} reset --hard)` : '';
  return `${l.id}  ${l.state}  ${l.branch}${files}${l.label ? `  (${l.label})` : ''}${l.folderExists ? `\n    ${l.path}${unwritten}` : ''}`;
}

const need = (id: string | undefined, sub: string): string => {
  if (!id) throw new UsageError(`arbor worktree ${sub} needs the child's session ID (see 'arbor worktree list')`);
  return id;
};

const SUBS: Record<string, Sub> = {
  list: async (h, _id, args, io) => {
    const list = await h.worktrees.list();
    const orphans = await h.worktrees.orphans();
    if (args.options.get('json') === true) {
      io.out(JSON.stringify({ worktrees: list, orphans }));
      return 0;
    }
    if (list.length === 0) io.out('No subagent ran in its own worktree in this store.');
    for (const l of list) io.out(line(l));
    for (const o of orphans) io.out(`orphan ${o.id}  ${o.path}${o.branch ? `  ${o.branch}` : ''}\n    ${o.why}; remove it with 'arbor worktree clean ${o.id}'`);
    return 0;
  },
  diff: async (h, id, _args, io) => {
    const { files } = await h.worktrees.diff(need(id, 'diff'));
    for (const f of files) io.out(f.unified.replace(/\n$/, ''));
    if (files.length === 0) io.err('No changes against its base.');
    return 0;
  },
  apply: async (h, id, args, io) => {
    const r = await h.worktrees.apply(need(id, 'apply'), { protectedOk: args.options.has('allow-protected') });
    if (r.applied) {
      io.err(`Applied ${r.files.length} file${r.files.length === 1 ? '' : 's'} to the workspace (not committed): ${r.files.join(', ')}`);
      return 0;
    }
    io.err(`Not applied: ${r.conflicts.length} conflict${r.conflicts.length === 1 ? '' : 's'}; nothing in the workspace was changed.`);
    for (const c of r.conflicts) io.err(`  ${c.path}: ${c.message}`);
    io.err(
      `Resolve them by hand ('arbor worktree diff ${id}' shows the child's changes), or keep its branch with 'arbor worktree keep ${id}' and merge it yourself.`,
    );
    return 1;
  },
  discard: async (h, id, _args, io) => {
    await h.worktrees.discard(need(id, 'discard'));
    io.err('Discarded: its worktree and branch are removed.');
    return 0;
  },
  keep: async (h, id, _args, io) => {
    const r = await h.worktrees.keep(need(id, 'keep'));
    io.err(`Kept on branch ${r.branch} (${r.head.slice(0, 12)}); its worktree folder is removed. Merge it with: git merge ${r.branch}`);
    return 0;
  },
  clean: async (h, id, _args, io) => {
    const ids = id ? [id] : (await h.worktrees.orphans()).map((o) => o.id);
    for (const x of ids) await h.worktrees.clean(x);
    io.err(ids.length ? `Removed ${ids.length} orphaned worktree${ids.length === 1 ? '' : 's'}.` : 'No orphaned worktrees.');
    return 0;
  },
};

export function worktreeCommand(open: (args: ParsedArgs, io: Io) => Promise<Harness>): Command {
  return async (args, io) => {
    const [sub, id] = args.positionals;
    const fn = sub && Object.hasOwn(SUBS, sub) ? SUBS[sub] : undefined;
    if (!fn) throw new UsageError(`arbor worktree needs one of ${Object.keys(SUBS).join(', ')}`);
    const h = await open(args, io);
    try {
      return await fn(h, id, args, io);
    } catch (err) {
      if (err instanceof WorktreeError) {
        io.err(`arbor: ${err.code}: ${err.message}`);
        return 1;
      }
      throw err;
    } finally {
      await h.close();
    }
  };
}
