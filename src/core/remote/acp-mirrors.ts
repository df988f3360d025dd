import { randomUUID } from 'node:crypto';
import * as path from 'node:path';
import type * as acp from '@agentclientprotocol/sdk/unstable';
import { SessionWriter } from '../agent/session-writer';
import type { MessageSource, StopReason } from '../session/events';
import { headerFrom } from '../session/fork';
import { readMessageSource } from '../session/message-source';
import { Session } from '../session/session';
import type { Store } from '../store/store';
import type { MirrorRegistry } from '../subagent/mirrors';
import { countSkipped, cutOf, REMOTE_BOUNDS, TurnBounds } from '../subagent/remote-bounds';
import { blockText } from './acp-calls';
import type { AcpChildren, AcpChildrenFactory } from './acp-children';
import { flushState, type MapState, mapState, mapUpdate, stopOutcome } from './acp-map';
import { record, str } from './run';
import { SessionSink } from './sink';
import type { RemoteOutcome, RemoteTurnContext } from './types';

/** What mirrors need of the harness: its store, the live registry every status reader asks, and its views. */
export interface MirrorHost {
  store: Store;
  registry: MirrorRegistry;
  /** Where a mirror's streamed text goes (the harness's change stream); its events reach it through the store. */
  streamOf(id: string): (kind: 'text' | 'reasoning', text: string) => void;
  /** How long a cancelled sub-session may take to say it stopped before its turn is closed here (default 3 s). */
  cancelWaitMs?: number;
}

/**
 * An ACP agent's own sub-sessions as mirrors (decision 0041): each one it announces with
 * `subagent_update` becomes a session of Arbor's tree under the remote child (or under the
 * mirror it was announced on), with a descriptor, a `subagent/remote` naming its ACP session
 * and `announcedBy`, and a transcript mapped from its updates the way the child's own are.
 */
export function acpMirrors(host: MirrorHost): AcpChildrenFactory {
  return (ctx, cancel, program, bounds) => new AcpMirrors(host, ctx, cancel, program, bounds ?? new TurnBounds());
}

/** One sub-session shown in the tree. */
interface Mirror {
  id: string;
  externalId: string;
  parent: string;
  writer: SessionWriter;
  delta: ReturnType<MirrorHost['streamOf']>;
  title?: string;
  cancellable: boolean;
  /** The open turn, its sink and chunk buffer (a new sink per turn: call ids are unique per turn). */
  turn?: { id: string; sink: SessionSink; st: MapState };
  /** User message chunks gathered (one message until something else arrives), and where they came from. */
  user?: { text: string; source: MessageSource; messageId?: string };
  /** Called when the open turn ends (a cancel waits for it). */
  waiters: (() => void)[];
  /** Turns opened and labels changed in this child turn (bounded: REMOTE_BOUNDS.subTurns, .relabels). */
  turns: number;
  relabels: number;
}

/** Updates that are work: one that arrives with no turn open opens one (the agent said nothing of its state). */
const WORK = new Set(['agent_message_chunk', 'agent_thought_chunk', 'tool_call']);
/** Updates a mirror's log takes (the rest are counted, as for the child itself). */
const TAKEN = new Set([...WORK, 'tool_call_update']);

type StateHandler = (m: Mirror, state: acp.StateUpdate) => Promise<void>;

class AcpMirrors implements AcpChildren {
  /** ACP session id → mirror. */
  private readonly mirrors = new Map<string, Mirror>();
  /** Announcements and updates are applied one after another; a cancel's fallback close joins the same line. */
  private chain: Promise<void> = Promise.resolve();
  private closed = false;
  private readonly owner: string;
  /** Updates of sub-sessions never announced (or of kinds a mirror does not take), counted. */
  readonly skipped: Record<string, number> = {};

  constructor(
    private readonly host: MirrorHost,
    private readonly ctx: RemoteTurnContext,
    private readonly cancelExternal: (externalId: string) => Promise<void>,
    private readonly program: string,
    /** The child's turn's bounds: what its sub-sessions keep counts against it (decision 0044). */
    private readonly bounds: TurnBounds,
  ) {
    this.owner = `the ACP agent "${program.replace(/^acp:/, '')}"`;
  }

