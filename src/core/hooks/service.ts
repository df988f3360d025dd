import type { Agent } from '../agent/agent';
import type { Remaining } from '../cost/budget-scope';
import type { HookRunEvent, SessionHeader } from '../session/events';
import type { SessionSummary } from '../session/summary';
import { matchesAny } from './matcher';
import { runHook } from './runner';
import type { HookCommand, HookEventName, ParsedHooks } from './schema';
import { type HookFiles, loadHooks } from './sources';
import { type PermissionDecision, readVerdict } from './verdict';

// The hooks of one deployment (decision 0057): a snapshot of the settings files, fired by event
// with Claude Code's JSON input plus where in the tree it fires; every run is a durable
// `hook/run` event in the session it fired for. What a firing may change is decided by the
// caller (wire.ts), which can only narrow: block, deny, ask — never allow past the policy.

export interface HooksOptions extends HookFiles {
  /** Read at each firing: hooks from the workspace's files run only while it is trusted; the user's own always do. */
  trusted: () => boolean;
  /** Bytes of each stream kept per run (default 64 KiB). */
  outputCap?: number;
}

/** What the hooks service reads of the harness. */
export interface HookHost {
  resident(id: string): Agent | undefined;
  store: { header(id: string): SessionHeader | undefined; summaryRef(id: string): Readonly<SessionSummary> | undefined };
  /** What the session's budgets have left (undefined: no budget above it). */
  budgetLeft?: (id: string) => Remaining | undefined;
  /** The model's key in use, kept from every hook's environment whatever the variable (`commandEnv`). */
  secrets?: () => readonly string[];
}

export interface FireRequest {
  event: HookEventName;
  /** The session the hook fires for: its tree fields go in the input, its log gets the runs. */
  sessionId: string;
  /** The names the matcher is tested against (a tool's names, a trigger); absent: every hook of the event. */
  match?: readonly string[];
  /** The tool (Arbor's name) a tool event fires for, for the log. */
  tool?: string;
  /** The event's own input fields (Claude Code's names). */
  fields: Record<string, unknown>;
  /**
   * The Stop of the work the hook fires for (its turn, the ask, the child's start): aborted, it
   * kills the hook's process group (decision 0099, 0127). Required, so that no firing forgets it;
   * undefined only where no Stop reaches the firing.
   */
  signal: AbortSignal | undefined;
}

/** What the runs of one firing said together: every block reason, the strictest decision, all context. */
export interface Fired {
  ran: number;
  block?: string;
  decision?: PermissionDecision;
  decisionReason?: string;
  context?: string;
}

const COMMAND_CHARS = 500;
const REASON_CHARS = 2000;
const STRICTNESS: Record<PermissionDecision, number> = { allow: 0, ask: 1, deny: 2 };
const clip = (s: string, n: number): string => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

export class HookService {
  private snapshot: ParsedHooks;
  /** Runs of tool hooks not yet staged, per session (see `record`). */
  private readonly held = new Map<string, HookDraft[]>();

  constructor(
    readonly options: HooksOptions,
    private readonly host: HookHost,
  ) {
    this.snapshot = loadHooks(options);
  }

  /** Read the settings files again (a host's reload, a settings change); returns what was skipped and why. */
  reload(files: Partial<HookFiles> = {}): readonly string[] {
    Object.assign(this.options, files);
    this.snapshot = loadHooks(this.options);
    return this.snapshot.problems;
  }

  /** What the last load skipped, each naming its file and place. */
  get problems(): readonly string[] {
    return this.snapshot.problems;
  }

  get hooks(): readonly HookCommand[] {
    return this.snapshot.hooks;
  }

  /** Whether any hook of `event` could run now (cheap: the agent's paths skip all work when none could). */
  has(event: HookEventName): boolean {
    const trusted = this.options.trusted();
    return this.snapshot.hooks.some((h) => h.event === event && (trusted || h.source === 'user'));
  }

