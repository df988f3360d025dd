import { randomUUID } from 'node:crypto';
import type { AgentConfig, TurnOutcome, TurnRunner } from '../agent/config';
import type { SessionWriter } from '../agent/session-writer';
import { budgetRefusal, InterruptReason } from '../agent/turn';
import { describeError } from '../errors';
import { effectiveApproval } from '../policy/approval';
import { effectiveSandbox } from '../policy/sandbox';
import type { SessionEvent, StopReason } from '../session/events';
import { descriptorOf, policyOverrides } from '../session/folds';
import { cutBytes, REMOTE_BOUNDS } from '../subagent/remote-bounds';
import { isWithin } from '../tools/real-path';
import { SessionSink } from './sink';
import { DEFAULT_TURN_TIMEOUT_MS, type RemoteDriver } from './types';

/**
 * Where a remote program starts: the session's folder when it lies inside the child's own roots,
 * else its first root. A child in a worktree (its own or its caller's) has only that one, while
 * the header's folder is the root conversation's checkout, copied into every child's header.
 */
export function remoteCwd(cwd: string | undefined, roots: readonly string[]): string {
  if (cwd && roots.some((r) => isWithin(cwd, r))) return cwd;
  return roots[0] ?? cwd ?? process.cwd();
}

/**
 * How a remote turn hears that a budget above it is spent (decision 0034): its program makes
 * its requests where `beforeRequest` cannot check them, so the turn watches while it runs.
 */
export interface RemoteBudget {
  /** Call `onSpent` (once, with why) when a budget above this child is used up; returns the end of the watch. */
  watch(onSpent: (why: string) => void): () => void;
}

/**
 * A remote child's turn (decision 0035): the same frame as `runTurn` — claim, turn/start,
 * the user message, …, turn/end — with the driver's program in place of the model loop.
 * Every way out closes the turn; an abort ends it `interrupted` (or `cancelled` on disposal)
 * whatever the program said last.
 *
 * Budgets (decision 0034): before the program starts, the task is checked like a model request
 * (its prompt plus the default completion reserve) and a turn that cannot fit ends `budget`
 * with nothing started; while it runs, a budget above it used up stops the program through the
 * same signal an interrupt uses, and the turn ends `budget`.
 *
 * Bounds (decision 0044): a turn runs for at most the driver's wall-clock limit (a program
 * that keeps sending what Arbor ignores never idles out), then it is stopped through that same
 * signal and the turn ends `error` (TURN_TIMEOUT); what it keeps is bounded by its sink, and the
 * error it ends with is cut to REMOTE_BOUNDS.errorBytes.
 */
