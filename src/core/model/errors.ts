import { describeError } from '../errors';
import { PostFailure } from './http-post';
import type { ModelError } from './types';
import { ReplyAnomaly } from './wire-chunk';

const KEPT = 'The partial answer was kept; retry the message.';

/** A reply that broke the wire contract (decision 0023): the turn ends `error`, naming what was wrong. */
export function replyAnomaly(what: string, midStream = true, discardPartial = false): ModelError {
  if (discardPartial)
    return {
      code: 'bad-response',
      message: `The model sent a reply Arbor cannot accept: ${what}. Nothing of it was kept; retry the message.`,
      midStream,
      discardPartial,
    };
  return { code: 'bad-response', message: `The model sent a reply Arbor cannot accept: ${what}. ${KEPT}`, midStream };
}

/** The stream ended without a finish reason: the reply was cut, not completed. */
export function replyCut(midStream: boolean): ModelError {
  return { code: 'cut', message: `The model's stream ended without a finish reason, so the reply was cut off. ${KEPT}`, midStream };
}

/** Nothing arrived for the whole timeout once the response had begun. */
export function replyStalled(timeoutMs: number, midStream: boolean): ModelError {
  return { code: 'stalled', message: `The model stopped sending for ${timeoutMs / 1000} s. ${KEPT} If the model is just slow, raise the timeout.`, midStream };
}

/**
 * The provider answered with an error status; `said` is what its body says (the `error.message`
 * of the usual `{ "error": { … } }` body, else the body's text), led by the status.
 */
export class StatusError extends Error {
  constructor(
    readonly status: number,
    readonly said: string,
  ) {
    super(said);
    this.name = 'StatusError';
  }
}

/** The provider sent an error inside the stream (a `data:` object with an `error` field). */
export class StreamError extends Error {
  constructor(said: string) {
    super(said);
    this.name = 'StreamError';
  }
}

/** What a provider's error value says, as text (its `message` when it has one). */
export function errorText(error: unknown): string {
  if (error && typeof error === 'object' && 'message' in error && error.message) {
    const m = (error as { message: unknown }).message;
    return typeof m === 'string' ? m : JSON.stringify(m);
  }
  return JSON.stringify(error);
}

/** What an error status's body says: `<status> <the error's message>`, or that there was no body. */
export function statusSaid(status: number, bodyText: string): string {
  let said: string | undefined = bodyText.trim() || undefined;
  try {
    const json = JSON.parse(bodyText) as { error?: unknown } | null;
    said = json && typeof json === 'object' && json.error !== undefined ? errorText(json.error) : bodyText.trim() || undefined;
  } catch {
    // not JSON: its text
  }
  return said ? `${status} ${said}` : `${status} status code (no body)`;
}

type Ctx = { baseURL: string; model: string; midStream: boolean };

/** Turn whatever went wrong with a request into a ModelError that says what happened and what to do. */
export function classifyError(err: unknown, ctx: Ctx): ModelError {
  const { baseURL, midStream } = ctx;
  const e = (code: ModelError['code'], message: string, status?: number): ModelError => ({ code, message, status, midStream });
  if (err instanceof ReplyAnomaly) return replyAnomaly(err.what, midStream, err.discardPartial);
  if (err instanceof StatusError) return statusError(err, ctx);
  if (err instanceof StreamError) return e('bad-response', `The model stream broke off: ${err.message}. ${KEPT}`);
  if ((err instanceof PostFailure && err.kind === 'aborted') || (err instanceof Error && err.name === 'AbortError'))
    return e('aborted', 'The request was cancelled.');
  if (err instanceof PostFailure && err.kind === 'timeout')
    return e('timeout', `The model at ${baseURL} did not answer in time. Check the server, or raise the request timeout.`);
  if (err instanceof PostFailure && err.kind === 'redirect')
    return e('connection', `The model at ${baseURL} redirected the request too many times (${err.message}). Set the base URL to where it ends.`);
  if (err instanceof PostFailure)
    return e('connection', `Could not reach the model at ${baseURL} (${err.message}). Check the base URL setting and that the server is running.`);
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (midStream && (code === 'ECONNRESET' || code === 'EPIPE' || code === 'ERR_STREAM_PREMATURE_CLOSE'))
    return e('bad-response', `The model stream broke off (the connection closed: ${code}). ${KEPT}`);
  return e('bad-response', `The model's response could not be read (${describeError(err)}). ${KEPT}`);
}

function statusError(err: StatusError, { baseURL, model, midStream }: Ctx): ModelError {
  const { status } = err;
  const e = (code: ModelError['code'], message: string): ModelError => ({ code, message, status, midStream });
  const detail = ` Provider said: ${err.said}`;
  if (status === 401 || status === 403)
    return e(
      'auth',
      `The model provider refused the API key (${status}). Set a valid key (ARBOR_API_KEY, DEEPSEEK_API_KEY or OPENAI_API_KEY; in VS Code "Arbor: Set API Key").${detail}`,
    );
  if (status === 404)
    return e('model-not-found', `The model "${model}" was not found at ${baseURL} (404). Check the model name and base URL settings.${detail}`);
  if (status === 429) return e('rate-limit', `The model provider is rate limiting (429). Wait a moment and retry, or lower concurrency.${detail}`);
  if (status >= 500) return e('server', `The model provider failed (${status}). Retry later.${detail}`);
  if (status === 400 || status === 422) return e('bad-request', `The model provider rejected the request (${status}).${detail}`);
  return e('server', `The model provider answered ${status}.${detail}`);
}
