import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Agent } from '../agent/agent';
import type { CheckpointChange, CheckpointSkip, ToolCall } from '../session/events';
import { beneathSync } from '../tools/beneath';
import { readWhole, readWholeSync } from '../tools/fsio';
import { isWithin } from '../tools/paths';
import { READ_AS_IS } from '../tools/pinned-path';
import { cancelled } from '../tools/result';
import { commandEntering } from '../tools/roots-lock';
import type { ToolContext, ToolResult } from '../tools/tool';
import type { CallIntents } from './call-intent';
import { blobId } from './objects';
import { recordedChange, type ShadowRepo, type Shadows } from './shadow';

// What each step of a turn changed, per node (decision 0059). The file tools name their file,
// so its bytes are read just before the tool writes and just after, hashed and stored
// in-process; a command can change anything inside its writable roots (the call's own
// `ctx.roots`: a child in a worktree has other roots than the harness), so those roots are
// snapshotted before and after it and the two trees compared. The step's changes are staged
// as one `checkpoint` event just before its results, sharing their group commit.

/** How each tool that writes is recorded: the file it names, or its whole writable roots. */
const RECORDED: Readonly<Record<string, { kind: 'file'; arg: string } | { kind: 'roots' }>> = {
  write_file: { kind: 'file', arg: 'path' },
  edit_file: { kind: 'file', arg: 'path' },
  run_command: { kind: 'roots' },
};

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

type Inflight =
  | { kind: 'file'; shadow: ShadowRepo; path: string; before: string | null; since: number; skip?: CheckpointSkip['reason'] }
  | { kind: 'roots'; trees: { shadow: ShadowRepo; tree: string; at: number }[] };

/**
 * A change, when its `before` was seen (`since`: a file tool's read, a command's first snapshot)
 * and when its `after` was (`at`: once the file tool wrote, when the command's second snapshot
 * began); `performance.now()`.
 */
interface Held {
  change: CheckpointChange;
  since: number;
  at: number;
}

interface Pending {
  changes: Held[];
  skipped: CheckpointSkip[];
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

  constructor(private readonly o: RecorderOptions) {}

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
    const p = (async () => ((await this.o.gitReady()) ? this.capture(how, c.args, c.ctx) : undefined))().catch(() => undefined);
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
      if (was) this.hold(c.ctx.sessionId, await this.compare(was, c.call, wrote, written));
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

  /** Deleted sessions: a step of theirs left unflushed holds nothing any more. */
  forget(ids: readonly string[]): void {
    for (const id of ids) this.steps.get(id)?.();
    for (const id of ids) this.steps.delete(id);
  }

  private async capture(how: (typeof RECORDED)[string], args: Record<string, unknown>, ctx: ToolContext): Promise<Inflight | undefined> {
    if (how.kind === 'roots') {
      const trees = await Promise.all(
        ctx.roots.map(async (root) => {
          const shadow = await this.o.shadows.of(root);
          const { tree, at } = await shadow.snapshot(this.o.maxFileBytes);
          return { shadow, tree, at };
        }),
      );
      return { kind: 'roots', trees };
    }
    // Synchronous on purpose: a step's calls run in parallel, and the tools' own file operations
    // (fsyncs among them) fill libuv's few threads; a read queued behind them would hold the call.
    const at = locate(ctx.roots, args[how.arg]);
    if (!at) return undefined; // refused by the tool anyway, or outside every root (full-access): not recorded
    const shadow = await this.o.shadows.of(at.root);
    const rel = shadow.relative(at.realPath);
    if (!rel) return undefined;
    const since = performance.now();
    // An ignored file is recorded too (amended 0059, s56): the tool names one file, read once under
    // the size cap, and what it overwrites (a `.env`, a local config) is the user's own, which no
    // commit of theirs holds. Only commands leave ignored files out (their snapshots would hash
    // whole ignored trees: `node_modules`).
    const before = this.readNow(shadow, at.realPath);
    if (before === undefined) return undefined;
    if (before === 'large') return { kind: 'file', shadow, path: at.realPath, before: null, since, skip: 'too-large' };
    return { kind: 'file', shadow, path: at.realPath, before, since };
  }

