import { randomUUID } from 'node:crypto';
import type { Agent } from '../../agent/agent';
import { SessionWriter } from '../../agent/session-writer';
import { describeError } from '../../errors';
import type { ProjectFiles } from '../../project/project-files';
import type { BestOfWay, SandboxMode, SessionEvent, SessionHeader } from '../../session/events';
import { policyOverrides } from '../../session/folds';
import { headerFrom } from '../../session/fork';
import { nameFromLog } from '../../session/names';
import { Session } from '../../session/session';
import type { SessionStatus } from '../../session/status';
import type { Store } from '../../store/store';
import { rootsOf } from '../../subagent/isolation';
import { acceptUnder } from '../../subagent/underway';
import type { WorktreePlace } from '../../worktree/checkout';
import { WorktreeError } from '../../worktree/git';
import type { ApplyResult, WorktreeService } from '../../worktree/service';
import { HarnessError } from '../errors';
import { rootAgentOf } from '../root-agent';
import { wayFile } from './counts';
import { waySeed } from './seed';
import type { BestOfStart, GroupListing, GroupView, WayFile, WayView } from './types';

export const MIN_WAYS = 2;
export const MAX_WAYS = 4;

export interface BestOfDeps {
  store: Store;
  worktrees: WorktreeService;
  project: ProjectFiles;
  /** The deployment's roots (a source with no worktree of its own works there). */
  roots: readonly string[];
  deploymentSandbox(): SandboxMode;
  read(id: string): Promise<Session>;
  isSubagent(id: string): Promise<boolean>;
  resident(id: string): Agent | undefined;
  makeResident(writer: SessionWriter): Agent;
  status(id: string): SessionStatus | undefined;
  /** Work under way to the source (registered before any await): a Stop of its subtree meanwhile marks it halted (decision 0100). */
  under<T>(id: string, fn: (work: { halted: boolean }) => Promise<T>): Promise<T>;
}

/**
 * "Try N ways" (decision 0061), the public facade `harness.bestOf`: N user forks of a
 * conversation at one message, each in its own git worktree (part 2's WorktreeService) and
 * rooted there, each optionally with its own model or agent file. The group is durable in the
 * ways' headers; which way was chosen is the one whose worktree was applied first.
 */
export class BestOfService {
  constructor(private readonly d: BestOfDeps) {}

  /** Fork the ways and start each on the prompt; returns the group id (the ways run on their own). */
  /**
   * A Stop of the source's subtree while the ways are being made reaches them too: a way made
   * after it is kept paused with its message queued, and makes no request (decision 0100).
   */
  start(sourceId: string, seq: number, opts: BestOfStart): Promise<{ group: string; ways: string[] }> {
    return this.d.under(sourceId, (work) => this.startWays(sourceId, seq, opts, work));
  }

