import { randomUUID } from 'node:crypto';
import { describeError } from '../errors';
import { effectiveApproval } from '../policy/approval';
import { effectiveSandbox } from '../policy/sandbox';
import type { StopReason } from '../session/events';
import { policyOverrides } from '../session/folds';
import type { ToolContext } from '../tools/tool';
import { type AgentConfig, type ClaimedMessage, DEFAULT_MAX_STEPS, MAX_STOP_CONTINUES, type TurnOutcome } from './config';
import { grantBookOf } from './grant-book';
import { budgetedRequest, cutByCap } from './request-budget';
import { collect } from './stream-collector';
import { runToolCalls } from './tool-runner';

/** Remote turns check their program's start with it (src/core/remote/turn.ts imports it from here). */
export { budgetRefusal } from './request-budget';

/** An interrupt may say why (the window closed); a plain interrupt says nothing. */
export class InterruptReason {
  constructor(readonly why: string) {}
}
const whyStopped = (signal: AbortSignal): string | undefined => (signal.reason instanceof InterruptReason ? signal.reason.why : undefined);

/**
 * One turn (DESIGN §4): claim → turn/start → user/message → (request/header → stream →
 * assistant/message → tool/results)* → turn/end. Every fact is durable before anything acts
 * on it (a request, a tool, the turn's outcome); facts written back to back are staged
 * together and share one group commit (decision 0063): the claim, the turn's start, its
 * message and the first request header are one fdatasync (with the accept that woke an idle
 * agent), the reply and `turn/end` another.
 */
export async function runTurn(cfg: AgentConfig, msg: ClaimedMessage, signal: AbortSignal, beforeStep?: () => Promise<void>): Promise<TurnOutcome> {
  const w = cfg.writer;
  const turnId = randomUUID();
  const claimed = w.stage({ type: 'inbox/claimed', messageId: msg.messageId });
  const started = w.stage({ type: 'turn/start', turnId });
  /** Staged events not yet known durable: the turn's outcome waits for them. */
  const pending: Promise<unknown>[] = [claimed, started];
  const end = async (stopReason: StopReason, error?: string, errorCode?: string, unreached?: boolean): Promise<TurnOutcome> => {
    const ended = w.stage({
      type: 'turn/end',
      turnId,
      stopReason,
      ...(error ? { error } : {}),
      ...(error && errorCode ? { errorCode } : {}),
      ...(unreached ? { unreached: true as const } : {}),
    });
    // No request follows: the slot goes to the next child now, not after this fdatasync.
    cfg.admission?.leave();
    await Promise.all([...pending.splice(0), ended]);
    return { stopReason, error };
  };
  try {
    pending.push(w.stage({ type: 'user/message', text: msg.text, source: msg.source, messageId: msg.messageId }));
    return await steps(cfg, signal, end, pending, beforeStep);
  } catch (err) {
    // Whatever failed once the turn was open (an event the log refused, a tool that threw
    // past its guard), the turn closes: an open turn would refuse every later message.
    const why = describeError(err);
    if (w.session.openTurnId !== turnId) throw err;
    return end('error', `Arbor could not finish this turn: ${why}. Retry the message.`, 'internal');
  }
}

type End = (stopReason: StopReason, error?: string, errorCode?: string, unreached?: boolean) => Promise<TurnOutcome>;

/**
 * The model/tool loop of one open turn; every way out goes through `end`. `pending` holds
 * staged events not yet awaited: a request waits for them, a tool for its call's message.
 */
