import type { Base } from './base';

// A compaction transaction; the raw log is never deleted (the replacing `user/message` is model history, these are not).

export interface CompactionStartEvent extends Base<'compaction/start'> {
  compactionId: string;
  reason: 'manual' | 'threshold';
}

export interface CompactionSummaryEvent extends Base<'compaction/summary'> {
  compactionId: string;
  text: string;
}

export interface CompactionEndEvent extends Base<'compaction/end'> {
  compactionId: string;
  outcome: 'committed' | 'aborted';
}
