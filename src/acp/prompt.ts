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

/** Tokens a session and its delegated descendants have spent so far (their summaries: reported usage, and estimates where none was). */
export interface SubtreeTokens {
  prompt: number;
  completion: number;
  cacheHit: number;
}

/**
 * What the session and every delegated descendant spent so far, from the store's summaries (no
 * log read). A prompt's children run its requests too: a client counting budgets must hear them.
 */
export function spentUnder(store: Harness['store'], id: string): SubtreeTokens {
  const out: SubtreeTokens = { prompt: 0, completion: 0, cacheHit: 0 };
  const ids = [id];
  for (let i = 0; i < ids.length; i++) {
    const s = store.summaryRef(ids[i]);
    if (s) {
      out.prompt += s.tokens.prompt;
      out.completion += s.tokens.completion;
      out.cacheHit += s.tokens.cacheHit;
    }
    // A user fork below starts a lineage of its own (as for budgets): not this prompt's spending.
    for (const c of store.children(ids[i])) if (store.summaryRef(c.id)?.delegated ?? c.origin === 'subagent') ids.push(c.id);
  }
  return out;
}

/**
 * What the prompt's requests used (ACP's unstable `usage`): what the root and its delegated
 * descendants spent between `before` and `after` (`spentUnder`), so a client counting budgets —
 * Arbor's placed node (decision 0074) — counts the children it ran here too. `inputTokens`
 * includes the cached part (`cachedReadTokens` says how much of it). Undefined: nothing spent.
 */
export function usageBetween(before: SubtreeTokens, after: SubtreeTokens): acp.Usage | undefined {
  const input = Math.max(0, after.prompt - before.prompt);
  const output = Math.max(0, after.completion - before.completion);
  const cached = Math.max(0, after.cacheHit - before.cacheHit);
  if (input + output === 0) return undefined;
  return { inputTokens: input, outputTokens: output, totalTokens: input + output, ...(cached ? { cachedReadTokens: cached } : {}) };
}
