import * as path from 'node:path';
import type * as Acp from '@agentclientprotocol/sdk/unstable';
import { describeError } from '../errors';
import type { AcpChildren, AcpChildrenFactory } from './acp-children';
import { AcpLink, type KeptLink, type LinkSession } from './acp-link';
import { flushState, type MapState, mapState, mapUpdate, outcomeOf, usageOf } from './acp-map';
import { AgentExit, delay, linkCaps, processSpec, sessionMeta, untilExit } from './acp-open';
import { answerPermission, QuestionLine, summaryOf } from './acp-permission';
import { projectConfigRefusal } from './acp-project-config';
import type { AcpPhase, AcpProcessSource } from './acp-source';
import { claudeConfigDir, claudeInstructions, isClaudeAcp } from './claude-instructions';
import { childConfinement, namespaceMounts } from './namespace-mounts';
import { openPrivateTmp, type PrivateTmp, wantsPrivateTmp } from './private-tmp';
import { DEFAULT_GRACE_MS } from './process';
import { exitPhrase, idledOut, notFound, stderrNote } from './run';
import type { AcpAgentSettings } from './settings';
import type { RemoteOutcome, RemoteSink, RemoteTurnContext } from './types';

// One turn of an ACP child (issue 14, decision 0040): its process (or a kept link's session),
// `initialize`, `session/new` or `session/load`, the sandbox's mode, `session/prompt`; the
// agent's updates and permission questions on the way; a cancel; how a failure ends the turn.

/**
 * The SDK, loaded by the first ACP turn (decision 0068): building its schemas costs every
 * harness a tenth of a second or more, and most deployments configure no ACP agent.
 */
let acp: typeof Acp;

/** The SDK, loaded once (by a turn or a driver's `withLink`). */
export async function loadAcpSdk(): Promise<typeof Acp> {
  acp ??= await import('@agentclientprotocol/sdk/unstable');
  return acp;
}

/**
 * How long an agent may take to exit by itself once its stdin is closed, before its group gets
 * SIGTERM. acpx 0.19.1 waits 100 ms; claude-agent-acp leaves in ~30 ms, codex-acp takes 2 s
 * (and leaves at once on SIGTERM), so a longer wait is paid by every turn of such an agent.
 */
export const EOF_GRACE_MS = 100;

export class AcpTurn implements LinkSession {
  private readonly label: string;
  private readonly state: MapState;
  /** What the agent asked and was refused (its summary), for a turn it then cancels itself. */
  private refused: string | undefined;
  /** The link is the source's kept one: other children's sessions may be on it. */
  private shared = false;
  /** What `session/new` and `session/load` carry in `_meta` (`sessionMeta`), set once the agent has said who it is. */
  private meta: ReturnType<typeof sessionMeta> = {};
  /** Claude Code's config folder for a local agent (whose files are on this machine); undefined for a placed one. */
  private configDir: string | undefined;
  private sessionId: string | undefined;
  /** Updates are applied one after another, in the order they arrived. */
  private chain: Promise<void> = Promise.resolve();
  private chainError: unknown;
  private kids: AcpChildren | undefined;
  /** While `session/load` replays the history the log already holds: those updates are not appended again. */
  private replaying = false;
  /** When the phase under way started (`performance.now()`), for `AcpProcessSource.phase`. */
  private mark = 0;
  /** Ends the wait for this session's answers on a kept link after a cancel the agent did not answer in time. */
  private giveUp: ((err: Error) => void) | undefined;
  private readonly givenUp = new Promise<never>((_, reject) => (this.giveUp = reject));
  /** Set when a cancel on a kept link got no answer in time: the session was given up on, not stopped. */
  private abandoned = false;
  /** The turn is over: a cancel still waiting out its grace has nothing left to do. */
  private over = false;
  /** The agent's permission questions (its sub-sessions' too) go to the human one at a time. */
  private readonly questions = new QuestionLine();
  /** Aborted when the turn is over: a question still open then is withdrawn from the human (answered `cancelled`). */
  private readonly ended = new AbortController();

  constructor(
    private readonly settings: AcpAgentSettings,
    private readonly program: string,
    private readonly ctx: RemoteTurnContext,
    private readonly sink: RemoteSink,
    private readonly secrets: readonly string[],
    private readonly kept: KeptLink,
    private readonly children?: AcpChildrenFactory,
    private readonly source?: AcpProcessSource,
    /** The store's folder, for a local agent's private temp folder (`private-tmp.ts`); absent: none is made. */
    private readonly storeDir?: string,
  ) {
    this.label = `The ACP agent "${settings.name}"`;
    this.state = mapState(sink);
    this.givenUp.catch(() => undefined);
  }

