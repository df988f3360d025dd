import type { Agent } from '../agent/agent';
import { describeError } from '../errors';
import type { SessionEvent, WorkflowData, WorkflowStatus } from '../session/events';
import type { StartGate } from '../subagent/gates';
import type { SubagentRuntime } from '../subagent/runtime';
import { SubagentError, type SubagentRun } from '../subagent/types';
import type { FromChild } from './bridge';
import type { Confinement } from './confine';
import { scriptCode, WorkflowError, type WorkflowErrorCode } from './errors';
import { agentRequest } from './input';
import { type ExitCause, Isolate } from './isolate';
import type { RunLimits, WorkflowDeployment } from './limits';
import { Slots, type Ticket } from './slots';
import type { SpareIsolates } from './spare';

/** How a run ended, as the tool reports it. */
export interface RunOutcome {
  runId: string;
  status: WorkflowStatus;
  /** The script's return value as JSON text (completed runs, and one that returned too early: AGENTS_UNFINISHED). */
  resultJson?: string;
  code?: WorkflowErrorCode;
  error?: string;
  line?: number;
  agents: number;
}

const EXIT_CODES: Record<ExitCause, WorkflowErrorCode> = { oom: 'SCRIPT_OOM', stalled: 'SCRIPT_STALLED', exited: 'SCRIPT_EXITED', killed: 'CANCELLED' };
const EXIT_TEXT: Record<ExitCause, string> = {
  oom: 'The script ran out of memory and its process was ended.',
  stalled: 'The script awaited a promise that nothing can settle (no agent() call was pending); it was ended.',
  exited: 'The script process exited before the script returned (process.exit() or a crash).',
  killed: 'The script process was ended.',
};

const tokensOf = (events: readonly SessionEvent[]): number =>
  events.reduce((n, e) => n + (e.type === 'assistant/message' && e.usage ? e.usage.promptTokens + e.usage.completionTokens : 0), 0);

/**
 * One workflow run: its script process, its `agent()` children (real one-shot children of
 * the parent through the subagent runtime), its limits, and its durable `workflow/*`
 * events in the parent's log. `end()` is the one way out, whatever the cause.
 */
export class Run {
  /** Armed wall clocks in this host (leak checks). */
  static wallClocks = 0;
  readonly outcome: Promise<RunOutcome>;
  private resolveOutcome!: (o: RunOutcome) => void;
  private isolate?: Isolate;
  private readonly slots: Slots;
  /** Children that may exist at once, queued or running: twice the concurrency (decision 0102). */
  private readonly ahead: Slots;
  private readonly abort = new AbortController();
  /** Children created and not yet disposed (queued at the gate or running): the run's end cancels them. */
  private readonly created = new Map<number, SubagentRun>();
  /** Indexes of the children holding a slot (started, not done). */
  private readonly running = new Set<number>();
  /** Woken when no child holds a slot (`roomFor`). */
  private readonly drained: (() => void)[] = [];
  private readonly tasks = new Set<Promise<void>>();
  private wallTimer?: NodeJS.Timeout;
  private ended = false;
  /**
   * How its children still running end when it ends: `interrupted` when a human's Stop of the
   * parent ended it (as the Stop ends every child it reaches: one made while the Stop went reads
   * the same, and what it kept waits across a restart, decision 0011), else `cancelled`.
   */
  private childStop: 'interrupted' | 'cancelled' = 'cancelled';
  private requested = 0;
  private children = 0;
  private phases = 0;
  private logs = 0;
  private logsDropped = 0;
  private tokens = 0;
  /** Children still running when the run ended (cancelled by the end). */
  private cutShort = 0;

  constructor(
    readonly id: string,
    readonly parent: Agent,
    private readonly rt: SubagentRuntime,
    readonly limits: RunLimits,
    private readonly d: WorkflowDeployment,
    private readonly confinement: Confinement = { kind: 'none', reason: 'not asked for' },
    private readonly spares?: SpareIsolates,
  ) {
    this.slots = new Slots(limits.concurrency);
    this.ahead = new Slots(2 * limits.concurrency);
    this.outcome = new Promise((r) => (this.resolveOutcome = r));
  }

