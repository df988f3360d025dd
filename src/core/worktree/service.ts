import * as fs from 'node:fs';
import * as path from 'node:path';
import { SessionWriter } from '../agent/session-writer';
import type { EventDraft, SessionEvent, WorktreeEvent, WorktreeState } from '../session/events';
import { descriptorOf, worktreeOf } from '../session/folds';
import type { Store } from '../store/store';
import { DEFAULT_BWRAP } from '../tools/sandbox/detect';
import { type RecoveredApply, recoverApplies, writeApplyIntent } from './apply-intent';
import { branchHead, commitWorktree, createWorktree, removeWorktree, type WorktreePlace } from './checkout';
import { changedPaths, diffTrees, type FileChange } from './diff';
import { filled, settled, unread } from './filling';
import { WorktreeGate } from './gate';
import { WorktreeError } from './git';
import type { ApplyOptions, ApplyResult, WorktreeListing } from './listing-types';
import { mergeIntoWorkingTree, type TreeChange } from './merge';
import { branchOf, worktreesDirOf } from './names';
import { findOrphans, type Orphan } from './orphans';
import { placedGuard } from './placed-guard';
import { RepoStateCache } from './repo-state';
import { snapshot } from './snapshot';

export interface WorktreeDeps {
  store: Store;
  storeDir: string;
  /** The deployment's folders: the repository of the first is where orphans are looked for. */
  roots: readonly string[];
  /** The resident agent of a session (its writer appends), if any. */
  resident(id: string): { append(d: EventDraft): Promise<SessionEvent>; isDisposed: boolean } | undefined;
  /** The session is running a turn now (its worktree must not be changed under it). */
  isRunning(id: string): boolean;
  /** Sessions whose turn a crash cut (recovery at open). */
  recovered(): readonly string[];
  /**
   * The workspace is trusted (read at each call; absent: trusted, as the CLI's folder is). Git run
   * on the user's repository reads its own configuration, which can name programs (`core.fsmonitor`,
   * filter drivers, textconv), so an untrusted workspace makes, reviews and applies no worktree.
   */
  trusted?: () => boolean;
  /**
   * The bubblewrap the deployment's commands run under (`commands.bwrapPath`; default `bwrap`):
   * every git here that reads a worktree's or the workspace's files runs under it (`confined.ts`).
   */
  bwrapPath?: string;
  /**
   * The worktrees' holds, shared with every agent's turn start (decision 0126, amended in s60):
   * apply, discard and keep hold the worktree they change. Absent: one of the service's own.
   */
  gate?: WorktreeGate;
}

export type { ApplyOptions, ApplyResult, WorktreeListing } from './listing-types';

/**
 * The worktree lifecycle (decision 0060), the public facade `harness.worktrees`: a child's
 * worktree is made at its start (`create`), reviewed (`diff`), applied into the parent's working
 * tree, discarded, or kept as a branch; each state change is a `worktree` event in the child's
 * log, then the folder goes. Cleanup follows the node (`forget`), and after a crash `orphans`
 * lists what nothing owns any more and `clean` removes it.
 */
export class WorktreeService {
  /** Where worktrees live: `<store's folder>/../worktrees/<child id>`. */
  readonly dir: string;
  /** The repositories' facts, kept between children (decision 0082). */
  private readonly repos = new RepoStateCache();

  /** The holds of the worktrees being changed: a turn of a session working in one waits for its change. */
  readonly gate: WorktreeGate;

  constructor(private readonly deps: WorktreeDeps) {
    this.dir = worktreesDirOf(deps.storeDir);
    this.gate = deps.gate ?? new WorktreeGate({ markOf: (id) => deps.store.summaryRef(id)?.worktree, has: (id) => deps.store.has(id) });
  }

  /**
   * A stored child's worktree made without its files (a placed child's, decision 0093) gets them
   * before Arbor's own agent works in it again; writing them runs git with the repository's
   * configuration, so not in an untrusted workspace. A worktree with its files needs nothing.
   */
  async fill(dir: string): Promise<void> {
    if (await unread(dir)) this.mustTrust("write a worktree child's files");
    await filled(dir);
  }

  /** Refuse, in an untrusted workspace, what runs git with the repository's own configuration. */
  private mustTrust(what: string): void {
    if (!this.trusted)
      throw new WorktreeError(
        'UNSUPPORTED',
        `This workspace is not trusted (Restricted Mode), and git reads its repository's configuration, which can run programs; Arbor cannot ${what} here. Trust the workspace (Workspaces: Manage Workspace Trust) to use worktrees.`,
      );
  }

  /** The workspace is trusted now (read at each use; absent: trusted). */
  private get trusted(): boolean {
    return !this.deps.trusted || this.deps.trusted();
  }