  async run(): Promise<RemoteOutcome> {
    const { ctx, settings } = this;
    let opened: Awaited<ReturnType<AcpProcessSource['open']>> | undefined;
    try {
      opened = await this.source?.open(ctx);
    } catch (err) {
      return ctx.signal.aborted ? { stopReason: 'interrupted' } : { stopReason: 'error', error: describeError(err) };
    }
    this.mark = performance.now();
    const spec = await processSpec(settings, opened, ctx.cwd, this.secrets);
    if (!spec) {
      const wanted = opened?.command ?? settings.command;
      return notFound(this.label, wanted, opened ? "fix the placement's settings" : 'fix its "command" in arbor.remote.acp');
    }
    await loadAcpSdk();
    if (ctx.signal.aborted) return { stopReason: 'interrupted' };
    this.shared = !!opened?.keep;
    // A process source's agent works on another machine's files (and is Arbor there): only a local agent is given what is read here.
    this.configDir = opened ? undefined : claudeConfigDir(spec.env);
    // A confined local agent's temp folder is its own (decision 0122, amended s60); a placed one's machine is not this one.
    let tmp: PrivateTmp | undefined;
    if (!opened && this.storeDir && wantsPrivateTmp(ctx.sandbox))
      try {
        tmp = await openPrivateTmp(this.storeDir, ctx.childId);
      } catch (err) {
        return { stopReason: 'error', error: describeError(err) };
      }
    if (tmp) Object.assign(spec.env, tmp.env);
    // A confined local agent's namespace keeps its roots' protected names and the store from change (decision 0036, amended s60).
    const confine = !opened && spec.bwrap ? childConfinement(ctx, this.storeDir, spec.env, tmp?.dir) : undefined;
    if (confine) spec.mounts = await namespaceMounts(confine);
    const make = () => new AcpLink(acp, spec, opened?.preamble, linkCaps(!!this.children));
    const link = this.shared ? await this.kept.take(make) : make();

    // A link of its own carries this turn alone: everything on it is this turn's (its own sub-sessions too).
    if (!this.shared) link.route('*', this);
    else if (ctx.resume) link.route(ctx.resume, this); // session/load's replay is counted as such
    const onAbort = () => void this.cancel(link);
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    try {
      return await this.converse(link, opened?.sessionCwd);
    } catch (err) {
      return await this.failure(err, link);
    } finally {
      this.over = true;
      this.ended.abort();
      ctx.signal.removeEventListener('abort', onAbort);
      await this.chain;
      await flushState(this.state).catch(() => undefined);
      await this.kids?.close(ctx.signal.aborted ? 'interrupted' : 'completed');
      link.unroute(this);
      if (!this.shared) {
        await link.close(EOF_GRACE_MS);
        await tmp?.remove(); // after the agent's group is gone
      } else {
        this.kept.release();
        // A session that did not answer its cancel: the process goes only when nobody else is on it.
        if (this.abandoned && link.idle) await link.close(EOF_GRACE_MS);
      }
    }
  }

  /** An update of this turn's session, or of a sub-session of it. */
  update(n: Acp.SessionNotification): Promise<void> {
    // Updates arrive in order with the answer to `session/load`: before it, they are history the log has.
    if (this.replaying) {
      this.sink.skipped('replayed');
      return Promise.resolve();
    }
    this.chain = this.chain.then(() => this.onUpdate(n)).catch((err) => void (this.chainError ??= err));
    return this.chain;
  }

  skipped(kind: string): void {
    this.sink.skipped(kind);
  }

  async permission(params: Acp.RequestPermissionRequest): Promise<Acp.RequestPermissionResponse> {
    await this.chain; // the tool call it asks about is in the log first
    // One of the agent's own sub-sessions may ask: the human sees that mirror as the asker.
    const own = params.sessionId === this.sessionId;
    if (own) await this.state.calls.asked(params.toolCall);
    // A question that leaves out what kind of call it is about is asked as the kind the call was announced with.
    const kind = params.toolCall.kind ?? (own ? (this.state.calls.kindOf(params.toolCall.toolCallId) as Acp.ToolKind | undefined) : undefined);
    if (kind) params = { ...params, toolCall: { ...params.toolCall, kind } };
    const { response: answer, refusal } = await answerPermission(params, {
      childId: (own ? undefined : this.kids?.sessionOf(params.sessionId)) ?? this.ctx.childId,
      approvalPolicy: this.ctx.approvalPolicy,
      ...(this.ctx.approval ? { approval: this.ctx.approval } : {}),
      signal: AbortSignal.any([this.ctx.signal, this.ended.signal]),
      program: this.program,
      line: this.questions,
      sandbox: this.ctx.sandbox,
      ...(this.ctx.ceiling ? { ceiling: this.ctx.ceiling } : {}),
    });
    const chosen =
      answer.outcome.outcome === 'selected' ? params.options.find((o) => o.optionId === (answer.outcome as { optionId: string }).optionId) : undefined;
    if (own && !this.ctx.signal.aborted && !chosen?.kind.startsWith('allow')) {
      this.refused = (params.toolCall.title ?? params.toolCall.kind ?? 'a tool call').slice(0, 500);
      // Recorded like a built-in tool's refusal (decision 0015): the outcome reads "completed · N refused".
      this.sink.refused(params.toolCall.toolCallId, { outcome: refusal ?? 'denied', summary: summaryOf(params.toolCall) });
    }
    return answer;
  }

