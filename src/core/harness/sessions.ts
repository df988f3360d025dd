import { randomUUID } from 'node:crypto';
import type { Agent } from '../agent/agent';
import { type SessionLog, SessionWriter, withStoredLog } from '../agent/session-writer';
import { withdrawQueued } from '../agent/withdraw';
import { type ApprovalGrant, activeGrants } from '../policy/grants';
import { type Budget, checkBudget } from '../session/budget';
import type { ApprovalPolicy, SandboxMode, WorktreeState } from '../session/events';
import { descriptorOf, policyOverrides, worktreeOf } from '../session/folds';
import { agentOfSubagent, forkPoint, headerFrom } from '../session/fork';
import { distinctName, forkName, nameFromLog } from '../session/names';
import { Session } from '../session/session';
import type { Store } from '../store/store';
import { closedWorktreeAdvice, forkWorktreeEvent, type WorktreeMark, worktreeStateNow } from '../subagent/isolation';
import { mirrorRefusal } from '../subagent/mirrors';
import type { SubagentRuntime } from '../subagent/runtime';
import { acceptUnder } from '../subagent/underway';
import { ownerOf, type WorktreeGate } from '../worktree/gate';
import { HarnessError } from './errors';

/** What the sessions service needs of the harness (its resident agents, how it makes one resident). */
export interface SessionsHost {
  readonly store: Store;
  readonly subagents: SubagentRuntime;
  resident(id: string): Agent | undefined;
  makeResident(writer: SessionWriter): Agent;
  openSession(id: string): Promise<Agent>;
  /** The worktrees' holds: a message to a session working in one being changed waits for the change (decision 0126, amended in s60). */
  readonly gate: Pick<WorktreeGate, 'waitFor'>;
  /** Dispose a resident root agent and forget it (its session is being deleted). */
  drop(id: string): Promise<void>;
  /** A Stop reached these sessions: the rows are told in its tick (`FeatureHooks.stopped`). */
  stopped(ids: readonly string[]): Promise<void>;
  /** The deployment's sandbox (a fork with no override of its own runs under it). */
  deploymentSandbox(): SandboxMode;
}

/**
 * The operations on sessions the human asks for (fork, delete, send, set policy, withdraw,
 * send now, grants, stop a subtree), over resident agents or the stored logs. The harness
 * façade delegates here; errors are `HarnessError`s with a code.
 */
export class SessionsService {
  /** Whether a session with origin `fork` is a subagent (its log holds a descriptor); never changes. */
  private readonly forkKinds = new Map<string, boolean>();

  constructor(private readonly h: SessionsHost) {}

  /** Why a session can no longer work in its worktree `w` (decision 0126), else undefined. */
  private async closedWorktree(w: WorktreeMark | undefined): Promise<string | undefined> {
    if (!w) return undefined;
    const { store } = this.h;
    const ownerState = async (owner: string): Promise<WorktreeState | undefined> =>
      store.has(owner) ? (await store.summary(owner).catch(() => undefined))?.worktree?.state : undefined;
    return closedWorktreeAdvice(w, await worktreeStateNow(w, ownerState));
  }

  /** Once no change of the worktree `id` works in is under way (bounded; `stopped` ends the wait). */
  private async settledWorktree(id: string, stopped?: AbortSignal): Promise<void> {
    const mark = (await this.h.store.summary(id).catch(() => undefined))?.worktree;
    await this.h.gate.waitFor(ownerOf(id, mark), stopped);
  }

  /** The resident agent's session (its log as it is now), else the stored one read from the store. */
  read(id: string): Promise<Session> {
    const resident = this.h.resident(id)?.session;
    return resident ? Promise.resolve(resident) : this.h.store.inspect(id);
  }

  /**
   * A session is a subagent (reached through follow-up) when its own log holds a descriptor.
   * The origin answers for `user` and `subagent`; only a fork (the user's, or a subagent's)
   * needs its log read, once: the descriptor is written at creation and never changes.
   */
  async isSubagent(id: string): Promise<boolean> {
    const origin = (this.h.resident(id)?.session.header ?? this.h.store.header(id))?.origin;
    if (origin === 'user') return false;
    if (origin === 'subagent') return true;
    let known = this.forkKinds.get(id);
    if (known === undefined) {
      const s = await this.read(id);
      known = descriptorOf(s.header, s.events) !== undefined;
      this.forkKinds.set(id, known);
    }
    return known;
  }