  get isEnded(): boolean {
    return this.ended;
  }

  /** Agents started and running now (for views and leak checks). */
  get counts(): { agents: number; running: number } {
    return { agents: this.children, running: this.running.size };
  }

  async start(script: string, args: unknown): Promise<void> {
    // Ended before it started (an interrupt, a cancel or the harness's close while `workflow/start`
    // was written): no wall clock to arm (nothing would clear it) and no process to start.
    if (this.ended) return;
    this.wallTimer = setTimeout(
      () => void this.end('failed', 'WALL_CLOCK', `The workflow ran past its wall clock (${Math.round(this.limits.wallClockMs / 1000)} s).`),
      this.limits.wallClockMs,
    );
    Run.wallClocks++;
    let isolate = this.spawn(true);
    if (!(await isolate.ready) && !this.ended) {
      // A Node that refuses the permission flags: run without them (still a process of its own, empty env).
      isolate = this.spawn(false);
      if (!(await isolate.ready))
        return void this.end('failed', 'SCRIPT_EXITED', `The script process could not start${isolate.stderrTail ? `: ${isolate.stderrTail}` : '.'}`);
    }
    if (this.ended) return isolate.kill();
    isolate.send({ op: 'start', script, args: args ?? null });
  }

  private spawn(permission: boolean): Isolate {
    const key = { limits: this.d.isolate, permission, confinement: this.confinement };
    // The engine's spare when it was started the same (decision 0096), else one of its own.
    const iso = this.spares?.take(key) ?? new Isolate(undefined, key.limits, key.permission, key.confinement);
    iso.attach({
      onMessage: (m) => this.onMessage(m),
      onBadMessage: () => void this.end('failed', 'SCRIPT_PROTOCOL', 'The script process sent a message outside the workflow protocol.'),
    });
    this.isolate = iso;
    void iso.ended.then(async ({ cause, detail }) => {
      if (this.isolate !== iso || this.ended) return;
      if (!(await iso.ready)) return; // never started: start() decides
      void this.end('failed', EXIT_CODES[cause], `${EXIT_TEXT[cause]} (${detail})`);
    });
    return iso;
  }

  private onMessage(m: FromChild): void {
    if (this.ended) return;
    if (m.op === 'phase') return this.phase(m.title);
    if (m.op === 'log') return this.log(m.message);
    if (m.op === 'agent') {
      const t = this.agentCall(m.id, m.prompt, m.opts).finally(() => this.tasks.delete(t));
      this.tasks.add(t);
      return;
    }
    if (m.op === 'done') {
      if (!m.ok) return void this.end('failed', scriptCode(m.code), m.message, undefined, m.line);
      if (m.json === null) return void this.end('failed', 'RESULT_NOT_JSON', 'The script returned nothing JSON can hold (end it with `return <json>`).');
      const bytes = Buffer.byteLength(m.json, 'utf8');
      if (bytes > this.d.maxResultBytes)
        return void this.end(
          'failed',
          'RESULT_TOO_LARGE',
          `The script's result is ${bytes} bytes; the limit is ${this.d.maxResultBytes}. Return a summary and let agents write files.`,
        );
      void this.end('completed', undefined, undefined, m.json);
    }
  }

  private phase(title: string): void {
    if (this.phases >= this.d.maxPhases) return void this.logsDropped++;
    void this.append('workflow/phase', { index: this.phases++, title: title.slice(0, 200) });
  }

  private log(message: string): void {
    if (this.logs >= this.d.maxLogEvents) return void this.logsDropped++;
    this.logs++;
    const cut = Buffer.byteLength(message, 'utf8') > this.d.maxLogBytes;
    void this.append('workflow/log', {
      message: cut ? Buffer.from(message, 'utf8').subarray(0, this.d.maxLogBytes).toString('utf8') : message,
      ...(cut ? { truncated: true } : {}),
    });
  }

  private async agentCall(id: number, prompt: unknown, opts: unknown): Promise<void> {
    try {
      const value = await this.runAgent(prompt, opts);
      this.isolate?.send({ op: 'agent-result', id, ok: true, value: value ?? null });
    } catch (err) {
      const e = err instanceof WorkflowError ? err : new WorkflowError('BAD_AGENT_REQUEST', describeError(err));
      this.isolate?.send({ op: 'agent-result', id, ok: false, code: e.code, message: e.message });
    }
  }