  /** The bubblewrap a workspace-reading git runs under: the deployment's commands' one. */
  private get bwrap(): string {
    return this.deps.bwrapPath ?? DEFAULT_BWRAP;
  }

  /** Never copied into a child's base or the parent's apply snapshot: Arbor's own folders. */
  private get excludes(): string[] {
    return [this.deps.storeDir, this.dir];
  }

  /** A new worktree for a child about to start, from the parent's current files (its first root's repository). */
  async create(childId: string, label: string | undefined, parentRoot: string, opts: { filesLater?: boolean } = {}): Promise<WorktreePlace> {
    this.mustTrust('give a child its own worktree');
    return createWorktree({
      ...opts,
      parentRoot,
      dir: path.join(this.dir, childId),
      branch: branchOf(childId, label),
      excludes: this.excludes,
      note: `subagent ${label ?? childId}`,
      repos: this.repos,
      bwrap: this.bwrap,
    });
  }

  /** Undo a `create` whose child was never published. */
  remove(place: WorktreePlace): Promise<void> {
    return removeWorktree(place, this.dir);
  }

  /** Every worktree child of this store (not its descendants that work in an ancestor's worktree). */
  async list(): Promise<WorktreeListing[]> {
    const out: WorktreeListing[] = [];
    for (const h of this.deps.store.list()) {
      const w = this.deps.store.summaryRef(h.id)?.worktree;
      if (!w || w.owner || w.state === 'inherited') continue;
      out.push(await this.listing(h.id));
    }
    return out;
  }

  /** One worktree child's listing. */
  async listing(id: string): Promise<WorktreeListing> {
    // Untrusted: what the log recorded, and no git run (the repository's configuration can name programs).
    if (!this.trusted) return this.listingOf(id, { e: await this.eventOf(id) }, false);
    return this.listingOf(id, await this.work(id));
  }

  /** The listing of a child whose work was just looked up (`work`): its log is not read again. */
  private async listingOf(id: string, { e, unreadAt }: { e: WorktreeEvent; unreadAt?: string }, look = true): Promise<WorktreeListing> {
    const state = e.state as WorktreeListing['state'];
    const folderExists = fs.existsSync(e.path);
    const label = this.deps.store.summaryRef(id)?.label;
    let filesChanged = e.files;
    const now = !look
      ? undefined
      : (unreadAt ?? (state === 'open' && folderExists ? (await snapshot(e.path, { bwrap: this.bwrap })).tree : state === 'kept' ? e.head : undefined));
    let changesUnread: string | undefined;
    if (now)
      try {
        filesChanged = (await changedPaths(e.repo, e.base, now)).length;
      } catch (err) {
        // Not "0 files changed": that would invite a discard of work git only failed to list.
        filesChanged = undefined;
        changesUnread = `its changes could not be listed (${(err as Error).message}); nothing was discarded: see its branch ${e.branch} with git`;
      }
    return {
      id,
      ...(label ? { label } : {}),
      path: e.path,
      branch: e.branch,
      base: e.base,
      state,
      nodeExists: true,
      folderExists,
      ...(filesChanged !== undefined ? { filesChanged } : {}),
      ...(unreadAt ? { unwritten: true as const } : {}),
      ...(changesUnread ? { changesUnread } : {}),
    };
  }

  /** Per file: base content, the child's content, a unified diff (open: the folder now; kept: its branch). */
  async diff(id: string): Promise<{ listing: WorktreeListing; files: FileChange[] }> {
    this.mustTrust("review a worktree child's changes");
    const w = await this.work(id);
    const to = w.unreadAt ?? (await this.currentTree(w.e));
    return { listing: await this.listingOf(id, w), files: await diffTrees(w.e.repo, w.e.base, to) };
  }

  /**
   * Merge the child's changes into the parent's working tree (a 3-way merge base → child against
   * the files now). A conflict changes nothing and is returned. Applied: the worktree and its
   * branch are removed, and the child's log says so.
   */
  async apply(id: string, opts: ApplyOptions = {}): Promise<ApplyResult> {
    this.mustTrust("apply a worktree child's changes");
    // Held from before its check to the folder's removal: no turn of a session working there starts in between.
    return this.gate.change(id, () => this.applyHeld(id, opts));
  }