  /**
   * The user forks a conversation: a new root-level session (origin `fork`) seeded with the
   * log up to the end of the turn holding `seq`, which the user then chats with. It runs under
   * the source's policy as it is now, never the one in force at the fork point (decision 0024).
   */
  async fork(sourceId: string, seq: number, opts: { title?: string; budget?: Budget } = {}): Promise<Agent> {
    const budget = opts.budget ? checkBudget(opts.budget) : undefined;
    // A remote program's own sub-session (decision 0041) is only shown here: nothing of Arbor's can continue it.
    const mirror = mirrorRefusal(sourceId, await this.h.store.summary(sourceId).catch(() => undefined), 'fork');
    if (mirror) throw mirror;
    const source = await this.read(sourceId);
    const events = source.events;
    // Read synchronously with the events: a switch after this call belongs to the source only.
    const current = policyOverrides(events);
    if (!Number.isSafeInteger(seq) || seq < 0 || seq >= events.length) throw new HarnessError('NO_SUCH_EVENT', `Session ${sourceId} has no event ${seq}.`);
    const end = forkPoint(events, seq);
    if (end < 0) throw new HarnessError('TURN_NOT_ENDED', 'That message is in a turn that has not finished yet; fork after it ends.');
    // The source's worktree as it is now (decision 0126): the fork works in it, or is not made; one being changed, once that ended.
    const place = worktreeOf(source.header, events);
    if (place) await this.settledWorktree(sourceId);
    const closed = await this.closedWorktree(place);
    if (closed) throw new HarnessError('WORKTREE_CLOSED', `${closed} A fork would have no folder to work in, so none was made.`);
    const header = headerFrom(source.header, {
      id: `${sourceId.split('.')[0]}.f${randomUUID().slice(0, 6)}`,
      origin: 'fork',
      parentSession: sourceId,
      delegationDepth: source.header.delegationDepth ?? 0,
      // Named after what the user sees (the label or title), distinct from earlier forks' names.
      title:
        opts.title ??
        distinctName(
          forkName(nameFromLog(source.header, events)),
          this.h.store.list().map((x) => x.title),
        ),
    });
    // A subagent's fork is the same agent as the child (its role, tools, model): the same head, the prompt cache holds.
    const own = agentOfSubagent(descriptorOf(source.header, events), source.header);
    if (own) header.agent = own;
    // A way of "Try N ways" ran on its own model (decision 0061, kept in its `bestOf`): its fork does too.
    const wayModel = source.header.bestOf?.model;
    if (wayModel) header.agent = { ...(header.agent ?? { name: `way ${source.header.bestOf!.way}` }), model: wayModel };
    const writer = new SessionWriter(Session.fromSeed(header, events.slice(0, end + 1)), this.h.store, { published: false });
    // After the seed (a seed may hold a looser switch the source has since taken back), in
    // the same durable write as the seed: the fork never runs a moment under the old policy.
    if (current.sandbox) await writer.append({ type: 'sandbox/mode', mode: current.sandbox.value, source: current.sandbox.source });
    if (current.approval) await writer.append({ type: 'approval/policy', policy: current.approval.value, source: current.approval.source });
    if (place) {
      // Rooted where its source works, now and at every cold resume; unconfined it could write the checkout (clamped as a worktree child).
      await writer.append(forkWorktreeEvent(sourceId, place));
      if ((current.sandbox?.value ?? this.h.deploymentSandbox()) === 'full-access')
        await writer.append({ type: 'sandbox/mode', mode: 'workspace-write', source: 'user' });
    }
    // A fork starts with no budget and none of the source's spending: only an explicit one carries (decision 0034).
    if (budget) await writer.append({ type: 'budget/set', budget, source: 'fork' });
    await writer.publish();
    return this.h.makeResident(writer);
  }

