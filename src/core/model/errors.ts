import OpenAI from 'openai';
import { describeError } from '../errors';
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

/** Turn whatever the SDK threw into a ModelError that says what happened and what to do. */
export function classifyError(err: unknown, ctx: { baseURL: string; model: string; midStream: boolean }): ModelError {
  const { baseURL, model, midStream } = ctx;
  const e = (code: ModelError['code'], message: string, status?: number): ModelError => ({ code, message, status, midStream });
  if (err instanceof ReplyAnomaly) return replyAnomaly(err.what, midStream, err.discardPartial);
  if (err instanceof OpenAI.APIUserAbortError || (err instanceof Error && err.name === 'AbortError')) return e('aborted', 'The request was cancelled.');
  if (err instanceof OpenAI.APIConnectionTimeoutError)
    return e('timeout', `The model at ${baseURL} did not answer in time. Check the server, or raise the request timeout.`);
  if (err instanceof OpenAI.APIConnectionError)
    return e('connection', `Could not reach the model at ${baseURL} (${causeText(err)}). Check the base URL setting and that the server is running.`);
  if (err instanceof OpenAI.APIError) {
    const status = err.status;
    const detail = err.message ? ` Provider said: ${err.message}` : '';
    if (status === 401 || status === 403)
      return e(
        'auth',
        `The model provider refused the API key (${status}). Set a valid key (ARBOR_API_KEY, DEEPSEEK_API_KEY or OPENAI_API_KEY; in VS Code "Arbor: Set API Key").${detail}`,
        status,
      );
    if (status === 404)
      return e('model-not-found', `The model "${model}" was not found at ${baseURL} (404). Check the model name and base URL settings.${detail}`, status);
    if (status === 429) return e('rate-limit', `The model provider is rate limiting (429). Wait a moment and retry, or lower concurrency.${detail}`, status);
    if (status !== undefined && status >= 500) return e('server', `The model provider failed (${status}). Retry later.${detail}`, status);
    if (status === 400 || status === 422) return e('bad-request', `The model provider rejected the request (${status}).${detail}`, status);
    if (status === undefined) return e('bad-response', `The model stream broke off: ${err.message}. The partial answer was kept; retry the message.`);
    return e('server', `The model provider answered ${status}.${detail}`, status);
  }
  const msg = describeError(err);
  return e('bad-response', `The model's response could not be read (${msg}). The partial answer was kept; retry the message.`);
}

function causeText(err: Error): string {
  const c = (err as { cause?: { code?: string; message?: string } }).cause;
  return c?.code ?? c?.message ?? err.message;
}
