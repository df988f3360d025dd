import type { Base } from './base';
import type { StopReason } from './turn';

// What the model's history is made of: user, assistant and tool messages (DESIGN §2).

/**
 * Where a `user/message` or inbox message came from, discriminated on `kind`; each kind carries
 * exactly its fields (`message-source.ts` reads one from untrusted data by the same table).
 */
export type MessageSource =
  /** A human typed it; `compacted`: the summary a compaction put in place of what it replaced. */
  | { kind: 'user'; compacted?: true }
  /** `send_message` or a human's message to a child: `fromSession` is the sender, `'user'` for a human. */
  | { kind: 'followup'; fromSession: string }
  /** A continuable child's `report` (`fromSession`: the child), `quiet` or `wakeup`. */
  | { kind: 'subagent-report'; fromSession: string; mode: 'quiet' | 'wakeup' }
  /** A continuable child's Activation ended: how, and how many actions it was refused. */
  | { kind: 'subagent-settled'; fromSession: string; stopReason: StopReason; refused?: number }
  /** A background one-shot child's result, an ordinary job result (seed 000 §二, decision 0052): how it ended, and its refusals. */
  | { kind: 'subagent-result'; fromSession: string; stopReason: StopReason; refused?: number }
  /** A goal round: the goal's revision and the round's number when it was planned. */
  | { kind: 'goal'; revision: number; round: number }
  /** The runtime's delegation notice at the head of a child (`runtime`), or the task its parent (`fromSession`) gave it. */
  | { kind: 'delegation'; runtime: true }
  | { kind: 'delegation'; fromSession: string }
  /** A `Stop` / `SubagentStop` hook said the turn must go on (exit 2 or `decision: "block"`): its reason, as the next instruction. */
  | { kind: 'hook'; event: string };

export type MessageSourceKind = MessageSource['kind'];

export interface ToolCall {
  id: string;
  name: string;
  /** Raw JSON text as the model produced it; tools parse and validate it. */
  arguments: string;
}

export interface Usage {
  promptTokens: number;
  completionTokens: number;
  /** Prompt tokens served from the provider's prefix cache. */
  cacheHitTokens?: number;
  cacheMissTokens?: number;
  /** What the provider itself said the request cost (USD), where it says (remote programs); it wins over the price table. */
  costUsd?: number;
}

export interface UserMessageEvent extends Base<'user/message'> {
  text: string;
  source: MessageSource;
  /** Set by compaction: this message replaces the surface of `replaces` (inclusive seqs). */
  surfaceOp?: 'replace';
  replaces?: { fromSeq: number; toSeq: number };
  compactionId?: string;
  /** The inbox message this was claimed from, if any. */
  messageId?: string;
}

export interface AssistantMessageEvent extends Base<'assistant/message'> {
  text: string;
  reasoning?: string;
  toolCalls?: ToolCall[];
  usage?: Usage;
  /** `usage` is Arbor's estimate, not the provider's: a remote program stopped before it reported any. */
  estimated?: true;
  model: string;
}

export interface ToolResultEvent extends Base<'tool/result'> {
  callId: string;
  name: string;
  content: string;
  isError: boolean;
  /** Set when the action was refused for want of approval: what was asked and why it was refused (machine-readable). */
  refusal?: Refusal;
}

/** An action a tool did not take because approval was refused (decision 0015). */
export interface Refusal {
  /** The approval outcome, e.g. 'policy-never', 'denied', 'no-port'. */
  outcome: string;
  /** The one line a human was (or would have been) asked about, e.g. "$ npm test". */
  summary: string;
}
