import type { Budget } from '../session/budget';
import type { ModelPrice } from './prices';
import { formatUsd } from './spend';

/**
 * The completion cap a request carries under a budget when the deployment sets none
 * (`arbor.model.maxTokens`): a provider's usual default output cap. It is both what the
 * guard reserves and what the request sends (decision 0043), so a reply can never run past it.
 */
export const DEFAULT_COMPLETION_RESERVE = 4096;

/**
 * The least reply worth asking for: with less room than this under a budget, the request is
 * refused (the turn stops `budget`) rather than sent with a cap that cuts the reply at once.
 * A deployment's own smaller `maxTokens` lowers it to that.
 */
export const MIN_COMPLETION_CAP = 256;

/** What a budgeted scope holds now, as the guard counts it. */
export interface ScopeState {
  budget: Budget;
  spentTokens: number;
  /** Absent: a model with no price spent under it (its dollars are unknown). */
  spentUsd: number | undefined;
  reservedTokens: number;
  reservedUsd: number;
}

/** Room in one scope for a request's reply, in tokens after its prompt (`why` words a shortfall of `need`); or why none can be counted. */
export type Room = { tokens: number; why: (need: number) => string } | { closed: string };

/**
 * How many reply tokens a scope can still pay for after a prompt of `prompt` tokens: the least
 * over its token and its dollar limit (dollars at the model's cache-miss and output prices).
 */
export function roomIn(s: ScopeState, prompt: number, price: ModelPrice | undefined, model: string): Room {
  const b = s.budget;
  let room: Room = { tokens: Number.POSITIVE_INFINITY, why: () => 'nothing is left' };
  if (b.maxTokens !== undefined) {
    const left = b.maxTokens - s.spentTokens - s.reservedTokens;
    room = {
      tokens: left - prompt,
      why: (need) =>
        `${Math.max(0, left)} tokens are left${s.reservedTokens ? ` (besides ${s.reservedTokens} held by requests in flight)` : ''} and this request may take ${prompt + need} (a prompt of about ${prompt} plus ${need} for the reply)`,
    };
  }
  if (b.maxCostUsd !== undefined) {
    if (!price)
      return {
        closed: `model ${model} has no price, so its cost cannot be counted against a dollar budget (add its price in settings, or use a token budget)`,
      };
    if (s.spentUsd === undefined)
      return { closed: 'a model with no price already spent under it, so its cost is unknown (add the price in settings, or use a token budget)' };
    const left = b.maxCostUsd - s.spentUsd - s.reservedUsd;
    const promptUsd = (prompt * price.input) / 1_000_000;
    const byUsd = price.output > 0 ? Math.floor(((left - promptUsd) * 1_000_000) / price.output) : left >= promptUsd ? Number.POSITIVE_INFINITY : -1;
    if (byUsd < room.tokens)
      room = {
        tokens: byUsd,
        why: (need) =>
          `${formatUsd(Math.max(0, left))} is left${s.reservedUsd ? ' beside what requests in flight hold' : ''} and this request may cost ${formatUsd(promptUsd + (need * price.output) / 1_000_000)} (its prompt plus ${need} reply tokens)`,
      };
  }
  return room;
}

/** The cap a request gets: the ask, lowered to the least room of any scope above it (`by` names which). */
export interface CapDecision {
  cap: number;
  /** The scope whose room set the cap, when it is below the ask. */
  by?: string;
}

/**
 * One value for both sides (decision 0043): the completion the guard reserves is the cap the
 * request carries. `ask` is the deployment's own cap (or the default reserve); a request that
 * cannot carry a cap (`fixed`, a remote program's) gets all of its ask or nothing. Below the
 * floor the answer is a refusal: the scope and its shortfall, worded for the human.
 */
export function decideCap(
  ask: number,
  rooms: readonly { key: string; room: Room }[],
  fixed: boolean,
): { ok: CapDecision } | { short: { key: string; why: string } } {
  const floor = fixed ? ask : Math.min(MIN_COMPLETION_CAP, ask);
  let cap = ask;
  let by: string | undefined;
  for (const { key, room } of rooms) {
    if ('closed' in room) return { short: { key, why: room.closed } };
    if (room.tokens < floor) return { short: { key, why: room.why(floor) } };
    if (room.tokens < cap) {
      cap = room.tokens;
      by = key;
    }
  }
  return { ok: by === undefined ? { cap } : { cap, by } };
}
