import { describeError } from '../errors';
import { MAX_CAP_FIELD_BYTES } from '../model/request';
import type { ModelRequest, RequestInfo } from '../model/types';
import type { AgentConfig, RequestBound } from './config';

/** A granted cap: what the request carries, and the budget that lowered it if one did. */
export interface GrantedCap {
  maxTokens: number;
  loweredBy?: string;
}

/** A request ready to send (described: its bytes are the ones that go), or why none may go. */
export type ReadyRequest = { refused: string } | { req: ModelRequest; info: RequestInfo; cap?: GrantedCap };

/**
 * Ask the budgets above the session before a request (decision 0043). Under a budget the
 * request goes out carrying the cap the guard reserved — one number, computed once by the
 * guard — so the provider stops the reply where the reservation ends. The body is measured
 * before its cap is known, so the cap field's largest size is counted on top: the prompt
 * estimate covers the body that is sent.
 */
export function budgetedRequest(cfg: AgentConfig, asked: ModelRequest, compaction = false): ReadyRequest {
  const info = cfg.model.describe(asked);
  if (!cfg.beforeRequest) return { req: asked, info };
  const bytes = info.bytes + (asked.maxTokens === undefined ? MAX_CAP_FIELD_BYTES : 0);
  const need: RequestBound = {
    model: asked.model,
    bytes,
    ...(asked.maxTokens !== undefined ? { maxTokens: asked.maxTokens } : {}),
    ...(compaction ? { compaction: true } : {}),
  };
  let verdict: ReturnType<NonNullable<AgentConfig['beforeRequest']>>;
  try {
    verdict = cfg.beforeRequest(need);
  } catch (err) {
    return { refused: `The budget check failed (${describeError(err)}); no request was made.` };
  }
  if (!verdict) return { req: asked, info };
  if ('refuse' in verdict) return { refused: verdict.refuse };
  const cap: GrantedCap = { maxTokens: verdict.maxTokens, ...(verdict.loweredBy ? { loweredBy: verdict.loweredBy } : {}) };
  if (verdict.maxTokens === asked.maxTokens) return { req: asked, info, cap };
  const req = { ...asked, maxTokens: verdict.maxTokens };
  return { req, info: cfg.model.describe(req), cap };
}

/**
 * The `beforeRequest` hook's refusal, if any, for a request that cannot carry a cap (a remote
 * program's start): all of its bound must fit. A hook that throws refuses (fail closed), its
 * message followed by `thrownTail`.
 */
export function budgetRefusal(cfg: AgentConfig, need: RequestBound, thrownTail = ''): string | undefined {
  if (!cfg.beforeRequest) return undefined;
  try {
    const verdict = cfg.beforeRequest({ ...need, fixed: true });
    return verdict && 'refuse' in verdict ? verdict.refuse : undefined;
  } catch (err) {
    return `The budget check failed (${describeError(err)})${thrownTail}`;
  }
}

/** Why a reply under a budget stopped at its cap (finish reason `length`), and what to do. */
export function cutByCap(cap: GrantedCap, ownCap: number | undefined): string {
  const at = `The reply was cut at ${cap.maxTokens} tokens`;
  if (cap.loweredBy)
    return `${at}: ${cap.loweredBy}. Raise the budget (Set Budget on its node, or 'arbor send --budget'), then send a message to go on from here.`;
  if (ownCap !== undefined)
    return `${at}, the most a reply may take here (arbor.model.maxTokens, or --max-tokens). Raise it for longer replies, then send a message to go on from here.`;
  return `${at}: under a budget every request carries a reply cap, ${cap.maxTokens} tokens unless arbor.model.maxTokens (or --max-tokens) sets one. Set it higher for longer replies (the budget still holds), then send a message to go on from here.`;
}