async function steps(cfg: AgentConfig, signal: AbortSignal, end: End, pending: Promise<unknown>[], beforeStep?: () => Promise<void>): Promise<TurnOutcome> {
  const w = cfg.writer;

  // The abort reason tells an interrupt (the turn stops, the agent stays) from a disposal.
  const stopped = (): StopReason => (signal.reason === 'cancelled' ? 'cancelled' : 'interrupted');
  const maxSteps = cfg.maxSteps ?? DEFAULT_MAX_STEPS;
  const usedCallIds = new Set<string>();
  let continued = 0; // reasons a `beforeTurnEnd` hook kept this turn going with
  for (let step = 0; ; step++) {
    if (signal.aborted) return end(stopped(), whyStopped(signal));
    if (step >= maxSteps) return end('error', `The turn reached its step limit (${maxSteps} model calls) before finishing.`);
    await beforeStep?.(); // a safe point: quiet messages (reports) join the history here
    // The safe point may have waited (a child's fan-out slot): stopped meanwhile, no request is made.
    if (signal.aborted) return end(stopped(), whyStopped(signal));
    const tools = cfg.tools();
    const ownCap = cfg.maxTokens;
    const { messages, lineage } = w.session.surfaceNow();
    const ready = budgetedRequest(cfg, { model: cfg.modelName, system: cfg.system(), tools, messages, lineage, maxTokens: ownCap, signal });
    if ('refused' in ready) return end('budget', ready.refused, 'budget');
    const { req, info, cap } = ready;
    // The header is staged with what the turn said so far (one group commit); that is on disk
    // before the model hears it. The header does not gate the request: were it left for a
    // later commit, its write would run while the request does.
    const headerOf = () =>
      w.stage({
        type: 'request/header',
        model: info.model,
        provider: info.provider,
        bytes: info.bytes,
        headBytes: info.headBytes,
        headHash: info.headHash,
        prefixHash: info.prefixHash,
      });
    const header = headerOf();
    await Promise.all(pending.splice(0));
    pending.push(header);
    const out = await collect(cfg.model.stream(req), cfg.onDelta);
    // Each attempt answered too late went out too: a header of its own, so its prompt counts (an estimate).
    for (let n = out.resent ?? 0; n > 0; n--) pending.push(headerOf());
    // Some servers reuse call ids across steps; the log needs them unique within a turn.
    for (const c of out.toolCalls) {
      let id = c.id;
      for (let n = 2; usedCallIds.has(id); n++) id = `${c.id}#${n}`;
      usedCallIds.add((c.id = id));
    }
    const interrupted = signal.aborted || out.error?.code === 'aborted';
    // Cut at a budget's cap: its tool calls are cut too (never run), and the turn says why.
    const cut = cap !== undefined && out.finishReason === 'length' && !out.error && !interrupted;
    // A failed or interrupted stream keeps what arrived, without its (incomplete) tool calls,
    // unless it is too large to carry in the history (decision 0023).
    if (out.error?.discardPartial) out.text = out.reasoning = '';
    const keepCalls = !out.error && !interrupted && !cut;
    if (out.text || out.reasoning || keepCalls || out.usage) {
      pending.push(
        w.stage({
          type: 'assistant/message',
          text: out.text,
          model: req.model,
          ...(out.reasoning ? { reasoning: out.reasoning } : {}),
          ...(keepCalls && out.toolCalls.length ? { toolCalls: out.toolCalls } : {}),
          ...(out.usage ? { usage: out.usage } : {}),
        }),
      );
    }
    if (interrupted) return end(stopped(), whyStopped(signal));
    // A connection that failed before any response (offline, DNS): the provider never saw it.
    if (out.error) return end('error', out.error.message, out.error.code, out.error.code === 'connection' && !out.error.midStream && !out.usage);
    if (cut) return end('max-tokens', cutByCap(cap, ownCap), 'max-tokens');
    if (out.toolCalls.length === 0) {
      if (out.finishReason === 'length') return end('max-tokens');
      const more = continued < MAX_STOP_CONTINUES ? await goOn(cfg, out.text, continued, signal) : undefined;
      if (!more || signal.aborted) return end(signal.aborted ? stopped() : 'completed', signal.aborted ? whyStopped(signal) : undefined);
      continued++;
      pending.push(w.stage({ type: 'user/message', text: more.text, source: { kind: 'hook', event: more.event } }));
      continue;
    }
    await Promise.all(pending.splice(0)); // the calls are on disk before any of them acts

    const overrides = policyOverrides(w.session.events);
    const ctx: ToolContext = {
      sessionId: w.id,
      roots: cfg.roots,
      ...(cfg.protectedPaths ? { protectedPaths: cfg.protectedPaths } : {}),
      sandbox: effectiveSandbox(overrides, cfg.defaults.sandbox, cfg.defaults.ceiling),
      approvalPolicy: effectiveApproval(overrides, cfg.defaults.approval, cfg.defaults.ceiling),
      ...(cfg.defaults.ceiling ? { ceiling: cfg.defaults.ceiling } : {}),
      approval: cfg.approval,
      grants: grantBookOf(w),
      signal,
    };
    const results = await Promise.race([runToolCalls(out.toolCalls, tools, ctx, cfg), aborted(signal)]);
    if (!results) return end(stopped(), whyStopped(signal)); // calls left unanswered; deriveMessages stands in for them
    // The step's own records (hook runs) and its results are staged back to back, and left
    // pending: the next request header joins their group commit, and the request (or the
    // turn's end) waits for it — nothing acts on a result before it is durable.
    try {
      cfg.beforeResults?.();
    } catch {
      // a layer's records are not the turn's results
    }
    for (let i = 0; i < results.length; i++) {
      const call = out.toolCalls[i];
      const res = results[i];
      pending.push(
        w.stage({
          type: 'tool/result',
          callId: call.id,
          name: call.name,
          content: res.content,
          isError: res.isError,
          ...(res.refusal ? { refusal: res.refusal } : {}),
        }),
      );
    }
  }
}

/** A `beforeTurnEnd` reason to go on with (as a `hook` message), or nothing; a throw says nothing. */
async function goOn(cfg: AgentConfig, text: string, continued: number, signal: AbortSignal): Promise<{ text: string; event: string } | undefined> {
  if (!cfg.beforeTurnEnd) return undefined;
  try {
    // A Stop does not wait for the hook's answer (decision 0099): the turn ends interrupted at once.
    const reason = await Promise.race([cfg.beforeTurnEnd({ text, continued, signal }), aborted(signal)]);
    if (!reason) return undefined;
    const event = cfg.writer.session.header.parentSession ? 'SubagentStop' : 'Stop';
    // Marked as the hook's: what a hook prints can carry what the agent itself wrote (a test's
    // failure message), and must not reach the model as the user's own words.
    return { text: `[${event} hook — not the user] It kept the turn from ending, saying:\n${reason}`, event };
  } catch {
    return undefined;
  }
}

/** Resolves undefined once `signal` is aborted (never rejects): raced against what a Stop must not wait for. */
export function aborted(signal: AbortSignal): Promise<undefined> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(undefined);
    signal.addEventListener('abort', () => resolve(undefined), { once: true });
  });
}
