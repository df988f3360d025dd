import type { Base } from './base';
import type { Usage } from './message';

// A compaction transaction; the raw log is never deleted (the replacing `user/message` is model history, these are not).

export interface CompactionStartEvent extends Base<'compaction/start'> {
  compactionId: string;
  reason: 'manual' | 'threshold';
  /** The summary request about to go out (absent: none will, a budget refused it): a crash before its end counts its prompt from these. */
  model?: string;
  bytes?: number;
}

export interface CompactionSummaryEvent extends Base<'compaction/summary'> {
  compactionId: string;
  text: string;
}

export interface CompactionEndEvent extends Base<'compaction/end'> {
  compactionId: string;
  outcome: 'committed' | 'aborted';
  /** The model its summary request went to (absent: no request was made, or it never reached the provider). */
  model?: string;
  /** What that request spent: the provider's usage, else an estimate (`estimated`) — it counts like any request's. */
  usage?: Usage;
  estimated?: true;
}