  /** The user switches a session's sandbox or approval policy (last event wins; children keep their snapshot). */
  async setPolicy(id: string, policy: { sandbox?: SandboxMode; approval?: ApprovalPolicy }): Promise<void> {
    await this.withLog(id, async (log) => {
      if (policy.sandbox) await log.append({ type: 'sandbox/mode', mode: policy.sandbox, source: 'user' });
      if (policy.approval) await log.append({ type: 'approval/policy', policy: policy.approval, source: 'user' });
    });
  }

  /** The budget of a session's subtree (checked by the caller), as a durable `budget/set`; null removes it. */
  async setBudget(id: string, budget: Budget | null): Promise<void> {
    await this.withLog(id, (log) => log.append({ type: 'budget/set', budget, source: 'user' }));
  }

  /** Cancel a queued message of any session; one not resident is written through a writer of its own (no turn starts). */
  async withdraw(id: string, messageId: string): Promise<void> {
    await this.withLog(id, (log) => withdrawQueued(log, messageId));
  }

  /**
   * "Send now" for messages kept after an interrupt: the agent works through its queue in
   * FIFO order. A root not resident opens (which runs its queue); a released subagent is
   * cold-resumed.
   */
  async runQueue(id: string): Promise<void> {
    this.known(id);
    if (await this.isSubagent(id)) return this.h.subagents.wake(id);
    // A root opened from its log for it is work under way too: a Stop meanwhile leaves the queue waiting.
    return this.h.subagents.under(id, async (work) => {
      const agent = this.h.resident(id) ?? (await this.h.openSession(id));
      if (!work.halted) agent.resume();
      else agent.pause();
    });
  }

  /**
   * A message from the human to any session: a root takes it directly; a subagent through
   * follow-up (cold resume). Under way from the call on, before any await (decision 0100, amended
   * in s59): a Stop of the session's subtree that lands before the message is accepted — while a
   * root not in memory is opened from its log — keeps it queued and paused, marked so across a
   * restart too, and no turn starts.
   */
  async send(id: string, text: string, opened?: (agent: Agent) => void): Promise<Agent> {
    this.known(id);
    return this.h.subagents.under(id, async (work) => {
      if (await this.isSubagent(id)) {
        await this.h.subagents.followup(null, id, text, undefined, work);
        return this.h.resident(id)!;
      }
      // A conversation whose worktree was applied, discarded or kept meanwhile is told so before it would meet a missing folder;
      // one being applied now is told once the apply ended (it waits for it: bounded, a Stop ends the wait).
      await this.settledWorktree(id, work.stopped);
      const closed = await this.closedWorktree((await this.h.store.summary(id).catch(() => undefined))?.worktree);
      if (closed) throw new HarnessError('WORKTREE_CLOSED', `${closed} Your message was not sent.`);
      const agent = await this.h.openSession(id);
      opened?.(agent);
      await acceptUnder(agent, text, { kind: 'user' }, work);
      // The Stop found no turn of this root's to end (it was opening): the kept message waits for the human, also after a restart.
      if (work.halted) await agent.append({ type: 'inbox/paused' });
      return agent;
    });
  }

  /** The session's active "allow for this conversation" grants (its own, never an ancestor's). */
  async grants(id: string): Promise<ApprovalGrant[]> {
    const s = await this.read(id);
    return activeGrants(s.header, s.events);
  }

  /** The user revokes a grant: the next matching request asks again. Unknown or revoked grant ids are an error. */
  async revokeGrant(id: string, grantId: string): Promise<void> {
    await this.withLog(id, async (log) => {
      const g = activeGrants(log.session.header, log.session.events).find((x) => x.grantId === grantId);
      if (!g) throw new HarnessError('UNKNOWN_GRANT', `Session ${id} has no active grant ${grantId}; it may already be revoked.`);
      await log.append({ type: 'approval/grant', grantId, tool: g.tool, scope: g.scope, ...(g.sandbox ? { sandbox: g.sandbox } : {}), revoked: true });
    });
  }

