import type { Budget } from '../session/budget';
import { describeBudget } from '../session/budget';
import type { SessionEvent } from '../session/events';
import { estimateTokens, type SessionSummary } from '../session/summary';
import type { Store } from '../store/store';
import { hold, leftIn, moveSpent, type Remaining, type Reservation, type Scope, stateOf, unhold, usedUp } from './budget-scope';
import { DEFAULT_COMPLETION_RESERVE, decideCap, roomIn } from './completion-cap';
import type { PriceBook } from './prices';
import { spendOfSessions } from './sessions-spend';
import { type Spend, spendOf, zeroSpend } from './spend';

export { DEFAULT_COMPLETION_RESERVE, MIN_COMPLETION_CAP } from './completion-cap';

/** A model request about to be made: its prompt (from its bytes) and the cap its reply may take. */
export interface RequestNeed {
  model: string;
  /** Bytes of the request body (the prompt estimate is a quarter of it, as everywhere). */
  bytes: number;
  /** The deployment's own completion cap, the most a reply may take; absent: `DEFAULT_COMPLETION_RESERVE`. */
  maxTokens?: number;
  /**
   * The request cannot carry a cap (a remote program makes it): all of `maxTokens` (or the
   * default reserve) must fit, nothing is lowered. Otherwise the cap is lowered to what is left.
   */
  fixed?: boolean;
  /** A compaction's summary request: held apart from the session's turn (both may be in flight), until its `compaction/end`. */
  compaction?: boolean;
}

/** Where a session's compaction request is held (a turn's request is held under the session's id). */
const compactionHold = (sessionId: string): string => `${sessionId}\u0000compaction`;

/** Why a request may not be made: the turn ends with stop reason `budget` and this text. */
export interface BudgetRefusal {
  /** The budgeted session (or `wf:<runId>`) whose budget it would break. */
  scope: string;
  message: string;
}

/**
 * A request may go, and what it holds: `maxTokens` is both the completion reserved in every
 * budgeted scope above it and the cap the request must carry (decision 0043).
 */
export interface BudgetGrant {
  maxTokens: number;
  /** When a budget's remainder lowered the cap below what was asked: which budget, for the human. */
  loweredBy?: string;
}

/** The guard's answer: no budget applies (nothing reserved, no cap needed), a grant, or a refusal. */
export type BudgetAnswer = { free: true } | { grant: BudgetGrant } | { refusal: BudgetRefusal };

/**
 * The budget guard (decision 0034): the harness asks it before each model request, and it
 * answers from totals it keeps with every durable append — never by reading logs — so a check
 * costs a walk up the lineage (a few lookups), whatever the size of the tree.
 *
 * A budget covers a session and its delegated descendants (the human's conversations and user
 * forks start a budget lineage of their own). A request is allowed only if, in every budgeted
 * scope above it, spent + reserved + this request's bound fits; its bound is then reserved until
 * its `assistant/message` (or the turn's end) is durable, when the real usage replaces it. So
 * parallel children cannot all take the last of a budget at once. The completion part of that
 * bound is the cap the request carries (lowered to what is left; decision 0043), so the
 * provider enforces it: what a subtree spends past its budget is bounded by how far prompts
 * exceed their bytes/4 estimate (and by remote programs, which carry no cap).
 */
export class BudgetGuard {
  private readonly scopes = new Map<string, Scope>();
  /** Own spend last counted per session under some scope (deltas are taken against it). */
  private readonly own = new Map<string, Spend>();
  private readonly inflight = new Map<string, Reservation>();
  /** Running remote turns, told when a budget above them is spent (they make no request we could check). */
  private readonly watchers = new Map<string, Set<(why: string) => void>>();

  constructor(
    private readonly store: Store,
    private readonly prices: () => PriceBook,
    private readonly nameOf: (id: string) => string = (id) => id,
  ) {
    store.onAppended((id, events) => this.appended(id, events));
  }

  /**
   * Prices changed: every total is recounted at the new prices. A session's scope is recounted
   * from the summaries when next needed; a workflow run's lives only here, so it is recounted
   * now (never dropped: its agents would run on unbudgeted). Requests in flight stay held.
   */
  repriced(): void {
    const runs = [...this.scopes].filter(([key]) => key.startsWith('wf:'));
    this.scopes.clear();
    this.own.clear();
    for (const [key, s] of runs) this.scopes.set(key, { ...s, spent: this.runSpent(key.slice(3)), reservedTokens: 0, reservedUsd: 0 });
    // A run's holds are held again now; a session scope takes its members' holds when recounted (`scopeKnown`).
    for (const r of this.inflight.values()) {
      r.scopes = r.scopes.filter((key) => this.scopes.has(key));
      for (const key of r.scopes) hold(this.scopes.get(key)!, r.tokens, r.usd);
    }
  }

