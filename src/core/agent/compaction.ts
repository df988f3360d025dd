import { randomUUID } from 'node:crypto';
import { deriveMessages } from '../session/derive';
import type { CompactionEndEvent } from '../session/events';
import { estimateTokens } from '../session/summary';
import type { AgentConfig } from './config';
import { budgetedRequest, cutByCap } from './request-budget';
import { collect } from './stream-collector';

const SUMMARY_SYSTEM =
  'You compact a coding-agent conversation. Write a concise summary that lets the agent continue: the user goals, decisions made, files touched and their state, open questions and next steps. Plain text, no preamble.';

const STOPPED = 'Stopped before the compaction finished.';

export interface CompactionResult {
  outcome: 'committed' | 'aborted' | 'skipped';
  replaced?: { fromSeq: number; toSeq: number };
  error?: string;
}

/** Compact before a turn when the last request's prompt reached the threshold. */
export async function compactIfNeeded(
  cfg: AgentConfig,
  opts: { thresholdTokens: number; keepTurns?: number },
  signal?: AbortSignal,
): Promise<CompactionResult> {
  const events = cfg.writer.session.events;
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i];
    // Compacted since the last request (a fork's seed can end with its source's compaction): that usage is answered.
    if (e.type === 'compaction/end' && e.outcome === 'committed') return { outcome: 'skipped' };
    if (e.type === 'assistant/message' && e.usage) {
      if (e.usage.promptTokens < opts.thresholdTokens) return { outcome: 'skipped' };
      return compact(cfg, 'threshold', opts.keepTurns, signal);
    }
  }
  return { outcome: 'skipped' };
}

/**
 * A compaction transaction: compaction/start → model-written summary → the replacing
 * user/message over everything before the last `keepTurns` turns → compaction/end.
 * The raw log stays; only the surface the model sees changes. Runs between turns.
 * `signal` is a Stop: the PreCompact hook is killed, the summary request ends, nothing is
 * written after it but the transaction's `compaction/end` (aborted).
 */
export async function compact(cfg: AgentConfig, reason: 'manual' | 'threshold', keepTurns = 1, signal?: AbortSignal): Promise<CompactionResult> {
  const w = cfg.writer;
  const s = w.session;
  if (s.openTurnId) return { outcome: 'skipped', error: 'A turn is running; compact between turns.' };
  const starts = s.events.filter((e) => e.type === 'turn/start').map((e) => e.seq);
  const boundary = starts.length > keepTurns ? starts[starts.length - keepTurns] : -1;
  const surface = deriveMessages(s.events).filter((m) => m.seq < boundary);
  if (boundary <= 0 || surface.length === 0) return { outcome: 'skipped' };
  const replaced = { fromSeq: 0, toSeq: boundary - 1 };

  try {
    await cfg.beforeCompaction?.({ reason, ...(signal ? { signal } : {}) });
  } catch {
    // an observer's failure is not the compaction's
  }
  if (signal?.aborted) return { outcome: 'aborted', error: STOPPED };
  const compactionId = randomUUID();
  // A model request like any other: under a budget it is checked and carries the cap it reserved.
  const ready = budgetedRequest(
    cfg,
    {
      model: cfg.modelName,
      system: SUMMARY_SYSTEM,
      tools: [],
      messages: [...surface, { role: 'user', content: 'Summarize the conversation above for continuing the work.', source: { kind: 'user' }, seq: boundary }],
      ...(cfg.maxTokens !== undefined ? { maxTokens: cfg.maxTokens } : {}),
      ...(signal ? { signal } : {}),
    },
    true,
  );
  // What is about to go out is on disk first: a crash before the end counts its prompt (recovery.ts).
  await w.append({ type: 'compaction/start', compactionId, reason, ...('refused' in ready ? {} : { model: ready.req.model, bytes: ready.info.bytes }) });
  if ('refused' in ready) {
    await w.append({ type: 'compaction/end', compactionId, outcome: 'aborted' });
    return { outcome: 'aborted', error: ready.refused };
  }
  const out = await collect(cfg.model.stream(ready.req));
  // What the request spent rides on every end after it: a budget counts it like any request's.
  const spent = spentBy(ready.req.model, ready.info.bytes, out);
  if (signal?.aborted) {
    await w.append({ type: 'compaction/end', compactionId, outcome: 'aborted', ...spent });
    return { outcome: 'aborted', error: STOPPED };
  }
  // A summary cut at a budget's cap would drop context silently: the history stays as it was.
  const cut = ready.cap !== undefined && out.finishReason === 'length' ? cutByCap(ready.cap, cfg.maxTokens) : undefined;
  if (out.error || cut || !out.text.trim()) {
    await w.append({ type: 'compaction/end', compactionId, outcome: 'aborted', ...spent });
    return { outcome: 'aborted', error: out.error?.message ?? cut ?? 'The model returned an empty summary.' };
  }
  await w.append({ type: 'compaction/summary', compactionId, text: out.text });
  await w.append({
    type: 'user/message',
    text: `Summary of the earlier conversation (compacted):\n${out.text}`,
    source: { kind: 'user', compacted: true },
    surfaceOp: 'replace',
    replaces: replaced,
    compactionId,
  });
  await w.append({ type: 'compaction/end', compactionId, outcome: 'committed', ...spent });
  return { outcome: 'committed', replaced };
}

/**
 * What a summary request spent, for its `compaction/end`: the provider's usage, else an
 * estimate (its prompt from its bytes, its reply from what arrived, as for a cut turn); nothing
 * when it never reached the provider (a connection refused before any response).
 */
function spentBy(model: string, bytes: number, out: Awaited<ReturnType<typeof collect>>): Pick<CompactionEndEvent, 'model' | 'usage' | 'estimated'> {
  // Attempts answered too late and sent again went out too: their prompts count, estimated.
  const resent = (out.resent ?? 0) * estimateTokens(bytes);
  if (out.usage) return { model, usage: { ...out.usage, promptTokens: out.usage.promptTokens + resent }, ...(resent ? { estimated: true as const } : {}) };
  if (out.error?.code === 'connection' && !out.error.midStream && !resent) return {};
  const completion = estimateTokens(out.text.length + out.reasoning.length);
  const prompt = (out.error?.code === 'connection' && !out.error.midStream ? 0 : estimateTokens(bytes)) + resent;
  return { model, usage: { promptTokens: prompt, completionTokens: completion }, estimated: true };
}