  announce(update: acp.SubagentUpdate): Promise<void> {
    return this.serial(() => this.onAnnounce(update, this.ctx.childId));
  }

  update(externalId: string, update: acp.SessionUpdate): Promise<void> {
    return this.serial(() => this.onUpdate(externalId, update));
  }

  close(how: 'completed' | 'interrupted'): Promise<void> {
    return this.serial(() => this.onClose(how));
  }

  sessionOf(externalId: string): string | undefined {
    return this.mirrors.get(externalId)?.id;
  }

  private serial(task: () => Promise<void>): Promise<void> {
    const p = this.chain.then(task);
    this.chain = p.catch(() => undefined);
    return p;
  }

  private count(kind: string): void {
    countSkipped(this.skipped, kind);
  }

  /** A state snapshot as the mirror's turn: working opens it, idle ends it with the reported stop reason. */
  private readonly states: Record<string, StateHandler> = {
    running: (m) => this.open(m, 'running'),
    requires_action: (m) => this.open(m, 'approval'),
    idle: async (m, state) => {
      await this.end(m, idleOutcome(state, this.owner));
      this.live(m, 'idle');
    },
  };

  private async onAnnounce(u: acp.SubagentUpdate, parentId: string): Promise<void> {
    if (this.closed || typeof u.sessionId !== 'string' || !u.sessionId || u.sessionId.length > REMOTE_BOUNDS.idChars) return this.count('bad-announcement');
    let m = this.mirrors.get(u.sessionId);
    const title = titleOf(u.title);
    if (!m) {
      // A bounded tree (decision 0044): past the cap, a new sub-session is counted, not shown (its updates are skipped).
      if (this.mirrors.size >= REMOTE_BOUNDS.subSessions) return this.count('too-many-sub-sessions');
      m = await this.create(u, parentId);
    } else if (title && title !== m.title) {
      // A bounded log (decision 0044): past so many renames, a new title is counted, not written.
      if (m.relabels >= REMOTE_BOUNDS.relabels) this.count('too-many-relabels');
      else {
        m.relabels++;
        // The label is the descriptor's (the last one wins): a renamed sub-session is relabelled.
        m.title = title;
        await m.writer.append({ type: 'subagent/descriptor', version: 2, mode: 'one-shot', provider: this.program, label: title });
      }
    }
    if (u.capabilities !== undefined) m.cancellable = !!u.capabilities?.cancel;
    // The agent names the state: an own property of the table, or unknown (`__proto__` is not a state).
    const name = record(u.state) ? u.state.state : undefined;
    const handler = typeof name === 'string' && Object.hasOwn(this.states, name) ? this.states[name] : undefined;
    if (handler) await handler(m, u.state!);
    else this.live(m); // capabilities may have changed; an unknown or cleared state asserts nothing
  }

  /** The mirror's session: published with its descriptor and identity before anything of its own. */
  private async create(u: acp.SubagentUpdate, parentId: string): Promise<Mirror> {
    const parent = this.host.store.header(parentId);
    if (!parent) throw new Error(`the session ${parentId} a sub-session was announced under is not in the store`);
    // Full width (122 random bits): an agent announcing sub-sessions by the thousand never gets two the same id.
    const id = `${parentId}.${randomUUID()}`;
    const title = titleOf(u.title);
    const cwd = typeof u.cwd === 'string' && path.isAbsolute(u.cwd) ? { cwd: u.cwd } : {};
    const header = headerFrom(
      { ...parent, ...cwd },
      { id, origin: 'subagent', parentSession: parentId, delegationDepth: (parent.delegationDepth ?? 0) + 1, title },
    );
    const writer = new SessionWriter(Session.create(header), this.host.store, { published: false });
    await writer.append({ type: 'subagent/descriptor', version: 2, mode: 'one-shot', provider: this.program, ...(title ? { label: title } : {}) });
    await writer.append({ type: 'subagent/remote', program: this.program, externalId: u.sessionId, announcedBy: this.ctx.childId });
    const delta = this.host.streamOf(id);
    await writer.publish();
    const m: Mirror = {
      id,
      externalId: u.sessionId,
      parent: parentId,
      writer,
      delta,
      ...(title ? { title } : {}),
      cancellable: false,
      waiters: [],
      turns: 0,
      relabels: 0,
    };
    this.mirrors.set(u.sessionId, m);
    this.live(m);
    return m;
  }

