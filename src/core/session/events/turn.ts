import type { Base } from './base';

// A turn's boundaries and what each of its requests sent. Not model history.

/** `budget`: the next request could not fit the remaining budget of the session or an ancestor (decision 0034). */
export type StopReason = 'completed' | 'interrupted' | 'error' | 'max-tokens' | 'cancelled' | 'budget';

export interface TurnStartEvent extends Base<'turn/start'> {
  turnId: string;
}

export interface TurnEndEvent extends Base<'turn/end'> {
  turnId: string;
  stopReason: StopReason;
  error?: string;
  /** With `error`: the model failure's code (`auth`, `connection`, …) so a view can offer the fix. */
  errorCode?: string;
  /**
   * The turn's last request failed before any byte came back (offline, a DNS failure, a
   * refused connection): the provider never saw it, so its prompt estimate is not spent.
   */
  unreached?: true;
}

export interface RequestHeaderEvent extends Base<'request/header'> {
  model: string;
  provider: string;
  bytes: number;
  headBytes: number;
  headHash: string;
  prefixHash: string;
}