  /** The child `index` holds no slot any more: a run waiting for none to (`roomFor`) is woken. */
  private stopped(index: number): void {
    this.running.delete(index);
    if (this.running.size === 0) for (const wake of this.drained.splice(0)) wake();
  }

  /** Room under the concurrency for a child that never held a slot: its ticket's turn, or (the run ended) no child left running. */
  private async roomFor(ticket: Ticket): Promise<void> {
    if (!this.ended && (await ticket.granted)) return;
    while (this.running.size > 0) await new Promise<void>((wake) => this.drained.push(wake));
  }

  private cancelled(): WorkflowError {
    return new WorkflowError('CANCELLED', 'The workflow has ended; no agent starts after that.');
  }

  /**
   * One `agent()`: checks, a place in the FIFO slots, a real one-shot child, its answer or null.
   * The child is created ahead of its slot (up to twice the concurrency exist at once) and waits
   * at the run's gate, shown queued, until its ticket holds a slot (decision 0102): a slot that frees goes straight to a child whose creation and
   * turn start are already durable. Its `workflow/agent` "started" is written when it takes the
   * slot, so the run's running count never reads more than its concurrency.
   */
  private async runAgent(prompt: unknown, opts: unknown): Promise<unknown> {
    if (this.ended || this.parent.isDisposed) throw this.cancelled();
    const { provider, request } = agentRequest(prompt, opts);
    const index = this.requested++;
    if (index >= this.limits.maxTotalAgents)
      throw new WorkflowError(
        'AGENT_CAP',
        `This run may start at most ${this.limits.maxTotalAgents} agents (agent number ${index + 1} was refused); do the rest in fewer, larger agents.`,
      );
    // Two places in call order: one among the children that may exist at once (twice the
    // concurrency: the running ones and the next wave, created while those run), one in the slots.
    const room = this.ahead.ticket();
    const ticket = this.slots.ticket();
    const label = request.label;
    let began = false;
    /** The child takes its slot: counted, and its "started" written (once). */
    const begin = (childId: string) => {
      if (began) return;
      began = true;
      this.children++;
      this.running.add(index);
      void this.append('workflow/agent', { index, childId, ...(label ? { label } : {}), status: 'started' });
    };
    // The slot is given back in the finally below, once the child's "done" is written.
    const gate: StartGate = {
      enter: (childId, signal) => {
        if (signal.aborted) return undefined; // its turn ends on its own
        if (this.ended) return false; // the run's end cancels every child it made
        if (ticket.held) return void begin(childId);
        return new Promise<boolean>((resolve) => {
          const go = (may: boolean) => {
            signal.removeEventListener('abort', onAbort);
            resolve(may);
          };
          const onAbort = () => go(true);
          signal.addEventListener('abort', onAbort, { once: true });
          void ticket.granted.then((ok) => {
            if (signal.aborted) return go(true);
            if (!ok || this.ended) return go(false); // the slots closed: the run ended, its cancel is on the way
            begin(childId);
            go(true);
          });
        });
      },
    };
    try {
      if (!(await room.granted) || this.ended) throw this.cancelled();
      let sub: SubagentRun;
      try {
        sub = await this.rt.start(this.parent, provider ?? 'spawn', { ...request, workflow: { runId: this.id, index } }, { signal: this.abort.signal, gate });
      } catch (err) {
        if (this.ended) throw this.cancelled();
        const code = err instanceof SubagentError ? `${err.code}: ` : '';
        throw new WorkflowError('BAD_AGENT_REQUEST', `agent(): ${code}${describeError(err)}`);
      }
      // Every child `workflow/end.agents` counts has both its events, even one published as the
      // run ended: `end()` waits for this task before it writes `workflow/end`, so they come first.
      this.created.set(index, sub);
      if (this.ended) void sub.localAgent.cancel(this.childStop, { keepInbox: false });
      const r = await sub.result;
      if (this.ended) this.cutShort++; // still running or queued when the run ended: it was cancelled
      if (!began) {
        // Ended while queued (the run's end, or a Stop of that child): it gets both events too,
        // once there is room for it, so the running count never reads more than the concurrency.
        await this.roomFor(ticket);
        begin(sub.id);
      }
      this.tokens += tokensOf(sub.localAgent.session.events);
      this.created.delete(index);
      await sub.dispose(); // should it fail, the finally below frees the slot: nothing in roomFor waits for ever
      this.stopped(index);
      void this.append('workflow/agent', { index, childId: sub.id, ...(label ? { label } : {}), status: 'done', stopReason: r.stopReason });
      if (this.ended) throw this.cancelled();
      // An agent its budget stopped (the run's own, or an ancestor's): the run ends with BUDGET.
      if (r.stopReason === 'budget') {
        void this.end('failed', 'BUDGET', `Agent ${index} was stopped by its budget: ${r.error ?? 'no request fits what is left'}`);
        throw new WorkflowError('BUDGET', 'The workflow is over its budget.');
      }
      if (r.stopReason !== 'completed') return null;
      return request.outputSchema ? (r.output ?? null) : r.text;
    } finally {
      this.stopped(index);
      ticket.drop();
      room.drop();
    }
  }