  private async onUpdate(externalId: string, u: acp.SessionUpdate): Promise<void> {
    const m = this.closed ? undefined : this.mirrors.get(externalId);
    if (!m) return this.count('unknown-session');
    if (u.sessionUpdate === 'subagent_update') return this.onAnnounce(u, m.id);
    if (u.sessionUpdate === 'user_message_chunk') return this.userChunk(m, u);
    if (!TAKEN.has(u.sessionUpdate)) return this.count(`ignored:${u.sessionUpdate}`);
    await this.flushUser(m);
    if (!m.turn && WORK.has(u.sessionUpdate)) await this.open(m, 'running');
    if (!m.turn) return this.count('update-outside-a-turn');
    await mapUpdate(u, m.turn.st);
  }

  /**
   * What was said to the sub-session (its task, a notice): one user message per run of
   * chunks. Arbor's own `arbor acp` says in `_meta.arbor` what kind of notice it was.
   */
  private async userChunk(m: Mirror, u: acp.ContentChunk): Promise<void> {
    const messageId = typeof u.messageId === 'string' ? u.messageId : undefined;
    const source = this.sourceOf(m, u);
    // Another message (ACP: a new messageId; Arbor's: another origin) starts a message of its own.
    if (m.user && (messageId !== m.user.messageId || JSON.stringify(source) !== JSON.stringify(m.user.source))) await this.flushUser(m);
    if (!m.user) {
      if (m.turn) {
        await flushState(m.turn.st);
        await m.turn.sink.flush(); // what the agent said before stays before it
      }
      m.user = { text: '', source, ...(messageId ? { messageId } : {}) };
    }
    // What was said to it counts against the turn too (decision 0044).
    const { kept, dropped } = this.bounds.take(blockText(u.content));
    if (dropped) this.count('user-text-cut');
    m.user.text += kept;
  }

  /**
   * Where a mirrored message came from: what another Arbor says in `_meta.arbor` when it makes a
   * whole source (never `user`: nobody types into a mirror), its author's id mapped to the
   * mirror's (else the mirror's parent); anything else is a task from the parent.
   */
  private sourceOf(m: Mirror, u: acp.ContentChunk): MessageSource {
    const meta = record(u._meta) && record(u._meta.arbor) ? u._meta.arbor : {};
    const local = (id: unknown) => this.mirrors.get(str(id))?.id ?? m.parent;
    const read = readMessageSource(meta.source, meta);
    if (!read || read.kind === 'user') return { kind: 'delegation', fromSession: local(meta.fromSession) };
    return 'fromSession' in read ? { ...read, fromSession: local(read.fromSession) } : read;
  }

  private async flushUser(m: Mirror): Promise<void> {
    const user = m.user;
    if (!user) return;
    m.user = undefined;
    if (user.text) await m.writer.append({ type: 'user/message', text: user.text, source: user.source });
  }

  /** It works: the registry says so first (no reader ever sees an open turn that nothing runs), then its turn opens. */
  private async open(m: Mirror, state: 'running' | 'approval'): Promise<void> {
    this.live(m, state);
    if (m.turn) return;
    // A bounded log (decision 0044): a sub-session that goes idle and runs again without end opens so many turns, then its updates are counted.
    if (m.turns >= REMOTE_BOUNDS.subTurns) return this.count('too-many-sub-turns');
    m.turns++;
    // The turn is the mirror's before anything is awaited: a cancel from now on finds it.
    const id = randomUUID();
    const sink = new SessionSink(m.writer, 'acp', this.program, m.delta, this.bounds);
    m.turn = { id, sink, st: mapState(sink) };
    const user = m.user;
    m.user = undefined;
    // Appends are applied in call order (each validated at once), then awaited together.
    const writes = user?.text ? [m.writer.append({ type: 'user/message', text: user.text, source: user.source })] : [];
    writes.push(m.writer.append({ type: 'turn/start', turnId: id }));
    await Promise.all(writes);
  }

