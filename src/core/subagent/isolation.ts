import type { EventDraft, SandboxMode, SessionEvent, SessionHeader, WorktreeEvent, WorktreeState } from '../session/events';
import { worktreeOf } from '../session/folds';
import type { Session } from '../session/session';
import type { Store } from '../store/store';
import { filled } from '../worktree/filling';
import { ownerOf, type WorktreeGate, type WorktreeMark } from '../worktree/gate';
import { SubagentError, type SubagentProvider, type WorktreePort } from './types';

// A child's roots (decision 0060): its own worktree when it asked for isolation, else its
// caller's worktree when the caller works in one (inherited: never wider), else the
// deployment's. Both cases are a `worktree` event in the child's own log, so a cold resume
// roots it again from that log alone.

/**
 * The checks of a start asking for isolation, before anything is created; returns the child's
 * sandbox override: a worktree child never runs unconfined (full-access could write the parent's
 * checkout), so full-access becomes workspace-write.
 */
export function checkIsolation(
  isolation: unknown,
  provider: Pick<SubagentProvider, 'name' | 'remote' | 'placement'>,
  canMake: boolean,
  pinned: SandboxMode | undefined,
  callerSandbox: SandboxMode,
): SandboxMode | undefined {
  if (isolation === undefined) return pinned;
  if (isolation !== 'worktree') throw new SubagentError('BAD_REQUEST', `isolation must be "worktree" (or left out), got ${JSON.stringify(isolation)}.`);
  // A placed child's program writes only the other side's copy; its changes come back into this worktree (decision 0074).
  if (provider.remote && !provider.placement)
    throw new SubagentError(
      'UNSUPPORTED_CAPABILITY',
      `Provider "${provider.name}" runs its child in another program, whose writes Arbor's sandbox does not confine: it cannot be isolated in a worktree. Leave isolation out, or use subagent.`,
    );
  if (!canMake) throw new SubagentError('UNSUPPORTED_CAPABILITY', 'This deployment cannot make worktrees; leave isolation out.');
  return (pinned ?? callerSandbox) === 'full-access' ? 'workspace-write' : pinned;
}

export interface Isolation {
  /** The event for the child's unpublished setup (absent: deployment roots). */
  event?: EventDraft;
  /** The child's roots (absent: the deployment's). */
  roots?: readonly string[];
  /** Remove a worktree made for a child that was never published (a no-op otherwise). */
  undo(): Promise<void>;
}

export async function isolationOf(o: {
  /** The caller, when it works in a worktree (absent: it does not; nothing to inherit). */
  caller: Session | undefined;
  callerRoots: readonly string[];
  childId: string;
  label?: string;
  isolated: boolean;
  /** Its files may be written after the start (a placed child: its turn runs elsewhere; decision 0089). */
  filesLater?: boolean;
  worktrees?: WorktreePort;
}): Promise<Isolation> {
  if (o.isolated && o.worktrees) {
    const place = await o.worktrees.create(o.childId, o.label, o.callerRoots[0] ?? '.', o.filesLater ? { filesLater: true } : {});
    const wt = o.worktrees;
    return {
      event: { type: 'worktree', state: 'open', ...place },
      roots: [place.root],
      undo: () => wt.remove(place).catch(() => undefined),
    };
  }
  const own = o.caller && worktreeOf(o.caller.header, o.caller.events);
  if (!o.caller || !own) return { undo: async () => undefined };
  const { repo, path, root, branch, base } = own;
  return {
    event: { type: 'worktree', state: 'inherited', repo, path, root, branch, base, owner: own.owner ?? o.caller.header.id },
    roots: [root],
    undo: async () => undefined,
  };
}

/** A session's worktree as its last `worktree` event (after its seed) or its summary names it. */
export type { WorktreeMark };

/**
 * How the worktree a session works in stands now (decision 0126): its own as its event says,
 * else its owner's own, read through `ownerState` (undefined: the owner was deleted, and its
 * worktree with it).
 */