  private async converse(link: AcpLink, sessionCwd?: string): Promise<RemoteOutcome> {
    const { ctx, sink } = this;
    const agent = link.conn.agent;
    const init = await this.untilExit(link.initialize(), link);
    this.phase('start');
    const cwd = sessionCwd ?? path.resolve(ctx.cwd);
    const unsafe = projectConfigRefusal(init.agentInfo?.name, this.label, ctx.sandbox, cwd);
    if (unsafe) return { stopReason: 'error', error: unsafe };
    // On a kept link that already has the child's session (its last turn ran on it), nothing is loaded.
    const open = this.shared && ctx.resume && link.known.has(ctx.resume) ? { sessionId: ctx.resume, modes: link.known.get(ctx.resume) } : undefined;
    // The instructions go only to Claude Code's adapter (no other agent reads them), and are read
    // only when its session opens here: once per child session (a local agent's child is one-shot,
    // one turn; a placed child's later turns are given none).
    const dir = open || ctx.sandbox === 'full-access' || !isClaudeAcp(init.agentInfo?.name) ? undefined : this.configDir;
    this.meta = sessionMeta(ctx.sandbox, dir === undefined ? '' : claudeInstructions(ctx.sandbox, ctx.cwd, dir));
    const loaded = open ?? (this.source && ctx.resume ? await this.load(link, ctx.resume, cwd) : undefined);
    const created = loaded ?? (await this.untilExit(agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [], ...this.meta }), link));
    this.sessionId = created.sessionId;
    if (this.shared && created.sessionId !== ctx.resume) link.route(created.sessionId, this);
    link.known.set(created.sessionId, created.modes ?? undefined);
    // The program's session recorded (durable) while its mode is set there: both before the prompt.
    const recorded = loaded
      ? undefined
      : sink.external({
          program: this.program,
          ...(init.agentInfo?.version ? { version: `${init.agentInfo.name} ${init.agentInfo.version}` } : {}),
          externalId: created.sessionId,
          ...link.proc.identity,
        });
    // Awaited below; until then a failed append must not be an unhandled rejection (Node ends the process on one).
    recorded?.catch(() => undefined);
    if (this.children)
      this.kids = this.children(ctx, (id) => agent.notify(acp.methods.agent.session.cancel, { sessionId: id }), this.program, this.sink.bounds);
    let refused: RemoteOutcome | undefined;
    try {
      refused = await this.setMode(link, created);
    } catch (err) {
      await recorded?.catch(() => undefined); // (the mode's failure is the one said; the record has ended either way)
      throw err;
    }
    await recorded;
    this.phase('session');
    if (refused) return refused;
    if (ctx.signal.aborted) return { stopReason: 'interrupted' };
    const resp = await this.untilExit(
      agent.request(acp.methods.agent.session.prompt, { sessionId: created.sessionId, prompt: [{ type: 'text', text: ctx.prompt }] }),
      link,
    );
    await this.chain;
    this.phase('prompt');
    if (this.chainError) throw this.chainError;
    const usage = usageOf(resp.usage);
    if (usage) sink.usage(usage);
    // Codex's adapter ends the whole turn `cancelled` when a permission is refused: a refusal, not an interrupt of ours.
    if (resp.stopReason === 'cancelled' && !ctx.signal.aborted)
      return {
        stopReason: 'error',
        error: this.refused
          ? `${this.label} stopped its turn after Arbor refused what it asked permission for ("${this.refused}"); the child may not do that under its approval policy.`
          : `${this.label} cancelled its own turn.`,
      };
    return outcomeOf(resp, this.label);
  }

  /**
   * The child's session on the other side again (a follow-up, a reconnect after the link
   * dropped): `session/load` replays its history as updates, which the log already holds, so
   * none is appended; undefined when the other side no longer has it (a new session then).
   */
  private async load(link: AcpLink, sessionId: string, cwd: string): Promise<Acp.NewSessionResponse | undefined> {
    this.replaying = true;
    try {
      const r = await this.untilExit(link.conn.agent.request(acp.methods.agent.session.load, { sessionId, cwd, mcpServers: [], ...this.meta }), link);
      return { sessionId, ...(r.modes ? { modes: r.modes } : {}) };
    } catch (err) {
      if (err instanceof acp.RequestError) return undefined;
      throw err;
    } finally {
      this.replaying = false;
    }
  }

  /** A phase is over: the source hears of it, and the next one starts now. */
  private phase(name: AcpPhase): void {
    const now = performance.now();
    this.source?.phase?.(this.ctx.childId, name, this.mark, now);
    this.mark = now;
  }

  /** The child's sandbox as the agent's own mode, when a table names one; a mode it does not offer refuses the turn. */
  private async setMode(link: AcpLink, created: Acp.NewSessionResponse): Promise<RemoteOutcome | undefined> {
    const modeId = this.settings.modes?.[this.ctx.sandbox];
    if (!modeId) return undefined;
    const offered = created.modes?.availableModes.map((m) => m.id) ?? [];
    if (!offered.includes(modeId))
      return {
        stopReason: 'error',
        error: `UNSUPPORTED_SANDBOX: ${this.label} does not offer the mode "${modeId}" that arbor.remote.acp maps the ${this.ctx.sandbox} sandbox to (it offers: ${offered.join(', ') || 'no modes'}), so the task was not run. Fix the agent's "modes" table.`,
      };
    if (created.modes?.currentModeId !== modeId) {
      await this.untilExit(link.conn.agent.request(acp.methods.agent.session.setMode, { sessionId: created.sessionId, modeId }), link);
      if (created.modes) link.known.set(created.sessionId, { ...created.modes, currentModeId: modeId });
    }
    return undefined;
  }

  private async onUpdate(n: Acp.SessionNotification): Promise<void> {
    if (n.sessionId !== this.sessionId) {
      if (this.kids) await this.kids.update(n.sessionId, n.update);
      else this.sink.skipped('other-session');
      return;
    }
    if (n.update.sessionUpdate === 'subagent_update') {
      if (this.kids) await this.kids.announce(n.update);
      else this.sink.skipped('subagent_update');
      return;
    }
    await mapUpdate(n.update, this.state);
  }

  /**
   * `session/cancel`, a short wait for the agent's `cancelled`, then its group is killed — unless
   * the link is a kept one: other children's sessions are on it, so only this turn stops waiting.
   */
  private async cancel(link: AcpLink): Promise<void> {
    if (this.sessionId) await link.conn.agent.notify(acp.methods.agent.session.cancel, { sessionId: this.sessionId }).catch(() => undefined);
    await delay(this.settings.graceMs ?? DEFAULT_GRACE_MS);
    if (!this.shared) return void (await link.proc.stop());
    if (this.over) return; // it answered the cancel in time
    this.abandoned = true;
    if (this.sessionId) link.known.delete(this.sessionId);
    this.giveUp?.(new Error('the agent did not answer session/cancel in time'));
  }

  /** A request's answer, or the agent's exit as an error (or the cancel given up on). */
  private untilExit<T>(p: Promise<T>, link: AcpLink): Promise<T> {
    return untilExit(p, link, this.givenUp);
  }

  private async failure(err: unknown, link: AcpLink): Promise<RemoteOutcome> {
    if (this.ctx.signal.aborted) return { stopReason: 'interrupted' };
    const proc = link.proc;
    const exit = await Promise.race([proc.exited, delay(500).then(() => undefined)]);
    const tail = stderrNote(this.label, proc);
    if (proc.idledOut) return idledOut(this.label, this.settings.idleTimeoutMs, tail);
    if (err instanceof acp.RequestError && err.code === -32000)
      return {
        stopReason: 'error',
        error: `ACP_AUTH_REQUIRED: ${this.label} wants to be authenticated before it works (${err.message}). Arbor does not log in for it: sign in with the agent's own command once, or give it its credentials in the "env" of its arbor.remote.acp entry.${tail}`,
      };
    // The connection closing is how an exit shows first: the exit is the story.
    const exited = err instanceof AgentExit ? err.message : exit && !exit.spawnError ? `exited (${exitPhrase(exit)})` : undefined;
    // A placed child's process is the link to it: its exit, not ours, is the link dropping (the log stays here).
    // (A process that could not start at all is no dropped link: that is said as it is.)
    if (this.source && !exit?.spawnError && (exited || !(err instanceof acp.RequestError))) return this.source.dropped(`${exited ?? describe(err)}${tail}`);
    const what = exited ? `${this.label} ${exited} before it finished its turn.` : `${this.label} failed: ${describe(err)}.`;
    return { stopReason: 'error', error: `${what}${tail}` };
  }
}

function describe(err: unknown): string {
  if (err instanceof acp.RequestError) return `${err.message} (JSON-RPC error ${err.code})`;
  return describeError(err);
}