  /**
   * The one way a run ends: the script process is killed, waiting `agent()` calls get no
   * slot, running children are cancelled and disposed (each with its `workflow/agent{done}`),
   * then `workflow/end` is appended. A script that returned while agents still ran did not
   * complete: the run ends `failed` with `AGENTS_UNFINISHED` (its result kept). Idempotent;
   * resolves with the outcome.
   */
  async end(
    status: WorkflowStatus,
    code?: WorkflowErrorCode,
    error?: string,
    resultJson?: string,
    line?: number,
    childStop: 'interrupted' | 'cancelled' = 'cancelled',
  ): Promise<RunOutcome> {
    if (this.ended) return this.outcome;
    this.ended = true;
    this.childStop = childStop;
    if (this.wallTimer) {
      clearTimeout(this.wallTimer);
      Run.wallClocks--;
    }
    // Its reason is how a child published after this reads its stop (`subagent/runtime.ts`): a Stop's children read interrupted.
    this.abort.abort(childStop);
    this.isolate?.kill();
    this.slots.close();
    this.ahead.close();
    const kids = [...this.created.values()];
    for (const k of kids) await k.localAgent.cancel(childStop, { keepInbox: false }).catch(() => undefined);
    await Promise.allSettled([...this.tasks]);
    for (const k of kids) await k.dispose().catch(() => undefined);
    if (this.isolate) await this.isolate.ended;
    if (status === 'completed' && this.cutShort > 0) {
      const n = this.cutShort;
      status = 'failed';
      code = 'AGENTS_UNFINISHED';
      error = `The script returned while ${n} agent${n === 1 ? ' was' : 's were'} still running; ${n === 1 ? 'it was' : 'they were'} cancelled. Await every agent() call (e.g. through parallel) before returning.`;
    }
    const data: WorkflowData['workflow/end'] = {
      status,
      ...(code ? { code } : {}),
      ...(error ? { error: error.slice(0, 2000) } : {}),
      agents: this.children,
      tokens: this.tokens,
      resultBytes: resultJson ? Buffer.byteLength(resultJson, 'utf8') : 0,
      logsDropped: this.logsDropped,
    };
    await this.append('workflow/end', data);
    const outcome: RunOutcome = {
      runId: this.id,
      status,
      agents: data.agents,
      ...(resultJson !== undefined ? { resultJson } : {}),
      ...(code ? { code } : {}),
      ...(error ? { error } : {}),
      ...(line ? { line } : {}),
    };
    this.resolveOutcome(outcome);
    return outcome;
  }

  async append<T extends keyof WorkflowData>(type: T, data: WorkflowData[T]): Promise<void> {
    // The parent's own writer (its in-memory log stays current); a parent already closed keeps what it had.
    await this.parent.append({ type, runId: this.id, data: data as unknown as Record<string, unknown> }).catch(() => undefined);
  }
}