  private async startWays(sourceId: string, seq: number, opts: BestOfStart, work: { halted: boolean }): Promise<{ group: string; ways: string[] }> {
    const n = opts.ways.length;
    if (n < MIN_WAYS || n > MAX_WAYS) throw new HarnessError('BAD_WAYS', `Try ${MIN_WAYS} to ${MAX_WAYS} ways, not ${n}.`);
    if (!this.d.store.has(sourceId) && !this.d.resident(sourceId)) throw new HarnessError('UNKNOWN_SESSION', `No session ${sourceId}.`);
    if (await this.d.isSubagent(sourceId))
      throw new HarnessError(
        'BAD_WAYS',
        'Several ways are tried from a conversation, not from a subagent; fork the subagent first, then try several ways from the fork.',
      );
    const source = await this.d.read(sourceId);
    const events = source.events;
    const current = policyOverrides(events);
    const seed = waySeed(events, seq, opts.prompt);
    if (!seed.ok) throw new HarnessError(seed.code === 'PROMPT_REQUIRED' ? 'PROMPT_REQUIRED' : seed.code, seed.message);
    // Agent files are resolved before anything is made: an unknown name changes nothing.
    // An agent file's sandbox only narrows the conversation's own (its override, else the deployment's), never widens it.
    const conversationSandbox = current.sandbox?.value ?? this.d.deploymentSandbox();
    const agents = opts.ways.map((w) => (w.agent ? rootAgentOf(this.d.project, w.agent, conversationSandbox) : undefined));
    const group = `g${randomUUID().slice(0, 8)}`;
    const base = nameFromLog(source.header, events);
    const parentRoot = (rootsOf(source.header, events) ?? this.d.roots)[0] ?? '.';
    const made: { id: string; place: WorktreePlace }[] = [];
    try {
      for (let i = 0; i < n; i++) {
        const id = `${sourceId.split('.')[0]}.w${randomUUID().slice(0, 6)}`;
        made.push({ id, place: await this.d.worktrees.create(id, `way${i + 1}`, parentRoot) });
      }
    } catch (e) {
      for (const m of made) await this.d.worktrees.remove(m.place).catch(() => undefined);
      throw e;
    }
    const ids: string[] = [];
    for (const [i, { id, place }] of made.entries()) {
      const w = opts.ways[i];
      const agent = agents[i];
      const bestOf: BestOfWay = {
        group,
        way: i + 1,
        of: n,
        source: sourceId,
        seq,
        prompt: seed.prompt,
        ...(w.model ? { model: w.model } : {}),
        ...(agent ? { agent: agent.agent.name } : {}),
      };
      const header: SessionHeader = {
        ...headerFrom(source.header, {
          id,
          origin: 'fork',
          parentSession: sourceId,
          delegationDepth: source.header.delegationDepth ?? 0,
          title: `Way ${i + 1}: ${base}`,
        }),
        bestOf,
      };
      if (agent) header.agent = agent.agent;
      // Tried from the first message there is no whole turn to seed: the way starts empty.
      const session = seed.end > 0 ? Session.fromSeed(header, events.slice(0, seed.end)) : Session.create(header);
      const writer = new SessionWriter(session, this.d.store, { published: false });
      // Messages still waiting in the seed's inbox belong to the source: the way never runs them.
      for (const messageId of writer.session.unclaimedInbox) await writer.append({ type: 'inbox/withdrawn', messageId });
      if (current.sandbox) await writer.append({ type: 'sandbox/mode', mode: current.sandbox.value, source: current.sandbox.source });
      if (current.approval) await writer.append({ type: 'approval/policy', policy: current.approval.value, source: current.approval.source });
      if (agent?.sandbox) await writer.append({ type: 'sandbox/mode', mode: agent.sandbox, source: 'user' });
      // Unconfined, a way could write outside its worktree: full-access is clamped as for a worktree child (decision 0060).
      else if (conversationSandbox === 'full-access') await writer.append({ type: 'sandbox/mode', mode: 'workspace-write', source: 'user' });
      await writer.append({ type: 'worktree', state: 'open', ...place });
      await writer.publish();
      ids.push(id);
      // A Stop of the source's subtree came meanwhile: kept, paused, before its turn opens.
      await acceptUnder(this.d.makeResident(writer), seed.prompt, { kind: 'user' }, work);
    }
    return { group, ways: ids };
  }

  /** Every group of this store (no logs read). */
  list(): GroupListing[] {
    const groups = new Map<string, GroupListing>();
    for (const h of this.ways()) {
      const b = h.bestOf!;
      const g = groups.get(b.group) ?? { group: b.group, source: b.source, seq: b.seq, prompt: b.prompt, ways: [] };
      g.ways.push(h.id);
      groups.set(b.group, g);
    }
    return [...groups.values()];
  }

  /** The group a session is a way of, if any. */
  groupOf(id: string): string | undefined {
    return this.d.store.header(id)?.bestOf?.group;
  }

  /** The comparison: each way's status, model/agent, outcome and the files it changed. */
  async view(group: string): Promise<GroupView> {
    const heads = this.headersOf(group);
    const ways: WayView[] = [];
    let chosen: { id: string; at: string } | undefined;
    for (const h of heads) {
      const s = await this.d.read(h.id);
      const v = await this.wayView(h, s.events);
      const applied = [...s.events].reverse().find((e) => e.type === 'worktree' && e.state === 'applied');
      if (applied && (!chosen || applied.at < chosen.at)) chosen = { id: h.id, at: applied.at };
      ways.push(v);
    }
    const b = heads[0].bestOf!;
    return {
      group,
      source: b.source,
      seq: b.seq,
      prompt: b.prompt,
      ways,
      ...(chosen ? { chosen: chosen.id } : {}),
      settled: ways.every((w) => w.settled),
    };
  }

  /** Apply one way into the conversation's working tree (part 2's apply: conflicts returned, nothing changed then). */
  async choose(group: string, wayId: string): Promise<ApplyResult> {
    this.member(group, wayId);
    if (this.d.resident(wayId)?.activity === 'running')
      throw new HarnessError('RUNNING', 'That way is still working; wait until it settles (or stop it), then apply it.');
    return this.d.worktrees.apply(wayId);
  }

