import type { Agent } from '../agent/agent';
import type { ToolCall } from '../session/events';
import { cancelled } from '../tools/result';
import { commandEntering } from '../tools/roots-lock';
import type { ToolContext, ToolResult } from '../tools/tool';
import { attribute } from './attribute';
import type { CallIntents } from './call-intent';
import { ChangeCapture, type Inflight, type Pending, RECORDED } from './capture';
import type { Shadows } from './shadow';

// What each step of a turn changed, per node (decision 0059): the agent's hooks. Before a writing
// call, what it may change is captured as it is (`capture.ts`: a file tool's file, a command's
// roots) and an intent left for a crash (`call-intent.ts`); after it, what it changed is held;
// once the step's calls are all answered, its changes, in the order they happened and each to its
// call (`attribute.ts`), are staged as one `checkpoint` event just before its results, sharing
// their group commit.

export interface RecorderOptions {
  shadows: Shadows;
  resident(id: string): Agent | undefined;
  /** Read at each call: the setting may change while running. */
  enabled(): boolean;
  maxFileBytes: number;
  /** Whether git runs here (the recorder stays silent when not). */
  gitReady(): Promise<boolean>;
  /** Whether commands run in the OS sandbox here (absent: they do); when not, a read-only session's approved commands are recorded too. */
  commandsConfined?(): Promise<boolean>;
  /** Where each writing call leaves what it found before it runs, for a crash to be recorded at the next open (`call-intent.ts`). */
  intents?: CallIntents;
  /** A session's name as the panel shows it: a rewind or an apply refused while its command runs names it. */
  nameOf?(sessionId: string): string;
}

export class CheckpointRecorder {
  private readonly inflight = new Map<string, Promise<Inflight | undefined>>();
  private readonly pending = new Map<string, Pending>();
  /** Skipped paths already said, per session: said once, not per step. */
  private readonly said = new Map<string, Set<string>>();
  /** Calls of the step under way that left an intent, per session: removed once the step's record is in. */
  private readonly intended = new Map<string, Set<string>>();
  /** Commands between their first snapshot and their last, each with its release of `roots-lock.ts`. */
  private readonly running = new Map<string, () => void>();
  /** Each session's step under way, as a recording that holds its blobs from a deletion's sweep (`pins.ts`) until its record is durable. */
  private readonly steps = new Map<string, () => void>();
  private readonly capture: ChangeCapture;

  constructor(private readonly o: RecorderOptions) {
    this.capture = new ChangeCapture(o);
  }

  /**
   * `beforeToolCall`: remember what the call may change, as it is now. A command that can write
   * first waits while a rewind or an apply writes in its roots (`roots-lock.ts`; stopped meanwhile,
   * it is answered as cancelled, the only call this blocks), and from here to its `after` counts
   * as running there.
   */
  async before(c: { call: ToolCall; args: Record<string, unknown>; ctx: ToolContext }): Promise<ToolResult | undefined> {
    const how = RECORDED[c.call.name];
    if (!how) return undefined;
    // Read-only: a file tool writes nothing, and a confined command cannot; a command run outside
    // the sandbox (asked for, or where none can start) once the user approves it can.
    if (c.ctx.sandbox === 'read-only' && !(how.kind === 'roots' && (await this.unconfined(c.args)))) return undefined;
    if (how.kind === 'roots' && !(await this.enter(c))) return cancelled(c.call.name);
    if (!this.o.enabled()) return undefined;
    if (!this.steps.has(c.ctx.sessionId)) this.steps.set(c.ctx.sessionId, this.o.shadows.pins.begin());
    const p = (async () => ((await this.o.gitReady()) ? this.capture.capture(how, c.args, c.ctx) : undefined))().catch(() => undefined);
    this.inflight.set(key(c.ctx.sessionId, c.call.id), p);
    const was = await p;
    if (was) await this.intend(c.call, c.ctx, was);
    return undefined;
  }

  /** The command counts as running in its roots (after any rewind or apply writing there); false when the turn was stopped meanwhile. */
  private async enter(c: { call: ToolCall; args: Record<string, unknown>; ctx: ToolContext }): Promise<boolean> {
    const who = this.o.nameOf?.(c.ctx.sessionId) ?? 'an agent';
    const release = await commandEntering({ who, command: String(c.args.command ?? ''), roots: c.ctx.roots }, c.ctx.signal);
    if (!release) return false;
    this.running.get(key(c.ctx.sessionId, c.call.id))?.();
    this.running.set(key(c.ctx.sessionId, c.call.id), release);
    return true;
  }

  /** The command no longer counts as running (its last snapshot is taken). */
  private leave(k: string): void {
    this.running.get(k)?.();
    this.running.delete(k);
  }