  /**
   * The file's blob id now (stored in the background), null when absent, 'large' over the cap,
   * undefined when not a regular file. Read through its folder pinned from the root, no link
   * followed (decision 0097): a command that swapped a folder on the way for a link to outside
   * the workspace makes this throw (PATH_CHANGED, ELOOP: the call goes unrecorded, as the tool
   * refuses too), never store a file outside as the workspace file's content.
   */
  private readNow(shadow: ShadowRepo, file: string): string | null | 'large' | undefined {
    let fd: number;
    try {
      fd = beneathSync(file, shadow.root, (target) => fs.openSync(target, READ_AS_IS));
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return null;
      throw e;
    }
    try {
      const st = fs.fstatSync(fd);
      if (!st.isFile()) return undefined;
      if (st.size > this.o.maxFileBytes) return 'large';
      return this.keep(shadow, fs.readFileSync(fd));
    } finally {
      fs.closeSync(fd);
    }
  }

  private async compare(was: Inflight, call: ToolCall, wrote: number, written?: string): Promise<Pending> {
    const out: Pending = { changes: [], skipped: [] };
    if (was.kind === 'file') {
      if (was.skip) {
        out.skipped.push({ path: was.path, reason: was.skip });
        return out;
      }
      // write_file wrote exactly its `content` when it succeeded: no need to read it back.
      const after = written !== undefined ? this.keep(was.shadow, Buffer.from(written, 'utf8')) : await this.read(was.shadow, was.path);
      if (after === 'large') out.skipped.push({ path: was.path, reason: 'too-large' });
      else if (after !== was.before)
        out.changes.push({
          change: recordedChange({ path: was.path, before: was.before, after }, was.shadow.root, call.id, call.name),
          since: was.since,
          at: wrote,
        });
      if (path.basename(was.path) === '.gitignore') was.shadow.forgetIgnores();
      return out;
    }
    for (const { shadow, tree, at } of was.trees) {
      const now = await shadow.snapshot(this.o.maxFileBytes);
      for (const d of await shadow.diff(tree, now.tree)) {
        out.changes.push({ change: recordedChange(d, shadow.root, call.id, call.name), since: at, at: now.at });
        if (path.basename(d.path) === '.gitignore') shadow.forgetIgnores();
      }
      for (const p of now.large) out.skipped.push({ path: p, reason: 'too-large' });
    }
    return out;
  }

  /** The file's blob id (stored), null when absent, 'large' over the cap. */
  private async read(shadow: ShadowRepo, file: string): Promise<string | null | 'large'> {
    let bytes: Buffer;
    try {
      bytes = await readWhole(file, shadow.root);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return null;
      throw e;
    }
    return this.keep(shadow, bytes);
  }