  /** Delete a session and its descendants (none may be running). */
  async delete(id: string): Promise<string[]> {
    const ids = [id, ...this.h.store.descendants(id).map((x) => x.id)];
    for (const x of ids)
      if (this.h.resident(x)?.activity === 'running') throw new HarnessError('RUNNING', `Session ${x} is running; interrupt it before deleting.`);
    // Children first: resident subagents are released without a settlement notice (their
    // parent is going too), then any root agent left is disposed.
    for (const x of [...ids].reverse()) {
      await this.h.subagents.forget(x);
      await this.h.drop(x);
      this.forkKinds.delete(x);
    }
    return this.h.store.deleteSession(id);
  }

  /**
   * Stop a subtree: the turns of every running descendant (deepest first), then the
   * session's own. Inboxes are kept and nothing resumes by itself: a notice from a stopped
   * child waits in its parent's inbox until the human or the parent decides. A mirror (a
   * remote program's own sub-session, decision 0041) is stopped alone through its program
   * (`session/cancel`); the program and its other sub-sessions go on.
   * Returns the ids whose running turn was stopped.
   */
  async interruptSubtree(id: string): Promise<string[]> {
    if (!this.h.store.header(id) && !this.h.resident(id)) throw new HarnessError('UNKNOWN_SESSION', `No session ${id}.`);
    const ids = [id, ...this.h.store.descendants(id).map((x) => x.id)].reverse();
    const stopped: string[] = [];
    /** The sessions whose own running turn (or asked compaction) this Stop ended. */
    const ownTurns = new Set<string>();
    const mirrorsEnded: Promise<void>[] = [];
    // Messages and wakes on their way into the subtree (a cold resume under way) land paused (decision 0100).
    this.h.subagents.halt(ids);
    // First every agent of the subtree is paused, so that a stopped child's notice reaching an
    // ancestor that waits on it (its turn already ended) starts nothing: Stop means nothing else runs.
    for (const x of ids) this.h.resident(x)?.pause();
    // In the same tick: a goal pauses whether a round runs or the Stop fell between two (0127, amended s59).
    const told = this.h.stopped(ids);
    for (const x of ids) {
      const a = this.h.resident(x);
      // A compaction the user asked for is a model request of this agent's too: the Stop ends it.
      if (a?.activity !== 'running' && !a?.compactingAsked) {
        const ended = this.h.subagents.mirrors.cancel(x, x === id);
        if (ended) {
          stopped.push(x);
          mirrorsEnded.push(ended);
        }
        continue;
      }
      stopped.push(x);
      ownTurns.add(x);
      await a.cancel('interrupted', { keepInbox: true });
    }
    for (const x of stopped) await this.h.resident(x)?.idle();
    await Promise.all(mirrorsEnded);
    await told;
    await this.markPaused(ids, ownTurns, stopped);
    return stopped.reverse();
  }

  /**
   * The Stop paused these with no turn of their own to end: those holding queued messages, and
   * the parents of the sessions it stopped (their notices land in a paused inbox) get
   * `inbox/paused`, so what waits there waits across a restart too (decision 0011, amended in s49;
   * `agent/kept-by-stop.ts`). An ended turn says it already.
   */
  private async markPaused(ids: readonly string[], ownTurns: ReadonlySet<string>, stopped: readonly string[]): Promise<void> {
    const parents = new Set(stopped.map((x) => this.h.store.header(x)?.parentSession));
    for (const x of ids) {
      if (ownTurns.has(x) || !this.h.store.has(x)) continue;
      const a = this.h.resident(x);
      if (!parents.has(x) && !(a && a.inboxSize > 0)) continue;
      await this.withLog(x, (log) => log.append({ type: 'inbox/paused' }));
    }
  }

  private known(id: string): void {
    if (!this.h.store.header(id)) throw new HarnessError('UNKNOWN_SESSION', `No session ${id} in ${this.h.store.dir}.`);
  }

  /**
   * Where a control event (a policy switch, a withdrawal, a grant) is written: the resident
   * agent, so its in-memory log stays current; else a writer over the stored log — in that log's
   * turn at the store's gate, as every writer of a log no agent holds (decision 0129).
   */
  private withLog<T>(id: string, fn: (log: SessionLog) => Promise<T>): Promise<T> {
    return withStoredLog(this.h.store, id, (x) => this.h.resident(x), fn);
  }
}