export function remoteTurn(driver: RemoteDriver, model: string, budget?: RemoteBudget): TurnRunner {
  return async (cfg, msg, signal, beforeStep) => {
    const w = cfg.writer;
    const turnId = randomUUID();
    await w.append({ type: 'inbox/claimed', messageId: msg.messageId });
    await w.append({ type: 'turn/start', turnId });
    const end = async (stopReason: StopReason, whole?: string): Promise<TurnOutcome> => {
      const error = whole && Buffer.byteLength(whole) > REMOTE_BOUNDS.errorBytes ? `${cutBytes(whole, REMOTE_BOUNDS.errorBytes)} […cut]` : whole;
      await w.append({
        type: 'turn/end',
        turnId,
        stopReason,
        ...(error ? { error } : {}),
        ...(error && stopReason === 'budget' ? { errorCode: 'budget' } : {}),
      });
      return { stopReason, ...(error ? { error } : {}) };
    };
    const stopped = (left?: string): Promise<TurnOutcome> =>
      end(signal.reason === 'cancelled' ? 'cancelled' : 'interrupted', left ?? (signal.reason instanceof InterruptReason ? signal.reason.why : undefined));
    const sink = new SessionSink(w, driver.toolPrefix, model, cfg.onDelta);
    try {
      await w.append({ type: 'user/message', text: msg.text, source: msg.source, messageId: msg.messageId });
      await beforeStep?.(); // the child's fan-out slot, like a model request's
      if (signal.aborted) return await stopped();
      const overrides = policyOverrides(w.session.events);
      const sandbox = effectiveSandbox(overrides, cfg.defaults.sandbox, cfg.defaults.ceiling);
      if (!driver.supports(sandbox))
        return await end(
          'error',
          `UNSUPPORTED_SANDBOX: ${driver.program} cannot enforce the ${sandbox} sandbox here, so it was not started (it would run wider).`,
        );
      const prompt = remotePrompt(w.session.events, msg.text);
      // Checked like a model request: the prompt Arbor hands the program plus the default
      // completion reserve (the program's own requests are out of Arbor's sight).
      const refused = budgetRefusal(cfg, { model, bytes: Buffer.byteLength(prompt) });
      if (refused) return await end('budget', `${refused} (${driver.program} was not started.)`);
      // A spent budget stops the program the way an interrupt does: through the signal it runs under.
      const spent = new AbortController();
      let spentWhy: string | undefined;
      const unwatch = budget?.watch((why) => {
        spentWhy = why;
        spent.abort(new InterruptReason(why));
      });
      // The wall clock stops it the same way: a flood of updates it ignores must not keep it alive.
      const limitMs = driver.turnTimeoutMs ?? DEFAULT_TURN_TIMEOUT_MS;
      let timedOut = false;
      const clock = setTimeout(
        () => {
          timedOut = true;
          spent.abort(new InterruptReason('turn timeout'));
        },
        Math.min(limitMs, 2_147_483_647),
      );
      let outcome: Awaited<ReturnType<typeof driver.runTurn>>;
      try {
        outcome = await driver.runTurn(
          {
            childId: w.id,
            prompt,
            cwd: remoteCwd(w.session.header.cwd, cfg.roots),
            sandbox,
            approvalPolicy: effectiveApproval(overrides, cfg.defaults.approval, cfg.defaults.ceiling),
            ...(cfg.approval ? { approval: cfg.approval } : {}),
            ...(cfg.defaults.ceiling ? { ceiling: cfg.defaults.ceiling } : {}),
            signal: AbortSignal.any([signal, spent.signal]),
            ...resumeContext(w.session, msg.text, cfg.roots),
          },
          sink,
        );
      } catch (err) {
        outcome = { stopReason: 'error' as const, error: describeError(err) };
      } finally {
        clearTimeout(clock);
        unwatch?.(); // the program's own final usage below counts, but no longer stops a finished turn
      }
      // A program stopped before it reported usage still spent the prompt it was handed: counted as an estimate.
      await sink.finish(Buffer.byteLength(prompt));
      await recordModel(w, sink.reportedModel);
      if (signal.aborted) return await stopped(outcome.left);
      if (spentWhy !== undefined) return await end('budget', `${spentWhy} (${driver.program} was stopped.)${outcome.left ? ` ${outcome.left}` : ''}`);
      if (timedOut) return await end('error', `${turnTimeout(driver.program, limitMs)}${outcome.left ? ` ${outcome.left}` : ''}`);
      return await end(outcome.stopReason, outcome.error);
    } catch (err) {
      if (w.session.openTurnId !== turnId) throw err;
      return end('error', `Arbor could not finish this turn: ${describeError(err)}. Retry the message.`);
    }
  };
}

/**
 * The child's descriptor records the model it ran (seed 000 §六): a program that chose its own
 * (no model set) says which while it runs; the descriptor is written again with it (the last
 * one after the seed is the child's, `descriptorOf`). Nothing is written when it already says so.
 */
async function recordModel(w: SessionWriter, ran: string | undefined): Promise<void> {
  const d = ran ? descriptorOf(w.session.header, w.session.events) : undefined;
  if (!ran || !d || d.model === ran) return;
  const { seq: _seq, at: _at, ...rest } = d;
  await w.append({ ...rest, model: ran });
}

/** What a turn stopped by its wall clock ends with: what happened, and what to do. */
export function turnTimeout(program: string, limitMs: number): string {
  const span = limitMs >= 60_000 ? `${Math.round(limitMs / 60_000)} min` : `${Math.round(limitMs / 1000)} s`;
  return `TURN_TIMEOUT: ${program} was still working after ${span}, the wall-clock limit of one remote turn, and was stopped. Give it a smaller task, or raise the limit (VS Code: arbor.remote.turnTimeoutMinutes; CLI config: remote.turnTimeoutMinutes, or "turnTimeoutMs" on the program).`;
}

/** What a driver whose child lives on across turns needs of the log (decision 0074): the task alone, roots, the session to load, the persona, whether another turn can follow. */
function resumeContext(session: SessionWriter['session'], task: string, roots: readonly string[]) {
  let resume: string | undefined;
  for (const e of session.events) if (e.type === 'subagent/remote' && e.externalId && !e.announcedBy) resume = e.externalId;
  const d = descriptorOf(session.header, session.events);
  const persona = d?.persona;
  return { task, roots, ...(resume ? { resume } : {}), ...(persona ? { persona } : {}), ...(d?.mode === 'one-shot' ? { oneShot: true } : {}) };
}

/** The delegation notice the child was given at setup, then the task: the log explains what the program saw. */
export function remotePrompt(events: readonly SessionEvent[], task: string): string {
  for (const e of events) if (e.type === 'user/message' && e.source.kind === 'delegation' && 'runtime' in e.source) return `${e.text}\n\n${task}`;
  return task;
}

/** A remote child's config: its turns run the driver; our model never compacts (summarises) its log. */
export function remoteConfig(cfg: AgentConfig, driver: RemoteDriver, model: string, budget?: RemoteBudget): AgentConfig {
  return { ...cfg, runTurn: remoteTurn(driver, model, budget), compaction: undefined };
}