  /** The open turn ends: what is buffered is written, calls left open are closed, then `turn/end`. */
  private async end(m: Mirror, outcome: RemoteOutcome, turnId = m.turn?.id): Promise<void> {
    await this.flushUser(m);
    const t = m.turn;
    if (!t || t.id !== turnId) return;
    await flushState(t.st);
    await t.sink.finish();
    m.turn = undefined;
    await m.writer.append({ type: 'turn/end', turnId: t.id, stopReason: outcome.stopReason, ...(outcome.error ? { error: outcome.error } : {}) });
    for (const fn of m.waiters.splice(0)) fn();
  }

  /** What the registry knows of the mirror now (every status reader asks there). */
  private live(m: Mirror, state: 'running' | 'approval' | 'idle' = m.turn ? 'running' : 'idle'): void {
    this.host.registry.set(m.id, {
      parent: m.parent,
      running: state !== 'idle',
      awaitingApproval: state === 'approval',
      name: m.title ? `"${m.title}"` : m.id,
      owner: this.owner,
      ...(m.cancellable ? { cancel: () => this.cancel(m) } : {}),
    });
  }

  /**
   * The human stops this sub-session alone: `session/cancel` with its id, then its turn ends
   * when the agent says it went idle — or, if it does not say so in time, here (interrupted).
   */
  private async cancel(m: Mirror): Promise<void> {
    const turnId = m.turn?.id;
    if (!turnId) return;
    const ended = new Promise<void>((resolve) => m.waiters.push(resolve));
    await this.cancelExternal(m.externalId).catch(() => undefined);
    const wait = this.host.cancelWaitMs ?? 3000;
    let timer: NodeJS.Timeout | undefined;
    const late = await Promise.race([ended.then(() => false), new Promise<boolean>((r) => (timer = setTimeout(() => r(true), wait)))]);
    clearTimeout(timer);
    if (!late) return;
    await this.serial(async () => {
      // The child's turn ended first (its close ended this one too), or the agent already went on to another turn.
      if (this.closed || m.turn?.id !== turnId) return;
      await this.end(
        m,
        { stopReason: 'interrupted', error: `${this.owner} did not say within ${Math.round(wait / 1000)} s that it stopped this sub-session.` },
        turnId,
      );
      this.live(m, 'idle');
    });
  }

  /** The child's turn is over: a sub-session still working ends with it; nothing live is known of any of them any more. */
  private async onClose(how: 'completed' | 'interrupted'): Promise<void> {
    this.closed = true;
    const stopReason: StopReason = how === 'interrupted' && this.ctx.signal.reason === 'cancelled' ? 'cancelled' : 'interrupted';
    const error = how === 'completed' ? `${this.owner} ended its turn while this sub-session was still working.` : undefined;
    for (const m of this.mirrors.values()) {
      await this.end(m, { stopReason, ...(error ? { error } : {}) });
      this.host.registry.delete(m.id);
    }
  }
}

/** A sub-session's title as its label: one line of at most REMOTE_BOUNDS.titleChars characters, or none. */
function titleOf(raw: unknown): string | undefined {
  if (typeof raw !== 'string') return undefined;
  const line = raw.replace(/\s+/g, ' ').trim();
  if (!line) return undefined;
  return line.length <= REMOTE_BOUNDS.titleChars ? line : `${cutOf(line, REMOTE_BOUNDS.titleChars - 1)}…`;
}

/** How an idle state ends the turn: ACP's stop reasons as for the child's own prompt; none reported reads as finished. */
function idleOutcome(state: acp.StateUpdate, owner: string): RemoteOutcome {
  const reason = str((state as { stopReason?: unknown }).stopReason);
  if (reason === 'error') {
    const err = (state as { error?: unknown }).error;
    const msg = record(err) ? str(err.message) : '';
    const said = msg.length > 2000 ? `${msg.slice(0, 2000)}…` : msg;
    return { stopReason: 'error', error: `${owner} reported that this sub-session failed${said ? `: ${said}` : ''}.` };
  }
  return stopOutcome(reason, `${owner} stopped this sub-session`) ?? { stopReason: 'completed' };
}
