import { randomUUID } from 'node:crypto';
import type { SessionLog } from '../agent/session-writer';
import { describeError } from '../errors';
import { beyondCeiling, type PolicyCeiling } from '../policy/sandbox';
import { type Budget, checkBudget } from '../session/budget';
import type { SessionEvent, WorkflowData } from '../session/events';
import { openRuns } from '../session/workflow-fold';
import type { Store } from '../store/store';
import type { SubagentRuntime } from '../subagent/runtime';
import { type Confinement, scriptConfinement } from './confine';
import { WorkflowError } from './errors';
import { checkInput, type WorkflowInput } from './input';
import { Isolate } from './isolate';
import { DEFAULT_DEPLOYMENT, runLimits, type WorkflowDeployment } from './limits';
import { Run, type RunOutcome } from './run';
import { runProcesses, SpareIsolates } from './spare';

/**
 * A run's own budget (issue 15, decision 0034), from the harness's budget guard: `check`
 * throws when the budget is more than the parent has left; `open` makes the run a budget
 * scope its agents count against; `close` drops it when the run ends.
 */
export interface WorkflowBudgets {
  check(parentId: string, budget: Budget): void;
  open(runId: string, budget: Budget): void;
  close(runId: string): void;
}

/** Written as the `error` of a run a crash or reload left open, closed at the next open. */
export const RUN_OUTLIVED = 'The process ended during this workflow (a crash or a reload); it was not re-run.';

/**
 * Runs workflow scripts (DESIGN §8, decision 0027): each in a process of its own, fanning
 * out real one-shot children of the live parent through the subagent runtime. Every cause
 * of an end (the script returned or failed, the parent's turn was interrupted, a human
 * cancelled the run, the harness closed) goes through `Run.end`.
 */
export class WorkflowEngine {
  private deploymentNow: WorkflowDeployment;
  private readonly runs = new Map<string, Run>();
  private readonly spares = new SpareIsolates();
  /** The next run's spare, to be started on a later turn of the loop (`refillSoon`). */
  private pendingRefill?: { confinement: Confinement; started: Promise<void>; timer: NodeJS.Timeout; done: () => void };
  private closing = false;

  constructor(
    private readonly rt: SubagentRuntime,
    deployment: Partial<WorkflowDeployment> = {},
    private readonly budgets?: WorkflowBudgets,
    /** Told when a run of a session starts or ends here (the harness's change stream, decision 0054); must not throw. */
    private readonly report: (sessionId: string) => void = () => undefined,
  ) {
    this.deploymentNow = { ...DEFAULT_DEPLOYMENT, ...deployment };
  }

  /** The limits the next run starts with (a run under way keeps its own). */
  get deployment(): Readonly<WorkflowDeployment> {
    return this.deploymentNow;
  }

  /** New limits (settings edited): the next run starts with them; a run under way keeps its own. */
  setDeployment(d: Partial<WorkflowDeployment>): void {
    this.deploymentNow = { ...this.deploymentNow, ...d };
  }

