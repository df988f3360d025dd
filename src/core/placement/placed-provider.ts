import * as fs from 'node:fs';
import * as path from 'node:path';
import { describeError } from '../errors';
import { acpDriver, type LinkCall } from '../remote/acp';
import type { AcpChildrenFactory } from '../remote/acp-children';
import type { AcpPhase, AcpProcessSource } from '../remote/acp-source';
import { remoteProvider } from '../remote/wire';
import type { SandboxMode } from '../session/events';
import type { RemoteDriver, RemoteOutcome, RemoteTurnContext } from '../subagent/remote-driver';
import type { SubagentProvider } from '../subagent/types';
import { filled, moveUnfilled } from '../worktree/filling';
import { git } from '../worktree/git';
import { linkedWorktreeAt } from '../worktree/repo-state';
import { boundChanges, type ChangeBounds } from './change-bounds';
import { placedRef } from './layout';
import { collectOverLink, FarCommits, prepareOverLink, releaseOverLink, UseGitInstead } from './link-sync';
import { type PlacedWorkspace, PlacementError, type PlacementInfo, type PlacementTransport } from './types';

// A placed node (issue 26, decision 0074): a child of the tree whose turns run in `arbor acp` on
// another host or in a container, through the ACP driver with the transport's process in place
// of a configured command. The log stays at home (every update is mirrored as it arrives); the
// workspace travels as git: the child's local worktree's commit goes there (`prepare`), and
// after each turn its changes come back (`collect`) and the local worktree is moved to them, so
// the worktree review, apply, discard and keep work unchanged.

/** `arbor acp` offers Arbor's sandboxes as its session modes, by the same names: a child never runs wider there. */
const MODES: Record<SandboxMode, string> = { 'read-only': 'read-only', 'workspace-write': 'workspace-write', 'full-access': 'full-access' };

/** The child's local worktree: the repository, its folder, the root the child works in, its head. */
interface LocalWorktree {
  repo: string;
  path: string;
  root: string;
  head: string;
}

export interface PlacedProvider extends SubagentProvider {
  placement: NonNullable<SubagentProvider['placement']>;
  /** Remove every node's copy on the other side (the harness closes). */
  cleanup(): Promise<void>;
  /** The last check's answer (where, round trip), for the views; undefined before one. */
  readonly info: PlacementInfo | undefined;
}

/**
 * How long a placement's answered check is taken as still true for the next child's start (ms).
 * Within it a host that went away is met by the child's first sync instead (UNREACHABLE as a turn error).
 */
export const CHECK_REUSE_MS = 60_000;

/** A placed turn's phases (decision 0077): the bench's breakdown of where a child's time goes. */
export type PlacedPhase = 'worktree' | 'prepare' | AcpPhase | 'collect' | 'reset' | 'release';
/** Told when a phase of a placed child's turn is over (`performance.now()` times); must not throw. */
export type PlacedTrace = (e: { node: string; phase: PlacedPhase; start: number; end: number }) => void;