  /** Discard the worktree of every way but `keep` still open or kept; returns the ways discarded. */
  async discardOthers(group: string, keep: string): Promise<string[]> {
    this.member(group, keep);
    // The others go only once a way came into the files: never all but one with none applied (a stale or hostile view's ask).
    if (this.d.store.summaryRef(keep)?.worktree?.state !== 'applied')
      throw new HarnessError(
        'NOT_APPLIED',
        'That way is not applied: "Discard the others" keeps the way you applied. Apply one first, or discard ways one by one.',
      );
    const out: string[] = [];
    for (const h of this.headersOf(group)) {
      if (h.id === keep) continue;
      const state = this.d.store.summaryRef(h.id)?.worktree?.state;
      if (state !== 'open' && state !== 'kept') continue;
      await this.d.worktrees.discard(h.id);
      out.push(h.id);
    }
    return out;
  }

  private ways(): SessionHeader[] {
    return this.d.store.list().filter((h) => h.bestOf);
  }

  private headersOf(group: string): SessionHeader[] {
    const heads = this.ways()
      .filter((h) => h.bestOf!.group === group)
      .sort((a, b) => a.bestOf!.way - b.bestOf!.way);
    if (heads.length === 0) throw new HarnessError('UNKNOWN_GROUP', 'That group of ways no longer exists; it was deleted with its conversations.');
    return heads;
  }

  private member(group: string, id: string): void {
    if (!this.headersOf(group).some((h) => h.id === id))
      throw new HarnessError('UNKNOWN_GROUP', "That conversation is not one of this group's ways; choose one of the ways the comparison shows.");
  }

  private async wayView(h: SessionHeader, events: readonly SessionEvent[]): Promise<WayView> {
    const b = h.bestOf!;
    const from = h.seedLength ?? 0;
    const running = this.d.resident(h.id)?.activity === 'running';
    let outcome: string | undefined;
    let error: string | undefined;
    let ended = false;
    for (let i = events.length - 1; i >= from && (outcome === undefined || !ended); i--) {
      const e = events[i];
      if (e.type === 'turn/end' && !ended) {
        ended = true;
        if (e.error) error = e.error;
      }
      if (e.type === 'assistant/message' && outcome === undefined && e.text.trim()) outcome = e.text;
    }
    const w = this.d.store.summaryRef(h.id)?.worktree;
    let files: WayFile[] = [];
    let listing: Awaited<ReturnType<WorktreeService['listing']>> | undefined;
    // A worktree that could not be read is said so, never shown as "no files changed" or "no
    // worktree": the human comparing ways would discard work they were told is not there.
    let failed: unknown;
    const held = w && (w.state === 'open' || w.state === 'kept') ? { ...w, state: w.state } : undefined;
    if (held) {
      try {
        const d = await this.d.worktrees.diff(h.id);
        files = d.files.map(wayFile);
        listing = d.listing;
      } catch (err) {
        failed = err;
      }
    }
    listing ??= await this.d.worktrees.listing(h.id).catch(() => undefined);
    const unreadable = !held || failed === undefined ? undefined : unreadableWay(b.way, held, failed);
    return {
      id: h.id,
      way: b.way,
      title: h.title ?? `way ${b.way}`,
      ...(b.model ? { model: b.model } : {}),
      ...(b.agent ? { agent: b.agent } : {}),
      status: this.d.status(h.id) ?? 'unknown',
      settled: !running && ended,
      ...(outcome !== undefined ? { outcome } : {}),
      ...(error !== undefined ? { error } : {}),
      worktree: listing?.state ?? (unreadable && held ? held.state : 'missing'),
      ...(listing ? { branch: listing.branch } : unreadable && held ? { branch: held.branch } : {}),
      files,
      ...(unreadable ? { unreadable } : {}),
    };
  }
}

/** Why a way's changes are not shown: the worktree's own refusal (an untrusted workspace), else what failed and that nothing went. */
function unreadableWay(way: number, w: { path: string; branch: string }, err: unknown): string {
  if (err instanceof WorktreeError && err.code === 'UNSUPPORTED') return `UNSUPPORTED: ${err.message}`;
  return `WORKTREE_UNREADABLE: The worktree of way ${way} (${w.path}, branch ${w.branch}) could not be read: ${describeError(err)}. Nothing was discarded: what it changed may still be there. Look at it in that folder (or run "git worktree repair" in the repository) before discarding it or the others.`;
}
