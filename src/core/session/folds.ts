import type { ApprovalPolicy, MessageSource, PolicySource, SandboxMode, SessionEvent, SessionHeader, SubagentDescriptorEvent, WorktreeEvent } from './events';

export interface Override<T> {
  value: T;
  source: PolicySource;
  seq: number;
}

export interface PolicyOverrides {
  sandbox?: Override<SandboxMode>;
  approval?: Override<ApprovalPolicy>;
}

/**
 * The session's explicit policy overrides, last event wins. A fork inherits its seed's
 * switches; delegation events appended after the seed override them, and the child's own
 * later switches override those.
 */
export function policyOverrides(events: readonly SessionEvent[]): PolicyOverrides {
  const out: PolicyOverrides = {};
  for (const e of events) {
    if (e.type === 'sandbox/mode') out.sandbox = { value: e.mode, source: e.source, seq: e.seq };
    else if (e.type === 'approval/policy') out.approval = { value: e.policy, source: e.source, seq: e.seq };
  }
  return out;
}

/**
 * The child's own descriptor: the last `subagent/descriptor` after the seed. A fork's seed
 * may hold an ancestor's descriptor; that one describes the ancestor, never this session.
 */
export function descriptorOf(header: SessionHeader, events: readonly SessionEvent[]): SubagentDescriptorEvent | undefined {
  const from = header.seedLength ?? 0;
  for (let i = events.length - 1; i >= from; i--) {
    const e = events[i];
    if (e.type === 'subagent/descriptor') return e;
  }
  return undefined;
}

/**
 * The session's own worktree fact (decision 0060): the last `worktree` event after the seed.
 * A fork's seed may hold its parent's; that one is the parent's (the fork has its own, `inherited`).
 */
export function worktreeOf(header: SessionHeader, events: readonly SessionEvent[]): WorktreeEvent | undefined {
  const from = header.seedLength ?? 0;
  for (let i = events.length - 1; i >= from; i--) {
    const e = events[i];
    if (e.type === 'worktree') return e;
  }
  return undefined;
}

/** A message accepted into the inbox and neither claimed nor withdrawn yet. */
export interface QueuedMessage {
  messageId: string;
  text: string;
  source: MessageSource;
  /** When it was accepted. */
  at: string;
  seq: number;
}

/** The inbox's waiting messages in FIFO order, with their text (`unclaimedInbox` holds ids only). */
export function queuedMessages(events: readonly SessionEvent[], unclaimed: readonly string[]): QueuedMessage[] {
  if (unclaimed.length === 0) return [];
  const want = new Set(unclaimed);
  const found = new Map<string, QueuedMessage>();
  // Waiting messages are usually recent: scan from the end and stop once all are found.
  for (let i = events.length - 1; i >= 0 && found.size < want.size; i--) {
    const e = events[i];
    if (e.type === 'inbox/accepted' && want.has(e.messageId))
      found.set(e.messageId, { messageId: e.messageId, text: e.text, source: e.source, at: e.at, seq: e.seq });
  }
  return unclaimed.map((id) => found.get(id)).filter((m): m is QueuedMessage => m !== undefined);
}

/** What became of an inbox message that is no longer waiting (for a clear refusal). */
export function inboxFate(events: readonly SessionEvent[], messageId: string): 'claimed' | 'withdrawn' | 'unknown' {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i];
    if ((e.type === 'inbox/claimed' || e.type === 'inbox/withdrawn') && e.messageId === messageId) return e.type === 'inbox/claimed' ? 'claimed' : 'withdrawn';
  }
  return 'unknown';
}

/** The last assistant text of the last turn in `evs` ('' when it said nothing). */
export function lastTurnText(evs: readonly SessionEvent[]): string {
  for (let i = evs.length - 1; i >= 0; i--) {
    const e = evs[i];
    if (e.type === 'assistant/message' && e.text) return e.text;
    if (e.type === 'turn/start') break;
  }
  return '';
}