export function placedProvider(
  transport: PlacementTransport,
  secrets: () => readonly string[],
  children?: AcpChildrenFactory,
  trace?: PlacedTrace,
): PlacedProvider {
  const s = transport.settings;
  const program = `placed:${s.name}`;
  /** Each node's copy on the other side, made at its first turn and kept for its follow-ups. */
  const copies = new Map<string, Promise<PlacedWorkspace>>();
  let info: PlacementInfo | undefined;
  /** When the last check (`shared`, or the one under way) answered: reused for CHECK_REUSE_MS. */
  let checkedAt = 0;
  /** The last check or the one under way: how many children wait on it, and what stops it (its own abort). */
  let shared: { answer: Promise<PlacementInfo>; waiters: number; stop: () => void } | undefined;
  /** The shared check's answer for one child: its own abort ends its wait, and the check's once the last waiting child has gone. */
  const waitFor = async (check: NonNullable<typeof shared>, signal?: AbortSignal): Promise<PlacementInfo> => {
    signal?.throwIfAborted();
    check.waiters++;
    let onAbort: () => void = () => undefined;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => reject(signal?.reason ?? new Error('aborted'));
      signal?.addEventListener('abort', onAbort, { once: true });
    });
    try {
      return await Promise.race([check.answer, aborted]);
    } finally {
      signal?.removeEventListener('abort', onAbort);
      aborted.catch(() => undefined);
      if (--check.waiters === 0 && signal?.aborted) check.stop(); // (a check already answered ignores it)
    }
  };
  const where = () => info?.where ?? s.host ?? s.image ?? s.name;

  /** The kept connection, when its arbor carries the workspace too (decision 0081). */
  const viaLink = transport.syncOverLink && transport.connection ? () => ({ ...transport.connection!(), keep: true }) : undefined;
  /** Over the kept link where the transport offers it; push/fetch where it cannot (an older arbor there, a bundle too big). */
  const overLink = async <T>(what: string, sync: (call: LinkCall) => Promise<T>, git: () => Promise<T>, signal?: AbortSignal): Promise<T> => {
    if (viaLink) {
      try {
        return await inner.withLink(viaLink(), sync);
      } catch (err) {
        if (!(err instanceof UseGitInstead)) {
          if (err instanceof PlacementError || signal?.aborted) throw err; // (a stopped child is interrupted, not a sync failure)
          throw new PlacementError('SYNC_FAILED', `could not ${what} ${where()} over the placement's connection: ${describeError(err)}`);
        }
      }
    }
    return git();
  };
  /** Commits the far side was seen to hold or is being sent: a child of the same parent state is prepared without asking (decision 0081). */
  const held = new FarCommits();
  const prepare = (childId: string, local: LocalWorktree, signal: AbortSignal): Promise<PlacedWorkspace> => {
    const node = { nodeId: childId, repo: local.repo, commit: local.head };
    return overLink(
      'copy the workspace to',
      (call) => prepareOverLink(call, { ...node, worktree: local.path }, signal, held),
      () => transport.prepare(node, signal),
      signal,
    );
  };
  /** The changes as a commit here; over the link the local worktree is moved to it too (`moved`). */
  const collect = (ws: PlacedWorkspace, local: LocalWorktree): Promise<{ commit: string; moved?: boolean }> =>
    overLink(
      'bring the changes back from',
      (call) =>
        collectOverLink(call, ws, local.repo, `arbor: changes of ${ws.nodeId} on ${s.name}`, undefined, {
          ...local,
          moveTo: (commit, also) => moveLocal(local, commit, also),
        }),
      () => collectOverGit(transport, ws, local.repo),
    );

  /**
   * A finished node's copy let go of over the link (kept there for the next node, decision 0114); where that
   * side cannot (no link sync, an older arbor) or the release fails, it stays in `copies` for the placement's cleanup.
   */
  const release = async (childId: string, repo: string): Promise<void> => {
    const ws = copies.get(childId);
    if (!viaLink || !ws) return;
    const gone = await inner.withLink(viaLink(), async (call) => releaseOverLink(call, await ws, repo)).catch(() => false);
    if (gone && copies.get(childId) === ws) copies.delete(childId);
  };

  const copyOf = (childId: string, local: LocalWorktree, signal: AbortSignal): Promise<PlacedWorkspace> => {
    let ws = copies.get(childId);
    if (!ws) {
      ws = prepare(childId, local, signal);
      copies.set(childId, ws);
      ws.catch(() => copies.delete(childId));
    }
    return ws;
  };

  /** Runs `fn` as a phase of the node's turn (timed only when traced). */
  const timed = async <T>(node: string, phase: PlacedPhase, fn: () => Promise<T>): Promise<T> => {
    if (!trace) return fn();
    const start = performance.now();
    try {
      return await fn();
    } finally {
      trace({ node, phase, start, end: performance.now() });
    }
  };

  /** Each running turn's local worktree as its open saw it (only Arbor moves it, after the turn): bringBack needs no second look. */
  const locals = new Map<string, LocalWorktree>();

  const source: AcpProcessSource = {
    async open(ctx) {
      const local = await timed(ctx.childId, 'worktree', () => localWorktree(ctx));
      locals.set(ctx.childId, local);
      const ws = await timed(ctx.childId, 'prepare', () => copyOf(ctx.childId, local, ctx.signal));
      // One kept connection for the placement's children where the transport offers one (decision 0077).
      const p = transport.connection ? transport.connection() : transport.process(ws);
      const rel = path.relative(local.path, local.root);
      return {
        command: p.command,
        args: p.args,
        env: p.env,
        ...(p.preamble ? { preamble: p.preamble } : {}),
        sessionCwd: rel ? path.posix.join(ws.cwd, rel.split(path.sep).join('/')) : ws.cwd,
        ...(transport.connection ? { keep: true } : {}),
      };
    },
    dropped: (what) => ({
      stopReason: 'interrupted',
      error: `LINK_DROPPED: the link to ${where()} dropped: ${what}; send it a message or resume to reconnect.`,
    }),
    ...(trace ? { phase: (node, phase, start, end) => trace({ node, phase, start, end }) } : {}),
  };
  const inner = acpDriver({ name: s.name, command: s.arbor ?? 'arbor', modes: MODES }, secrets, children, source, program);

  /** After a turn: the other side's changes as a commit here, and the local worktree moved to it. */
  const bringBack = async (ctx: RemoteTurnContext, out: RemoteOutcome): Promise<RemoteOutcome> => {
    const ws = copies.get(ctx.childId);
    if (!ws) return out;
    try {
      const local = locals.get(ctx.childId) ?? (await timed(ctx.childId, 'worktree', () => localWorktree(ctx)));
      const { commit, moved } = await timed(ctx.childId, 'collect', async () => collect(await ws, local));
      if (!moved && commit !== local.head) await timed(ctx.childId, 'reset', () => moveLocal(local, commit));
      // A one-shot child takes no other turn: with its changes here, the far side keeps its worktree for the next child (decision 0114).
      if (ctx.oneShot && out.stopReason === 'completed') await timed(ctx.childId, 'release', () => release(ctx.childId, local.repo));
      return out;
    } catch (err) {
      // A dropped link may take the way back with it: the turn says what it already said.
      if (out.stopReason !== 'completed') return out;
      const why = err instanceof PlacementError ? err.message : `SYNC_FAILED: ${describeError(err)}`;
      return { stopReason: 'error', error: `${why} (the child's changes on ${where()} did not come back; send it a message to try again).` };
    }
  };

  /**
   * End what the transport still runs of a node's turns (a container whose process ignored the stop): its error
   * in words (something may still run: CONTAINER_LEFT), or undefined when nothing is left.
   */
  const endLeftovers = async (childId: string): Promise<string | undefined> => {
    if (transport.connection || !transport.turnOver) return undefined;
    const ws = await copies.get(childId)?.catch(() => undefined);
    return ws ? transport.turnOver(ws).then(() => undefined, describeError) : undefined;
  };

  const driver: RemoteDriver = {
    ...inner,
    ...(s.model ? { model: () => s.model } : {}),
    // The first turn tells the other side who it is (persona, delegation notice); a follow-up is the message alone.
    runTurn: async (ctx, sink) => {
      const prompt = ctx.resume ? (ctx.task ?? ctx.prompt) : [ctx.persona, ctx.prompt].filter(Boolean).join('\n\n');
      // What an earlier turn of this node left running (its removal failed then) goes before another starts beside it.
      const before = await endLeftovers(ctx.childId);
      if (before) return { stopReason: 'error', error: before, left: before };
      try {
        let out: RemoteOutcome;
        try {
          out = await inner.runTurn({ ...ctx, prompt }, sink);
        } catch (err) {
          // The turn's own process is gone either way; what the transport still runs of it goes too.
          const left = await endLeftovers(ctx.childId);
          if (left) return { stopReason: 'error', error: `${describeError(err)} ${left}`, left };
          throw err;
        }
        // Nothing is collected from a folder something may still write; the turn says what is left and how to end it.
        const left = await endLeftovers(ctx.childId);
        if (left) return { stopReason: out.stopReason === 'interrupted' ? 'interrupted' : 'error', error: left, left };
        return await bringBack(ctx, out);
      } finally {
        locals.delete(ctx.childId);
      }
    },
  };

  const base = remoteProvider(program, driver);
  return {
    ...base,
    // Arbor on the other side: a follow-up reaches it (session/load), and an agent file's persona travels as words.
    capabilities: { ...base.capabilities, persona: true },
    modes: ['one-shot', 'continuable'],
    placement: {
      name: s.name,
      async check(signal) {
        // A check is a connection of its own (an ssh login): the children started within a short while share one (decision 0077).
        signal?.throwIfAborted(); // a child already stopped starts no check nobody would wait on
        if (!shared || performance.now() - checkedAt > CHECK_REUSE_MS) {
          checkedAt = performance.now(); // the children of this moment wait for this one
          // Its own abort: one child stopped must not fail the check its siblings wait on; it stops when every waiter has gone.
          const own = new AbortController();
          const mine = transport.check(own.signal).then((i) => {
            info = i;
            checkedAt = performance.now();
            return i;
          });
          const check = {
            answer: mine,
            waiters: 0,
            stop: () => {
              // A child arriving while the stopped check winds down starts a new one instead of joining it.
              if (shared === check) shared = undefined;
              own.abort();
            },
          };
          shared = check;
          mine.catch(() => {
            if (shared === check) shared = undefined;
          });
        }
        return { ...(await waitFor(shared, signal)) };
      },
    },
    get info() {
      return info;
    },
    async cleanup() {
      await inner.close();
      const all = [...copies.values()];
      copies.clear();
      await Promise.all(all.map((ws) => ws.then((w) => transport.cleanup(w)).catch(() => undefined)));
    },
  };
}