export async function worktreeStateNow(w: WorktreeMark, ownerState: (owner: string) => Promise<WorktreeState | undefined>): Promise<WorktreeState | 'deleted'> {
  if (!w.owner && w.state !== 'inherited') return w.state;
  return (w.owner && (await ownerState(w.owner))) || 'deleted';
}

/**
 * Why a session can no longer work in its worktree, and what to do (undefined: it can). Its
 * roots stay the closed worktree's (never wider, decision 0060); this says so before a turn
 * would meet a missing folder.
 */
export function closedWorktreeAdvice(w: WorktreeMark, state: WorktreeState | 'deleted', to: 'user' | 'parent' = 'user'): string | undefined {
  const checkout = to === 'user' ? 'your checkout' : "the parent's checkout";
  const what: Record<Exclude<WorktreeState | 'deleted', 'open' | 'inherited'>, string> = {
    applied: `was applied: its changes are in ${checkout} now`,
    discarded: 'was discarded: its changes are gone',
    kept: `was kept as branch ${w.branch} (its folder removed): check out that branch to see its work`,
    deleted: 'was removed with the session that owned it',
  };
  if (state === 'open' || state === 'inherited') return undefined;
  if (to === 'parent')
    return `The worktree this subagent works in (${w.branch}) ${what[state]}. It has no folder to work in any more, so nothing was sent to it; its history is kept. Start a new subagent for more work.`;
  return `The worktree this conversation works in (${w.branch}) ${what[state]}. Its history is kept; to go on with the work, start a new conversation in your checkout.`;
}

/**
 * The event a user's fork of a session working in a worktree gets after its seed (decision 0126):
 * the same worktree, `inherited` with its owner named (the owner's lifecycle keeps it), so
 * `rootsOf` roots the fork there now and at every cold resume.
 */
export function forkWorktreeEvent(id: string, place: WorktreeEvent): EventDraft {
  const { repo, path, root, branch, base } = place;
  return { type: 'worktree', state: 'inherited', repo, path, root, branch, base, owner: place.owner ?? id };
}

/** The roots a stored child is rebuilt with: its worktree's, whatever state it is in (never wider), else none (the deployment's). */
export function rootsOf(header: SessionHeader, events: readonly SessionEvent[]): readonly string[] | undefined {
  const w = worktreeOf(header, events);
  return w ? [w.root] : undefined;
}

/**
 * Before Arbor's own agent works in a stored child's worktree again (a cold resume), its files
 * are whole: a worktree nobody has read yet (a placed child's, decision 0093: its branch moved,
 * no file written) is written first, else the agent would find it empty and its first reader's
 * `read-tree --reset` would write HEAD's files over what the agent wrote meanwhile.
 */
export async function filesOfWorktree(w: WorktreeEvent | undefined, fill: (dir: string) => Promise<void> = filled): Promise<void> {
  if (w) await fill(w.path);
}

/**
 * Why subagent `id` can no longer work in its worktree, told to whoever messages it (undefined:
 * it can, or it has none). A change of that worktree under way (an apply) is waited for first
 * (bounded; `stopped` ends the wait): what the message would write is then never lost with the
 * folder (decision 0126, amended in s60). Never rejects.
 */
export async function closedWorktreeOf(
  store: Pick<Store, 'summary' | 'has'>,
  gate: Pick<WorktreeGate, 'waitFor'> | undefined,
  id: string,
  stopped?: AbortSignal,
): Promise<string | undefined> {
  const mark = (await store.summary(id).catch(() => undefined))?.worktree;
  if (!mark) return undefined;
  await gate?.waitFor(ownerOf(id, mark), stopped);
  const now = (await store.summary(id).catch(() => undefined))?.worktree ?? mark;
  const ownerState = async (owner: string) => (store.has(owner) ? (await store.summary(owner).catch(() => undefined))?.worktree?.state : undefined);
  return closedWorktreeAdvice(now, await worktreeStateNow(now, ownerState), 'parent');
}