  /** Run a script for the parent session's current tool call; resolves when the run has ended (never rejects). */
  async run(input: WorkflowInput, ctx: { sessionId: string; signal: AbortSignal; callId?: string; ceiling?: PolicyCeiling }): Promise<RunOutcome> {
    const failed = (e: WorkflowError): RunOutcome => ({
      runId: '',
      status: 'failed',
      code: e.code,
      error: e.message,
      agents: 0,
      ...(e.line ? { line: e.line } : {}),
    });
    let checked: { sha256: string; bytes: number };
    try {
      checked = checkInput(input, this.deploymentNow);
    } catch (err) {
      if (err instanceof WorkflowError) return failed(err);
      throw err;
    }
    const parent = this.rt.resident(ctx.sessionId);
    if (!parent || parent.isDisposed || this.closing)
      return failed(new WorkflowError('NOT_LIVE', `Session ${ctx.sessionId} is not live; a workflow needs its live parent.`));
    if (ctx.signal.aborted) return failed(new WorkflowError('CANCELLED', 'The turn was interrupted before the workflow started.'));
    let budget: Budget | undefined;
    try {
      if (input.budget !== undefined) {
        budget = checkBudget(input.budget);
        this.budgets?.check(parent.id, budget);
      }
    } catch (err) {
      return failed(new WorkflowError('BAD_INPUT', describeError(err)));
    }
    const confinement = await this.confinement();
    // The probe may have taken a while: the harness may be closing by now (its runs ended), or the parent gone.
    if (parent.isDisposed || this.closing)
      return failed(new WorkflowError('NOT_LIVE', `Session ${ctx.sessionId} is not live; a workflow needs its live parent.`));
    // Allowed unconfined or not, a script outside any OS sandbox is past a ceiling (Restricted Mode; decision 0125, amended in s60).
    const capped = confinement.kind === 'none' ? beyondCeiling(ctx.ceiling) : undefined;
    if (capped && confinement.kind === 'none')
      return failed(
        new WorkflowError(
          'POLICY_CEILING',
          `Workflow scripts cannot run here: no OS sandbox can start (${confinement.reason}), and a script run without one is refused: ${capped}. Do the work with subagents directly instead.`,
        ),
      );
    if (confinement.kind === 'none' && !this.deploymentNow.allowUnconfined)
      return failed(
        new WorkflowError(
          'NO_SANDBOX',
          `Workflow scripts run only inside an OS sandbox, and none can start here: ${confinement.reason}. ` +
            'Do the work with subagents directly instead; the user can allow unconfined scripts (setting arbor.workflow.allowUnconfinedScripts, or arbor run --unconfined-workflows).',
        ),
      );
    const limits = runLimits(this.deploymentNow, input);
    // A spare whose start was deferred past the last run's outcome starts now, for this run to take.
    this.refillNow();
    const run = new Run(`wf-${randomUUID().slice(0, 8)}`, parent, this.rt, limits, this.deploymentNow, confinement, this.spares);
    this.runs.set(run.id, run);
    this.report(parent.id);
    if (budget) this.budgets?.open(run.id, budget);
    void run.outcome.then(() => {
      this.runs.delete(run.id);
      this.budgets?.close(run.id);
      this.report(parent.id);
      // A script process for the next run, started as that run would start its own (decision 0096):
      // the confinement probed for this one (it depends on no session), the limits as they are now.
      // Started once the outcome has reached its caller: the host forks to start it (~15–60 ms of
      // this event loop), which would otherwise delay the outcome (amended 0096).
      this.refillSoon(confinement);
    });
    await run.append('workflow/start', {
      ...(ctx.callId ? { callId: ctx.callId } : {}),
      name: input.meta.name.slice(0, 100),
      description: input.meta.description.slice(0, 1000),
      scriptSha256: checked.sha256,
      scriptBytes: checked.bytes,
      limits: { maxTotalAgents: limits.maxTotalAgents, concurrency: limits.concurrency, wallClockMs: limits.wallClockMs },
      ...(budget ? { budget } : {}),
    });
    // runTurn abandons a tool whose turn is interrupted: the run cleans up from the signal itself.
    // A human's Stop (the turn's reason `interrupted`) ends the children it reaches as interrupted: those the run still holds too.
    const onAbort = () =>
      void run.end(
        'interrupted',
        'CANCELLED',
        "The parent's turn was interrupted.",
        undefined,
        undefined,
        ctx.signal.reason === 'interrupted' ? 'interrupted' : 'cancelled',
      );
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    if (ctx.signal.aborted) onAbort();
    void run.start(input.script, input.args);
    try {
      return await run.outcome;
    } finally {
      ctx.signal.removeEventListener('abort', onAbort);
    }
  }

  /** Where the next script runs: inside bubblewrap when it starts here (probed once per process), else unconfined. */
  private async confinement(): Promise<Confinement> {
    return (await scriptConfinement(this.deploymentNow.bwrapPath)).confinement;
  }

  /** Resolves once the script process kept for the next run is ready; false when none is kept. */
  async spareReady(): Promise<boolean> {
    await this.pendingRefill?.started;
    return this.spares.ready();
  }

  /**
   * The spare for the next run is started on a later turn of the event loop, not in the run's end:
   * by then the caller has had the outcome and gone on (the parent's turn writes the tool's result
   * and waits on its fdatasync), so the host's fork overlaps that wait instead of delaying the outcome.
   */
  private refillSoon(confinement: Confinement): void {
    if (this.closing || this.pendingRefill) return;
    let started!: () => void;
    const pending = {
      confinement,
      started: new Promise<void>((r) => (started = r)),
      timer: setTimeout(() => this.refillNow(), 0),
      done: () => started(),
    };
    pending.timer.unref(); // a spare never keeps the host alive
    this.pendingRefill = pending;
  }

  /** Starts the deferred spare now (a run begins, or its turn came); none when none is pending or the engine closes. */
  private refillNow(): void {
    const p = this.pendingRefill;
    if (!p) return;
    this.pendingRefill = undefined;
    clearTimeout(p.timer);
    if (!this.closing) this.spares.refill({ limits: this.deploymentNow.isolate, permission: true, confinement: p.confinement });
    p.done();
  }

  /** A human's "Cancel workflow" (status `cancelled`); false when no such run is going. */
  async cancel(runId: string): Promise<boolean> {
    const run = this.runs.get(runId);
    if (!run) return false;
    await run.end('cancelled', 'CANCELLED', 'The workflow was cancelled by the user.');
    return true;
  }