/**
 * The local worktree moved to the child's collected commit. One nobody has read yet (decision
 * 0093) moves by its branch alone, no file written — once every object of the commit is known
 * to be here (what `reset --hard` would have found missing; `checked`: the caller saw them all);
 * review and apply read that branch (decision 0093). One with files is made whole first (a fill
 * under way), then reset as any worktree. `ref` (the node's ref) is named too, in the same git
 * transaction as the branch where the branch alone moves; resolves true when it was named.
 */
export async function moveLocal(local: Pick<LocalWorktree, 'path' | 'head'>, commit: string, also?: { ref?: string; checked?: boolean }): Promise<boolean> {
  const reason = "arbor: the placed child's changes";
  const byBranch = moveUnfilled(local.path, async () => {
    if (!also?.checked) await git(['rev-list', '--quiet', '--objects', '--missing=error', commit, '--not', local.head], { cwd: local.path });
    if (!also?.ref) await git(['update-ref', '-m', reason, 'HEAD', commit, local.head], { cwd: local.path });
    else await git(['update-ref', '-m', reason, '--stdin'], { cwd: local.path, input: `update HEAD ${commit} ${local.head}\nupdate ${also.ref} ${commit}\n` });
  });
  if (byBranch) return byBranch.then(() => !!also?.ref);
  await filled(local.path);
  await git(['reset', '--quiet', '--hard', commit], { cwd: local.path });
  return false;
}

