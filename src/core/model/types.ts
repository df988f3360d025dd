import type { DerivedMessage } from '../session/derive';
import type { Usage } from '../session/events';
import type { JsonSchema } from './json-schema';

export interface ToolSpec {
  name: string;
  description: string;
  parameters: JsonSchema;
}

export interface ModelRequest {
  model: string;
  system: string;
  tools: readonly ToolSpec[];
  messages: readonly DerivedMessage[];
  /**
   * Requests of one lineage carry messages that extend one another (a session's surface between
   * compactions, `Session.surfaceNow`): the builder serializes only the messages added since the
   * lineage's last request. Absent: the conversation is serialized whole (decision 0064).
   */
  lineage?: object;
  maxTokens?: number;
  signal?: AbortSignal;
}

/**
 * `timeout`: no response head in time; `stalled`: the stream began, then nothing came for the
 * timeout; `cut`: it ended without a finish reason; `bad-response`: it could not be read or
 * broke the wire contract (the message names how).
 */
export type ModelErrorCode =
  | 'auth'
  | 'model-not-found'
  | 'rate-limit'
  | 'server'
  | 'connection'
  | 'timeout'
  | 'stalled'
  | 'cut'
  | 'aborted'
  | 'bad-response'
  | 'bad-request';

export interface ModelError {
  code: ModelErrorCode;
  status?: number;
  /** What happened and what to do, for a human. */
  message: string;
  /** True when the stream had begun: partial output was already delivered. */
  midStream: boolean;
  /** What arrived must not be kept (a reply too large to carry in the history). */
  discardPartial?: boolean;
}

/** What a model stream yields. It never throws: failures arrive as an `error` event, last. */
export type ModelStreamEvent =
  | { type: 'text'; delta: string }
  | { type: 'reasoning'; delta: string }
  | { type: 'tool-call'; index: number; id?: string; name?: string; argumentsDelta: string }
  | { type: 'usage'; usage: Usage }
  | { type: 'done'; finishReason: 'stop' | 'tool_calls' | 'length' | 'other' }
  | { type: 'error'; error: ModelError }
  /** An attempt went out and its answer was late: the request was sent again (the provider may bill both). */
  | { type: 'resent' };

export interface RequestInfo {
  provider: string;
  model: string;
  /** Byte length and sha256 of the serialized head (system + tools) and of the whole body. */
  bytes: number;
  headBytes: number;
  headHash: string;
  prefixHash: string;
}

export interface ModelClient {
  readonly provider: string;
  /** The exact bytes that will be sent for `req` and their hashes (recorded as request/header). */
  describe(req: ModelRequest): RequestInfo;
  stream(req: ModelRequest): AsyncIterable<ModelStreamEvent>;
}