  /** The blob id of these bytes, stored in the background; 'large' over the cap. */
  private keep(shadow: ShadowRepo, bytes: Buffer): string | 'large' {
    return bytes.length > this.o.maxFileBytes ? 'large' : shadow.storeLater(bytes);
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

/**
 * A step's changes in the order they happened, each to the call that made it (decision 0070). A
 * command's snapshots see whatever changed in its roots while it ran, so a file tool of the same
 * step that wrote meanwhile shows in the command's diff too. When the command's diff of a file
 * ends at what a file tool wrote, the end is the tool's: the command's part, if any, ends where
 * the tool found the file (the command wrote it first), and comes just before it.
 *
 * A rewind goes back to the first change's `before` and expects the file at the last one's
 * `after`. In the order the afters were seen, the first `before` can be a later look than another
 * change's (one call's window inside another's: a second command's first snapshot caught a file
 * the first had only just created): the change whose `before` was seen first then leads its
 * file's list. At worst the last `after` is then not the file's, and a rewind asks rather than
 * restore a state that was never the starting point.
 */
function attribute(held: readonly Held[]): CheckpointChange[] {
  const byOrder = (a: Held, b: Held) => a.at - b.at;
  const tools = new Map<string, Held[]>();
  for (const h of [...held].sort(byOrder)) {
    if (RECORDED[h.change.tool]?.kind === 'file') tools.set(h.change.path, [...(tools.get(h.change.path) ?? []), h]);
  }
  const out: Held[] = [];
  for (const h of held) {
    const written = RECORDED[h.change.tool]?.kind === 'roots' ? tools.get(h.change.path) : undefined;
    if (!written?.some((t) => t.change.after === h.change.after)) {
      out.push(h);
      continue;
    }
    const first = written[0];
    if (h.change.before !== first.change.before) out.push({ change: { ...h.change, after: first.change.before }, since: h.since, at: first.at - 1e-3 });
  }
  out.sort(byOrder);
  const byPath = new Map<string, Held[]>();
  for (const h of out) byPath.set(h.change.path, [...(byPath.get(h.change.path) ?? []), h]);
  const leads = new Set<Held>();
  const tails = new Set<Held>();
  for (const list of byPath.values()) {
    if (list.length < 2) continue;
    const oldest = list.reduce((a, b) => (b.since < a.since ? b : a));
    const led = oldest !== list[0] && oldest.change.before !== list[0].change.before;
    if (led) leads.add(oldest);
    // A file tool's `at` is when its call returned, after the rename and its folder's fsync: a
    // command can write in between. The file as it is now says whose write came last.
    const now = blobNow(list[0].change.path, list[0].change.root);
    const last = list[list.length - 1];
    const ends =
      now === undefined || last.change.after === now
        ? undefined
        : list.find((h) => h !== last && h.change.after === now && !leads.has(h) && !(led && h === list[0]));
    if (ends) tails.add(ends);
  }
  // Each file's leading change moves to just before its file's first, its ending one to just after its last: the order elsewhere stays.
  return out.flatMap((h) => {
    if (leads.has(h) || tails.has(h)) return [];
    const list = byPath.get(h.change.path) ?? [];
    const lead = list[0] === h ? [...leads].find((l) => l.change.path === h.change.path) : undefined;
    const tail = list[list.length - 1] === h ? [...tails].find((t) => t.change.path === h.change.path) : undefined;
    return [...(lead ? [lead.change] : []), h.change, ...(tail ? [tail.change] : [])];
  });
}

/** A file's blob id now (null: absent), undefined when it cannot be read. Read only for a file two calls of one step changed. */
function blobNow(file: string, root: string): string | null | undefined {
  try {
    return blobId(readWholeSync(file, root));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR' ? null : undefined;
  }
}

/**
 * The real path a file tool's path argument names, and the root holding it (the longest): the
 * file's own real path when it exists, else its nearest existing folder's plus the rest.
 * Undefined when it is not a string or lies outside every root.
 */
export function locate(roots: readonly string[], p: unknown): { realPath: string; root: string } | undefined {
  if (typeof p !== 'string' || p === '' || p.includes('\0') || roots.length === 0) return undefined;
  const abs = path.resolve(roots[0], p);
  let real: string | undefined;
  try {
    real = fs.realpathSync.native(abs);
  } catch {
    const rest = [path.basename(abs)];
    for (let dir = path.dirname(abs); real === undefined; ) {
      try {
        real = path.join(fs.realpathSync.native(dir), ...rest);
      } catch {
        const up = path.dirname(dir);
        if (up === dir) return undefined;
        rest.unshift(path.basename(dir));
        dir = up;
      }
    }
  }
  const root = roots.filter((r) => isWithin(real, r)).sort((a, b) => b.length - a.length)[0];
  return root ? { realPath: real, root } : undefined;
}