  async fire(req: FireRequest): Promise<Fired> {
    const trusted = this.options.trusted();
    const seen = new Set<string>();
    const chosen = this.snapshot.hooks.filter((h) => {
      if (h.event !== req.event || (!trusted && h.source !== 'user')) return false;
      if (req.match && !matchesAny(h.matcher, req.match)) return false;
      // The same command configured twice (user and workspace files) runs once, as in Claude Code.
      if (seen.has(h.command)) return false;
      seen.add(h.command);
      return true;
    });
    if (chosen.length === 0) return { ran: 0 };
    const input = { ...this.treeFields(req.sessionId), hook_event_name: req.event, ...req.fields };
    const verdicts = await Promise.all(
      chosen.map(async (h) => {
        const run = await runHook(h, input, {
          cwd: this.options.workspaceRoot,
          ...(this.options.outputCap ? { cap: this.options.outputCap } : {}),
          ...(req.signal ? { signal: req.signal } : {}),
          ...(this.host.secrets ? { secrets: this.host.secrets() } : {}),
        });
        const v = readVerdict(run);
        this.record(req, h, {
          outcome: v.outcome,
          durationMs: run.durationMs,
          ...(v.exitCode !== undefined ? { exitCode: v.exitCode } : {}),
          ...(v.note ? { reason: clip(v.note, REASON_CHARS) } : {}),
          ...(v.decision ? { decision: v.decision } : {}),
          ...(run.truncated ? { truncated: true as const } : {}),
        });
        return v;
      }),
    );
    const out: Fired = { ran: chosen.length };
    const blocks = verdicts.flatMap((v) => (v.block ? [v.block] : []));
    if (blocks.length) out.block = blocks.join('\n');
    for (const v of verdicts) {
      if (v.decision && (!out.decision || STRICTNESS[v.decision] > STRICTNESS[out.decision])) {
        out.decision = v.decision;
        if (v.decisionReason) out.decisionReason = v.decisionReason;
      }
    }
    const context = verdicts.flatMap((v) => (v.context ? [v.context] : []));
    if (context.length) out.context = context.join('\n');
    return out;
  }

  /** Where a session sits in the tree: its parent, its depth, and its agent's name (a child's label; `main` for a root). */
  placeOf(id: string): { parentId?: string; depth: number; agent: string } {
    const header = this.host.resident(id)?.session.header ?? this.host.store.header(id);
    const parentId = header?.parentSession;
    const agent = this.host.store.summaryRef(id)?.label ?? (parentId ? 'subagent' : 'main');
    return { ...(parentId ? { parentId } : {}), depth: header?.delegationDepth ?? 0, agent };
  }

  /** Claude Code's common input fields, plus where in the tree the hook fires (Arbor's addition). */
  private treeFields(id: string): Record<string, unknown> {
    const place = this.placeOf(id);
    const left = this.host.budgetLeft?.(id);
    return {
      session_id: id,
      cwd: this.options.workspaceRoot,
      parent_id: place.parentId ?? null,
      depth: place.depth,
      agent: place.agent,
      budget_left: left ? { ...(left.tokens !== undefined ? { tokens: left.tokens } : {}), ...(left.usd !== undefined ? { usd: left.usd } : {}) } : null,
    };
  }

  /**
   * The run as a durable event of the session it fired for (a session no longer resident here is
   * not written to). A tool hook's run is held until the step's calls are all answered
   * (`flushRecords`, just before the results are staged) so it shares their group commit; any
   * other run is staged at once. Neither is awaited: a record gates nothing, and what is written
   * after it is durable only once it is (one journal, appended in order).
   */
  private record(req: FireRequest, h: HookCommand, run: Omit<HookRunEvent, 'seq' | 'at' | 'type' | 'event' | 'command' | 'source' | 'tool'>): void {
    const draft: HookDraft = {
      type: 'hook/run',
      event: req.event,
      command: clip(h.command, COMMAND_CHARS),
      source: h.source,
      ...(req.tool ? { tool: req.tool } : {}),
      ...run,
    };
    const held = this.held.get(req.sessionId) ?? [];
    held.push(draft);
    this.held.set(req.sessionId, held);
    // A tool hook a Stop ended belongs to a step that will never be answered: staged now, not
    // in a later turn's step (decision 0127).
    if (!req.tool || req.signal?.aborted) this.flushRecords(req.sessionId);
  }

  /** Stage the held runs of a session, in the order they ended (a step's calls are all answered: the agent's `beforeResults`). */
  flushRecords(sessionId: string): void {
    const held = this.held.get(sessionId);
    if (!held) return;
    this.held.delete(sessionId);
    const agent = this.host.resident(sessionId);
    if (!agent || agent.isDisposed) return;
    for (const d of held) agent.append(d).catch(() => undefined); // a log that refuses the record (a store closing) changes nothing decided
  }
}

type HookDraft = Omit<HookRunEvent, 'seq' | 'at'>;