  /** Leave what the call found, before it runs (its blob stored first); a failure only loses the crash's record. */
  private async intend(call: ToolCall, ctx: ToolContext, was: Inflight): Promise<void> {
    const intents = this.o.intents;
    if (!intents || (was.kind === 'file' && was.skip)) return;
    const turnId = this.o.resident(ctx.sessionId)?.session.openTurnId ?? undefined;
    const base = { sessionId: ctx.sessionId, callId: call.id, tool: call.name, ...(turnId ? { turnId } : {}) };
    try {
      if (was.kind === 'file') {
        if (was.before) await was.shadow.storeNow(was.before);
        intents.write({ ...base, kind: 'file', root: was.shadow.root, path: was.path, before: was.before });
      } else intents.write({ ...base, kind: 'roots', trees: was.trees.map((t) => ({ root: t.shadow.root, tree: t.tree })) });
      const mine = this.intended.get(ctx.sessionId) ?? new Set<string>();
      this.intended.set(ctx.sessionId, mine.add(call.id));
    } catch {
      // no intent: a crash during this call goes unrecorded, as before intents
    }
  }

  /** Whether a command will run outside the OS sandbox: it asks to, or no sandbox can start here. */
  private async unconfined(args: Record<string, unknown>): Promise<boolean> {
    if (args.outsideSandbox === true) return true;
    return !(await (this.o.commandsConfined?.() ?? Promise.resolve(true)).catch(() => false));
  }

  /** `afterToolCall`: what the call changed, held for the step's record. Never changes the result. */
  async after(c: { call: ToolCall; args?: Record<string, unknown>; result: ToolResult; ctx: ToolContext }): Promise<undefined> {
    const wrote = performance.now();
    const k = key(c.ctx.sessionId, c.call.id);
    const started = this.inflight.get(k);
    this.inflight.delete(k);
    try {
      const was = await started;
      const written = c.call.name === 'write_file' && !c.result.isError && typeof c.args?.content === 'string' ? c.args.content : undefined;
      if (was) this.hold(c.ctx.sessionId, await this.capture.compare(was, c.call, wrote, written));
    } catch {
      // A checkpoint that cannot be taken is missing from the log, never a failed call.
    } finally {
      this.leave(k);
    }
    return undefined;
  }

  /** Every call of the step was answered: stage its changes as one `checkpoint` event (the agent's `beforeResults`). */
  flush(sessionId: string): void {
    const intended = this.intended.get(sessionId) ?? new Set<string>();
    this.intended.delete(sessionId);
    const p = this.pending.get(sessionId);
    this.pending.delete(sessionId);
    const ended = this.steps.get(sessionId) ?? (() => undefined);
    this.steps.delete(sessionId);
    const agent = this.o.resident(sessionId);
    const changes = p && agent && !agent.isDisposed ? attribute(p.changes) : [];
    // A call that changed nothing has nothing to record: its intent goes now, before the next step can write.
    const recorded = new Set(changes.map((c) => c.callId));
    this.o.intents?.remove(
      sessionId,
      [...intended].filter((id) => !recorded.has(id)),
    );
    if (!p || !agent || agent.isDisposed || (changes.length === 0 && p.skipped.length === 0)) return ended();
    for (const c of changes) this.o.shadows.kick(c.root);
    const turnId = agent.session.openTurnId ?? undefined;
    agent
      .append({ type: 'checkpoint', ...(turnId ? { turnId } : {}), changes, ...(p.skipped.length ? { skipped: p.skipped } : {}) })
      // Recorded: the calls' intents go (one left by a crash now is found recorded at the next open, and only removed).
      .then(() => this.o.intents?.remove(sessionId, recorded))
      .catch(() => undefined) // a log that refuses it (a store closing) changes nothing decided; the intents stay for the next open
      .finally(ended);
  }

  /** Deleted sessions: a step of theirs left unflushed holds nothing any more, and what was said of them goes (one pass). */
  forget(ids: readonly string[]): void {
    for (const id of ids) {
      this.steps.get(id)?.();
      this.steps.delete(id);
      this.said.delete(id);
    }
  }

  private hold(sessionId: string, p: Pending): void {
    const said = this.said.get(sessionId) ?? new Set<string>();
    this.said.set(sessionId, said);
    const skipped = p.skipped.filter((s) => !said.has(s.path) && said.add(s.path));
    if (p.changes.length === 0 && skipped.length === 0) return;
    const held = this.pending.get(sessionId) ?? { changes: [], skipped: [] };
    held.changes.push(...p.changes);
    held.skipped.push(...skipped);
    this.pending.set(sessionId, held);
  }
}

const key = (sessionId: string, callId: string): string => `${sessionId}\0${callId}`;
