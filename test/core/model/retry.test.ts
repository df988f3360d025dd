import assert from 'node:assert/strict';
import { retryableStatus, retryDelayMs, sleep } from '../../../src/core/model/retry';

// When the model client tries again (decision 0094), as the openai SDK did (decision 0004).
describe('model: retries before the body', () => {
  it('retries 408, 409, 429 and 5xx, nothing else, unless x-should-retry says otherwise', () => {
    assert.deepEqual(
      [400, 401, 404, 408, 409, 422, 429, 500, 503].map((s) => retryableStatus(s, {})),
      [false, false, false, true, true, false, true, true, true],
    );
    assert.equal(retryableStatus(400, { 'x-should-retry': 'true' }), true);
    assert.equal(retryableStatus(503, { 'x-should-retry': 'false' }), false);
  });

  it('waits what the server asked (retry-after-ms, retry-after in seconds or as a date); more than a minute is not worth it', () => {
    assert.equal(retryDelayMs(0, { 'retry-after-ms': '250' }), 250);
    assert.equal(retryDelayMs(0, { 'retry-after': '2' }), 2_000);
    const at = retryDelayMs(0, { 'retry-after': new Date(Date.now() + 10_000).toUTCString() });
    assert.ok(at !== undefined && at > 8_000 && at <= 10_000, String(at));
    assert.equal(retryDelayMs(0, { 'retry-after': '120' }), undefined);
  });

  it('else 0.5 s doubling per attempt, at most 8 s, less up to a quarter at random', () => {
    assert.deepEqual(
      [0, 1, 2, 3, 4, 5].map((n) => retryDelayMs(n, undefined, () => 0)),
      [500, 1_000, 2_000, 4_000, 8_000, 8_000],
    );
    assert.equal(
      retryDelayMs(0, {}, () => 1),
      375,
    );
  });

  it('a sleep ends at once when its signal aborts', async () => {
    const ctl = new AbortController();
    const t = Date.now();
    setTimeout(() => ctl.abort(new Error('stop')), 20);
    await assert.rejects(sleep(10_000, ctl.signal), /stop/);
    assert.ok(Date.now() - t < 5_000);
  });
});