  /** Runs going now, for views (the tree's live probe) and leak checks. */
  active(): { runId: string; parentId: string; agents: number; running: number }[] {
    return [...this.runs.values()].map((r) => ({ runId: r.id, parentId: r.parent.id, ...r.counts }));
  }

  /**
   * Leak checks: runs going, script processes serving runs, timers armed (wall clocks and memory
   * watchdogs) — all 0 when idle — and the spare kept for the next run (at most one; none after close).
   */
  stats(): { runs: number; processes: number; timers: number; spares: number } {
    return { runs: this.runs.size, processes: runProcesses(), timers: Run.wallClocks + Isolate.watchdogs, spares: SpareIsolates.alive };
  }

  /** The runs of a session going now. */
  runsOf(sessionId: string): string[] {
    const ids: string[] = [];
    for (const r of this.runs.values()) if (r.parent.id === sessionId) ids.push(r.id);
    return ids;
  }

  isRunning(runId: string): boolean {
    return this.runs.has(runId);
  }

  /** Harness close: every run ends `interrupted`, before any agent is disposed. */
  async closeAll(why: string): Promise<void> {
    this.closing = true;
    this.refillNow(); // starts none: the engine is closing
    const spare = this.spares.close();
    await Promise.all([...this.runs.values()].map((r) => r.end('interrupted', 'CANCELLED', why)));
    await spare;
  }

  /**
   * A run a crash or reload left open (no `workflow/end`) is closed as `interrupted` in the
   * parent's log and never re-run: its script may have had side effects, and children answer
   * differently a second time. Each agent it left running gets its `workflow/agent{done}`
   * (`interrupted`) first, and each child it had made that was still queued (no `started`:
   * decision 0102) gets both, so every child the end counts has both its events. `made` lists a
   * run's children from the store (their descriptors name the run). Returns the run ids it closed.
   */
  static async closeOutlived(
    writer: SessionLog,
    live: (runId: string) => boolean = () => false,
    made?: (runId: string) => Promise<RunChild[]>,
  ): Promise<string[]> {
    const open = openRuns(writer.session.events).filter((r) => !live(r.runId));
    for (const r of open) {
      const started = startedAgents(writer.session.events, r.runId);
      const queued = (made ? await made(r.runId) : []).filter((c) => !started.has(c.index));
      const running = [...started.values()].filter((a) => !a.done).map(({ done: _, ...a }) => a);
      const done = (a: RunChild) => writer.append({ type: 'workflow/agent', runId: r.runId, data: { ...a, status: 'done', stopReason: 'interrupted' } });
      for (const a of running) await done(a);
      // Each queued one's pair after the running ones' ends: read back, the run never had more running than it did.
      for (const a of queued) {
        await writer.append({ type: 'workflow/agent', runId: r.runId, data: { ...a, status: 'started' } });
        await done(a);
      }
      await writer.append({
        type: 'workflow/end',
        runId: r.runId,
        data: { status: 'interrupted', code: 'CANCELLED', error: RUN_OUTLIVED, agents: r.agents + queued.length, tokens: 0, resultBytes: 0, logsDropped: 0 },
      });
    }
    return open.map((r) => r.runId);
  }

  /** The children a parent's run made, from the store: each whose descriptor names the run. */
  static async childrenOfRun(store: Store, parentId: string, runId: string): Promise<RunChild[]> {
    const out: RunChild[] = [];
    for (const c of store.children(parentId)) {
      const s = await store.summary(c.id).catch(() => undefined);
      if (s?.workflowRun?.runId !== runId) continue;
      out.push({ index: s.workflowRun.index, childId: c.id, ...(s.label ? { label: s.label } : {}) });
    }
    return out.sort((a, b) => a.index - b.index);
  }
}

/** One child of a run, as its `workflow/agent` events name it. */
export interface RunChild {
  index: number;
  childId: string;
  label?: string;
}

/** The agents of a run with a `started` event, by index, and whether a `done` followed. */
function startedAgents(events: readonly SessionEvent[], runId: string): Map<number, RunChild & { done: boolean }> {
  const seen = new Map<number, RunChild & { done: boolean }>();
  for (const e of events) {
    if (e.type !== 'workflow/agent' || e.runId !== runId) continue;
    const d = e.data as unknown as WorkflowData['workflow/agent'];
    if (d.status === 'started') seen.set(d.index, { index: d.index, childId: d.childId, ...(d.label ? { label: d.label } : {}), done: false });
    else {
      const a = seen.get(d.index);
      if (a) a.done = true;
    }
  }
  return seen;
}