  private async applyHeld(id: string, opts: ApplyOptions): Promise<ApplyResult> {
    const { e, unreadAt } = await this.changeableWork(id, ['open', 'kept']);
    const guard = opts.protectedOk || !(await this.placed(id)) ? undefined : placedGuard;
    const head = unreadAt ?? (fs.existsSync(e.path) ? await commitWorktree(e, `arbor: work of ${id}`, this.bwrap) : await branchHead(e.repo, e.branch));
    if (!head) throw new WorktreeError('NOT_OPEN', `The branch ${e.branch} of ${this.name(id)} is gone; there is nothing to apply.`);
    // The intent is durable before the first file is written, and goes once the log says applied (a crash between: `recoverApplies`).
    let done: (() => Promise<void>) | undefined;
    const intent = async (top: string, changes: readonly TreeChange[]) => {
      done = await writeApplyIntent(this.deps.storeDir, { childId: id, head, top, changes: [...changes] });
    };
    let r: Awaited<ReturnType<typeof mergeIntoWorkingTree>>;
    try {
      r = await mergeIntoWorkingTree(e.repo, e.base, head, this.excludes, this.bwrap, intent, guard);
    } catch (err) {
      await done?.(); // a failure in process is said (PARTIAL names what was written): nothing to finish at the next open
      throw err;
    }
    if (!r.ok) return { applied: false, conflicts: r.conflicts };
    await this.record(id, e, 'applied', { head, files: r.files.length });
    await done?.();
    await removeWorktree(e, this.dir);
    return { applied: true, files: r.files };
  }

  /**
   * Applies a crash cut between their first file and their record (decision 0060, amended in
   * s49): finished and recorded at this open, or — a file changed since — left open and said.
   * Git runs on the user's repository, so not while the workspace is untrusted (they wait).
   */
  async recoverApplies(): Promise<RecoveredApply[]> {
    if (!this.trusted) return [];
    return recoverApplies(this.deps.storeDir, {
      pending: async (id) => {
        const e = await this.eventOf(id).catch(() => undefined);
        return e && (e.state === 'open' || e.state === 'kept') ? e.repo : undefined;
      },
      finish: async (id, head, files) => {
        const e = await this.eventOf(id);
        await this.record(id, e, 'applied', { head, files });
        await removeWorktree(e, this.dir);
      },
    });
  }

  /** Remove the worktree and its branch; the child's work is gone. */
  async discard(id: string): Promise<void> {
    // (Removing needs no files: a worktree whose files could not be written goes all the same.)
    return this.gate.change(id, async () => {
      const e = await this.changeable(id, ['open', 'kept']);
      await this.record(id, e, 'discarded', {});
      await removeWorktree(e, this.dir);
    });
  }

  /** Commit the child's files onto its branch, remove the folder, keep the branch; returns the branch. */
  async keep(id: string): Promise<{ branch: string; head: string }> {
    this.mustTrust("keep a worktree child's branch");
    return this.gate.change(id, async () => {
      const { e, unreadAt } = await this.changeableWork(id, ['open']);
      const head = unreadAt ?? (await commitWorktree(e, `arbor: work of ${id}`, this.bwrap));
      await this.record(id, e, 'kept', { head });
      await removeWorktree(e, this.dir, { keepBranch: true });
      return { branch: e.branch, head };
    });
  }

  /**
   * The places of `ids` (a subtree about to be deleted) with their state: read before the
   * sessions go, handed to `forget` after. Inherited ones are their owner's.
   */
  async placesOf(ids: readonly string[]): Promise<(WorktreeEvent & { id: string })[]> {
    const out: (WorktreeEvent & { id: string })[] = [];
    for (const id of ids) {
      const w = this.deps.store.summaryRef(id)?.worktree;
      if (!w || w.owner || w.state === 'inherited') continue;
      const e = await this.eventOf(id).catch(() => undefined);
      if (e) out.push({ ...e, id });
    }
    return out;
  }

  /** The nodes were deleted: their worktrees go; a kept branch stays (the user chose to keep it). */
  async forget(places: readonly WorktreeEvent[]): Promise<void> {
    for (const p of places) await removeWorktree(p, this.dir, { keepBranch: p.state === 'kept' }).catch(() => undefined);
  }

  /** Worktree folders and `git worktree` entries of ours that nothing live owns (after a crash, a deletion cut short). */
  orphans(): Promise<Orphan[]> {
    return findOrphans({
      dir: this.dir,
      repoRoot: this.deps.roots[0],
      state: (id) => {
        const w = this.deps.store.summaryRef(id)?.worktree;
        return this.deps.store.has(id) ? (w && !w.owner ? w.state : 'none') : undefined;
      },
      interrupted: new Set(this.deps.recovered()),
    });
  }

  /** Clean one orphan (by its id = folder name): an open child's worktree is discarded (durably); the rest removed. */
  async clean(id: string): Promise<void> {
    const o = (await this.orphans()).find((x) => x.id === id);
    if (!o) throw new WorktreeError('UNKNOWN_WORKTREE', `No orphaned worktree ${id}; \`arbor worktree list\` shows the orphans.`);
    if (o.state === 'open') return this.discard(id);
    await removeWorktree({ repo: o.repo ?? this.deps.roots[0], path: o.path, branch: o.branch ?? '' }, this.dir, {
      keepBranch: o.state === 'kept' || !o.branch,
    });
  }