/** The child's local worktree as git sees it now: read from its files, else one git for its folder, its repository and its head. */
async function localWorktree(ctx: RemoteTurnContext): Promise<LocalWorktree> {
  const root = ctx.roots?.[0] ?? ctx.cwd;
  const known = linkedWorktreeAt(root);
  if (known) return { repo: path.dirname(known.commonDir), path: known.top, root, head: known.head };
  // (A root below the worktree's top appears with its files, which may still be on their way: decision 0089.)
  let at = root;
  while (!fs.existsSync(at) && path.dirname(at) !== at) at = path.dirname(at);
  const out = (await git(['rev-parse', '--show-toplevel', '--path-format=absolute', '--git-common-dir', 'HEAD'], { cwd: at })).stdout.trim().split('\n');
  const [top, common, head] = out.map((l) => l.trim());
  if (!top || !common || !head)
    throw new PlacementError('SYNC_FAILED', `git could not say which worktree ${root} is (${out.join(' ')}); is it still a git worktree?`);
  return { repo: path.dirname(common), path: top, root, head };
}

/**
 * The transport's own collect (a fetch over ssh, a container's git): it names the commit under
 * the node's ref, so changes past their bounds put the ref back where it was (decision 0081).
 */
export async function collectOverGit(transport: PlacementTransport, ws: PlacedWorkspace, repo: string, bounds?: ChangeBounds): Promise<{ commit: string }> {
  const ref = placedRef(ws.nodeId);
  const before = (await git(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`], { cwd: repo, okCodes: [1] })).stdout.trim();
  const r = await transport.collect(ws, repo);
  try {
    await boundChanges(repo, ws.base, r.commit, ws.nodeId, bounds);
  } catch (err) {
    await git(before ? ['update-ref', ref, before] : ['update-ref', '-d', ref], { cwd: repo }).catch(() => undefined);
    throw err;
  }
  return r;
}