  /**
   * Before a model request of `sessionId`: free (no budget above it), a grant (its bound —
   * prompt estimate + the granted cap — is then reserved in every budgeted scope above it, and
   * the request must carry that cap), or a refusal. Synchronous and never throws: checks of
   * parallel children run one after another, so what they reserve together never exceeds
   * what is left.
   */
  check(sessionId: string, need: RequestNeed): BudgetAnswer {
    const held = need.compaction ? compactionHold(sessionId) : sessionId;
    this.release(held);
    const scopes = this.scopesOf(sessionId);
    if (scopes.length === 0) return { free: true };
    const prompt = estimateTokens(need.bytes);
    const price = this.prices().of(need.model);
    const rooms = scopes.map((key) => ({ key, room: roomIn(stateOf(this.scopes.get(key)!), prompt, price, need.model) }));
    const decided = decideCap(need.maxTokens ?? DEFAULT_COMPLETION_RESERVE, rooms, need.fixed === true);
    if ('short' in decided) {
      const s = this.scopes.get(decided.short.key)!;
      return {
        refusal: {
          scope: decided.short.key,
          message: `The budget of ${s.name} (${describeBudget(s.budget)}) cannot take the next request: ${decided.short.why}. Nothing was sent. A human can raise the budget (Set Budget on its node, or 'arbor run --budget'); then a message goes on from here.`,
        },
      };
    }
    const { cap, by } = decided.ok;
    const tokens = prompt + cap;
    const usd = price ? (prompt * price.input + cap * price.output) / 1_000_000 : 0;
    for (const key of scopes) hold(this.scopes.get(key)!, tokens, usd);
    this.inflight.set(held, { session: sessionId, scopes, tokens, usd, wholeTurn: need.fixed === true });
    const lowered = by === undefined ? undefined : this.scopes.get(by)!;
    return {
      grant: {
        maxTokens: cap,
        ...(lowered ? { loweredBy: `the budget of ${lowered.name} (${describeBudget(lowered.budget)}) had room for only ${cap} reply tokens` } : {}),
      },
    };
  }

  /** The least a parent has left to hand on (undefined: no budget above it). */
  remaining(sessionId: string): Remaining | undefined {
    const scopes = this.scopesOf(sessionId);
    if (scopes.length === 0) return undefined;
    return leftIn(scopes.map((key) => this.scopes.get(key)!));
  }

  /** What a budgeted scope has spent (tokens and dollars), or undefined when it has no budget. */
  spent(key: string): (Spend & { reservedTokens: number }) | undefined {
    if (!this.scopeKnown(key)) return undefined;
    const s = this.scopes.get(key)!;
    return { ...s.spent, tokens: { ...s.spent.tokens }, reservedTokens: s.reservedTokens };
  }

  /**
   * Tell `onSpent` (with why) when a budget above `sessionId` is spent — by anyone under it, or
   * lowered below what was spent — while the watch lasts. A remote child's program makes its
   * requests where no check runs, so its turn watches instead and stops the program when told.
   * Called at most once per watch; the returned function ends the watch.
   */
  watch(sessionId: string, onSpent: (why: string) => void): () => void {
    let fired = false;
    const fn = (why: string) => {
      if (fired) return;
      fired = true;
      onSpent(why);
    };
    let set = this.watchers.get(sessionId);
    if (!set) this.watchers.set(sessionId, (set = new Set()));
    set.add(fn);
    return () => {
      set.delete(fn);
      if (set.size === 0 && this.watchers.get(sessionId) === set) this.watchers.delete(sessionId);
    };
  }

  /** Why no more can be spent under the session (a budget above it is used up), or undefined. */
  spentOut(sessionId: string): string | undefined {
    for (const key of this.scopesOf(sessionId)) {
      const why = usedUp(this.scopes.get(key)!);
      if (why) return why;
    }
    return undefined;
  }

  /** A workflow run's own budget: its agents' spending counts against it (and their ancestors'). */
  openRun(runId: string, budget: Budget): void {
    const key = `wf:${runId}`;
    this.scopes.set(key, { budget, spent: zeroSpend(), reservedTokens: 0, reservedUsd: 0, name: `workflow run ${runId}` });
  }

  closeRun(runId: string): void {
    this.dropScope(`wf:${runId}`);
  }

  // ── internals ──────────────────────────────────────────────────────────────

  /** A budget gone: its scope, and its part in the holds of requests in flight (a budget set again holds them afresh). */
  private dropScope(key: string): void {
    this.scopes.delete(key);
    for (const r of this.inflight.values()) if (r.scopes.includes(key)) r.scopes = r.scopes.filter((k) => k !== key);
  }

