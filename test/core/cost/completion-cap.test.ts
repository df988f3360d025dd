import assert from 'node:assert/strict';
import { decideCap, MIN_COMPLETION_CAP, type Room, roomIn, type ScopeState } from '../../../src/core/cost/completion-cap';

// Decision 0043: one number is both the completion a budget reserves and the cap the request
// carries. These are the rules that compute it: the room each budget has for a reply after the
// prompt (tokens and dollars), the least room lowering the ask, the floor below which a request
// is refused, and requests that cannot carry a cap (all of the ask or nothing).

const PRICE = { input: 1, cacheHit: 0.1, output: 2 }; // USD per million tokens
const scope = (over: Partial<ScopeState>): ScopeState => ({
  budget: { maxTokens: 10_000 },
  spentTokens: 0,
  spentUsd: 0,
  reservedTokens: 0,
  reservedUsd: 0,
  ...over,
});
const tokensOf = (r: Room) => {
  assert.ok(!('closed' in r), 'closed' in r ? r.closed : '');
  return r.tokens;
};

describe('cost: the completion cap a budget grants', () => {
  it('a token budget has room for what is left after spent, reserved and the prompt', () => {
    assert.equal(tokensOf(roomIn(scope({ spentTokens: 2_000, reservedTokens: 1_000 }), 500, PRICE, 'm')), 6_500);
  });

  it('a dollar budget has room for what its remaining dollars buy at the output price after the prompt at the cache-miss price', () => {
    const s = scope({ budget: { maxCostUsd: 0.01 }, spentUsd: 0.004 });
    // $0.006 left − 1,000 prompt tokens × $1/M = $0.005, at $2/M output = 2,500 tokens.
    assert.equal(tokensOf(roomIn(s, 1_000, PRICE, 'm')), 2_500);
    // Both limits: the lesser room holds.
    assert.equal(tokensOf(roomIn({ ...s, budget: { maxTokens: 2_000, maxCostUsd: 0.01 } }, 1_000, PRICE, 'm')), 1_000);
  });

  it('a dollar budget over a model with no price, or with unknown spending, has no room to count (fail closed)', () => {
    const noPrice = roomIn(scope({ budget: { maxCostUsd: 1 } }), 10, undefined, 'mystery');
    assert.ok('closed' in noPrice && /model mystery has no price/.test(noPrice.closed));
    const unknown = roomIn(scope({ budget: { maxCostUsd: 1 }, spentUsd: undefined }), 10, PRICE, 'm');
    assert.ok('closed' in unknown && /cost is unknown/.test(unknown.closed));
  });

  it('the ask is lowered to the least room over every scope above, and says which scope lowered it', () => {
    const rooms = [
      { key: 'root', room: roomIn(scope({ budget: { maxTokens: 100_000 } }), 500, PRICE, 'm') },
      { key: 'child', room: roomIn(scope({ budget: { maxTokens: 3_000 } }), 500, PRICE, 'm') },
    ];
    assert.deepEqual(decideCap(4_096, rooms, false), { ok: { cap: 2_500, by: 'child' } });
    assert.deepEqual(decideCap(2_000, rooms, false), { ok: { cap: 2_000 } }, 'room to spare: the ask stands');
  });

  it('below the floor the answer is a refusal naming the scope and what the request needs; a smaller own cap lowers the floor', () => {
    const tight = [{ key: 'root', room: roomIn(scope({ spentTokens: 9_400 }), 400, PRICE, 'm') }]; // room 200
    const short = decideCap(4_096, tight, false);
    assert.ok('short' in short);
    assert.equal(short.short.key, 'root');
    assert.equal(
      short.short.why,
      `600 tokens are left and this request may take ${400 + MIN_COMPLETION_CAP} (a prompt of about 400 plus ${MIN_COMPLETION_CAP} for the reply)`,
    );
    assert.deepEqual(decideCap(150, tight, false), { ok: { cap: 150 } }, 'an own cap of 150 fits in 200');
  });

  it('a request that cannot carry a cap (a remote program) gets all of its ask or a refusal', () => {
    const rooms = [{ key: 'root', room: roomIn(scope({}), 500, PRICE, 'm') }]; // room 9,500
    assert.deepEqual(decideCap(4_096, rooms, true), { ok: { cap: 4_096 } });
    assert.ok('short' in decideCap(20_000, rooms, true));
  });
});
