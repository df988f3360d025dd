import type * as acp from '@agentclientprotocol/sdk/unstable';
import type { Harness } from '../core/harness';
import type { SessionEvent, TurnEndEvent } from '../core/session/events';
import { invalidParams, turnFailed } from './errors';

/**
 * A prompt's content blocks as the one message Arbor's agent takes: text joined, an embedded
 * resource or a resource link inlined as fenced text with its uri. Image and audio are refused
 * (invalid params): `initialize` said we take neither.
 */
export function promptText(blocks: readonly acp.ContentBlock[]): string {
  const parts: string[] = [];
  for (const b of blocks) {
    if (b.type === 'text') parts.push(b.text);
    else if (b.type === 'resource_link') parts.push(`[${b.title ?? b.name}](${b.uri})`);
    else if (b.type === 'resource') {
      const r = b.resource as { uri: string; text?: string; mimeType?: string | null };
      if (typeof r.text !== 'string') throw invalidParams('UNSUPPORTED_CONTENT', `resource ${r.uri} has no text (binary resources are not supported)`);
      parts.push(`${r.uri}:\n\`\`\`\n${r.text}\n\`\`\``);
    } else throw invalidParams('UNSUPPORTED_CONTENT', `${b.type} content is not supported (promptCapabilities.${b.type} is false)`);
  }
  const text = parts.join('\n\n').trim();
  if (!text) throw invalidParams('EMPTY_PROMPT', 'the prompt has no text');
  return text;
}

/** The session and everything below it in the tree, by the store's headers. */
function subtree(h: Harness, id: string): string[] {
  const out = [id];
  for (let i = 0; i < out.length; i++) for (const c of h.store.children(out[i])) out.push(c.id);
  return out;
}

/**
 * Wait until the session and its descendants have settled (`arbor run` semantics: a
 * background child's notice wakes its parent, and that turn counts too). Other sessions of
 * the harness are not waited for, except through the runtime's quiet point for children.
 */
export async function settleSubtree(h: Harness, id: string): Promise<void> {
  for (let round = 0; ; round++) {
    for (const x of subtree(h, id)) await h.resident(x)?.idle();
    await h.subagents.whenQuiet();
    if (subtree(h, id).every((x) => h.resident(x)?.isSettled ?? true)) return;
    if (round > 100_000) throw new Error('settle: agents keep waking each other');
    await new Promise((r) => setImmediate(r));
  }
}

/** Arbor's last turn end after `from` as ACP's stop reason; a failure is a JSON-RPC error (its text has streamed). */
export function stopReasonOf(events: readonly SessionEvent[], from: number): acp.StopReason {
  let last: TurnEndEvent | undefined;
  for (let i = from; i < events.length; i++) {
    const e = events[i];
    if (e.type === 'turn/end') last = e;
  }
  if (!last) return 'end_turn';
  switch (last.stopReason) {
    case 'completed':
      return 'end_turn';
    case 'max-tokens':
      return 'max_tokens';
    case 'interrupted':
    case 'cancelled':
      return 'cancelled';
    // Stopped by a budget (decision 0034): the client sees a refusal to go on, not a crash.
    case 'budget':
      return 'refusal';
    case 'error':
      if (/step limit/i.test(last.error ?? '')) return 'max_turn_requests';
      throw turnFailed(last.error ?? 'unknown error');
  }
}

/**
 * What the prompt's requests used (ACP's unstable `usage`): the root's assistant messages after
 * `from`, so a client counting budgets — Arbor's placed node (decision 0074) — counts this
 * spending. `inputTokens` includes the cached part (`cachedReadTokens` says how much of it).
 */
export function usageOfTurn(events: readonly SessionEvent[], from: number): acp.Usage | undefined {
  let input = 0;
  let output = 0;
  let cached = 0;
  let any = false;
  for (let i = from; i < events.length; i++) {
    const e = events[i];
    if (e.type !== 'assistant/message' || !e.usage) continue;
    any = true;
    input += e.usage.promptTokens;
    output += e.usage.completionTokens;
    cached += e.usage.cacheHitTokens ?? 0;
  }
  if (!any) return undefined;
  return { inputTokens: input, outputTokens: output, totalTokens: input + output, ...(cached ? { cachedReadTokens: cached } : {}) };
}