  /**
   * A request's bound goes when its answer (or its turn's end, or its compaction's end) is
   * durable; a remote turn's only with its turn's end (`answered` false): its program writes
   * messages and calls mid-turn, and reports what it spent only at the end.
   */
  private release(id: string, answered = false): void {
    const r = this.inflight.get(id);
    if (!r || (answered && r.wholeTurn)) return;
    this.inflight.delete(id);
    for (const key of r.scopes) {
      const s = this.scopes.get(key);
      if (s) unhold(s, r.tokens, r.usd);
    }
  }

  private appended(id: string, events: readonly SessionEvent[]): void {
    let answered = false;
    let ended = false;
    let compacted = false;
    let budgetChanged = false;
    for (const e of events) {
      if (e.type === 'assistant/message') answered = true;
      else if (e.type === 'turn/end') ended = true;
      // A compaction's summary request ends with its compaction/end (it writes no assistant/message).
      else if (e.type === 'compaction/end') compacted = true;
      else if (e.type === 'budget/set') budgetChanged = true;
    }
    if (compacted) this.release(compactionHold(id));
    if (answered || ended) this.release(id, !ended);
    const spends = answered || ended || compacted;
    if (budgetChanged) {
      const b = this.summary(id)?.budget;
      const s = this.scopes.get(id);
      if (!b) this.dropScope(id);
      else if (s) s.budget = { ...b };
      // else: counted from the summaries when first needed
    }
    if (spends && this.scopes.size > 0) this.count(id);
    if ((spends || budgetChanged) && this.watchers.size > 0) this.tellWatchers();
  }

  /** Move every budgeted scope above `id` by the delta of its own spend. */
  private count(id: string): void {
    const scopes = this.scopesOf(id);
    if (scopes.length === 0) return;
    const sum = this.summary(id);
    if (!sum) return;
    const now = spendOf(sum as SessionSummary, this.prices());
    const before = this.own.get(id) ?? zeroSpend();
    this.own.set(id, now);
    for (const key of scopes) moveSpent(this.scopes.get(key)!, before, now);
  }

  private tellWatchers(): void {
    for (const [id, fns] of [...this.watchers]) {
      const why = this.spentOut(id);
      if (why) for (const fn of [...fns]) fn(why);
    }
  }

  private summary(id: string): Readonly<SessionSummary> | undefined {
    return this.store.summaryRef(id);
  }

  /** Does the session start a budget lineage of its own (a root or a user fork), or is it a delegated child? */
  private delegated(id: string): boolean {
    const s = this.summary(id);
    if (s) return s.delegated;
    return this.store.header(id)?.origin === 'subagent';
  }

  /** Keys of the budgeted scopes covering the session: itself, its delegating ancestors, its workflow run. */
  private scopesOf(id: string): string[] {
    const out: string[] = [];
    for (let cur: string | undefined = id, n = 0; cur && n < 1000; n++) {
      if (this.scopeKnown(cur)) out.push(cur);
      const run = this.summary(cur)?.workflowRun;
      if (run && this.scopes.has(`wf:${run.runId}`)) out.push(`wf:${run.runId}`);
      if (!this.delegated(cur)) break;
      cur = this.store.parentOf(cur);
    }
    return out;
  }

  /** A session's scope, counted from the summaries the first time its budget is needed. */
  private scopeKnown(key: string): boolean {
    if (this.scopes.has(key)) return true;
    if (key.startsWith('wf:')) return false;
    const budget = this.summary(key)?.budget;
    if (!budget) return false;
    const members = new Set(this.subtree(key));
    const spent = spendOfSessions(members, (x) => this.summary(x), this.prices(), this.own);
    // Requests in flight under it (a budget set while they run, or recounted) are held in it too.
    const scope: Scope = { budget: { ...budget }, spent, reservedTokens: 0, reservedUsd: 0, name: this.nameOf(key) };
    for (const r of this.inflight.values()) {
      if (!members.has(r.session) || r.scopes.includes(key)) continue;
      r.scopes.push(key);
      hold(scope, r.tokens, r.usd);
    }
    this.scopes.set(key, scope);
    return true;
  }

  /** What a workflow run's agents (and what they delegated) spent, at today's prices. */
  private runSpent(runId: string): Spend {
    const members = new Set<string>();
    for (const h of this.store.list()) if (this.summary(h.id)?.workflowRun?.runId === runId) for (const x of this.subtree(h.id)) members.add(x);
    return spendOfSessions(members, (x) => this.summary(x), this.prices(), this.own);
  }

  /** The session and its delegated descendants (a user fork below starts its own lineage). */
  private subtree(id: string): string[] {
    const out = [id];
    for (let i = 0; i < out.length; i++) for (const h of this.store.children(out[i])) if (this.delegated(h.id)) out.push(h.id);
    return out;
  }
}