  /** The child ran on another machine (a placement, decision 0074): no one here approved what it wrote there. */
  private async placed(id: string): Promise<boolean> {
    const s = await this.deps.store.inspect(id);
    return descriptorOf(s.header, s.events)?.placement !== undefined;
  }

  private name(id: string): string {
    return this.deps.store.summaryRef(id)?.label ?? 'this subagent';
  }

  /** The tree of the child's work now: its folder's files, else its branch. */
  private async currentTree(e: WorktreeEvent): Promise<string> {
    if (fs.existsSync(e.path)) return (await snapshot(e.path, { bwrap: this.bwrap })).tree;
    const head = e.state === 'kept' ? (e.head ?? (await branchHead(e.repo, e.branch))) : undefined;
    if (!head) throw new WorktreeError('NOT_OPEN', `The worktree of this subagent was ${e.state}; there is nothing left to show.`);
    return head;
  }

  /**
   * The child's own worktree event, or UNKNOWN_WORKTREE, once a fill or move of its folder under
   * way has ended. Whoever reads its work takes `work` (the branch of an unread one, else the
   * files made whole: decisions 0089, 0093); removing it needs neither.
   */
  private async eventOf(id: string): Promise<WorktreeEvent> {
    if (!this.deps.store.has(id)) throw new WorktreeError('UNKNOWN_WORKTREE', `No session ${id}; \`arbor worktree list\` shows the worktree children.`);
    const s = await this.deps.store.inspect(id);
    const e = worktreeOf(s.header, s.events);
    if (!e || e.owner || e.state === 'inherited')
      throw new WorktreeError('UNKNOWN_WORKTREE', `${id} did not run in its own worktree; \`arbor worktree list\` shows the ones that did.`);
    await settled(e.path);
    return e;
  }

  /**
   * The child's worktree event and, when its folder was never read (decision 0093: nothing
   * written there, its work is its branch), the commit it holds — else its files are made whole
   * (a fill under way, or one cut short) and the caller reads them.
   */
  private async work(id: string): Promise<{ e: WorktreeEvent; unreadAt?: string }> {
    const e = await this.eventOf(id);
    if (e.state === 'open' && (await unread(e.path))) {
      const at = await branchHead(e.repo, e.branch);
      if (at) return { e, unreadAt: at };
    }
    await filled(e.path);
    return { e };
  }

  /** `work` of a child whose worktree may change now: in one of `states`, and not running. */
  private async changeableWork(id: string, states: readonly WorktreeState[]): Promise<{ e: WorktreeEvent; unreadAt?: string }> {
    const w = await this.work(id);
    this.mayChange(id, w.e, states);
    return w;
  }

  /** The event of a child whose worktree may change now: in one of `states`, and not running. */
  private async changeable(id: string, states: readonly WorktreeState[]): Promise<WorktreeEvent> {
    const e = await this.eventOf(id);
    this.mayChange(id, e, states);
    return e;
  }

  /** Throws NOT_OPEN unless the worktree is in one of `states` and its child is not running. */
  private mayChange(id: string, e: WorktreeEvent, states: readonly WorktreeState[]): void {
    if (!states.includes(e.state))
      throw new WorktreeError('NOT_OPEN', `The worktree of ${this.name(id)} was already ${e.state}; there is nothing more to do with it.`);
    if (this.deps.isRunning(id))
      throw new WorktreeError('NOT_OPEN', `${this.name(id)} is still working in its worktree; wait until it settles, or stop it first.`);
    // A session working in it too (a fork of the child, or a child of it: decision 0126) would lose what it writes meanwhile.
    const other = this.deps.store.listRefs().find((h) => this.deps.store.summaryRef(h.id)?.worktree?.owner === id && this.deps.isRunning(h.id));
    if (other) throw new WorktreeError('NOT_OPEN', `${other.title ?? other.id} is still working in this worktree; wait until it settles, or stop it first.`);
  }

  /** A state change, durable in the child's log before the folder changes (a crash in between leaves an orphan `orphans` lists). */
  private async record(id: string, e: WorktreeEvent, state: WorktreeState, extra: { head?: string; files?: number }): Promise<void> {
    const draft: EventDraft = { type: 'worktree', state, repo: e.repo, path: e.path, root: e.root, branch: e.branch, base: e.base, ...extra };
    // Not resident: in its log's turn at the store's gate, as every writer of a log no agent holds (decision 0129).
    const { store } = this.deps;
    await store.logGate.run(id, async () => {
      const agent = this.deps.resident(id);
      if (agent && !agent.isDisposed) await agent.append(draft);
      else await new SessionWriter(await store.inspect(id), store).append(draft);
    });
  }
}
