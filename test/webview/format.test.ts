// lib/format.ts's `grouped`: the same text as toLocaleString('en-US'), without ICU for integers
// (decision 0067: an ICU formatter per hover text was most of the tree's first frame).
import * as assert from 'node:assert/strict';
import { grouped } from '../../webview/src/lib/format';

describe('webview format: grouped numbers', () => {
  it("writes what toLocaleString('en-US') writes, for integers of every length, negative ones, and fractions", () => {
    const values = [
      0,
      -0,
      7,
      42,
      999,
      1000,
      1001,
      12_345,
      999_999,
      1_000_000,
      1_201_100,
      123_456_789,
      Number.MAX_SAFE_INTEGER,
      -1,
      -1234,
      -987_654_321,
      0.5,
      1234.5678,
      2 ** 60,
      Number.NaN,
      Number.POSITIVE_INFINITY,
    ];
    for (let n = 1; n < 1e15; n = n * 10 + 7) values.push(n, -n);
    for (const v of values) assert.equal(grouped(v), v.toLocaleString('en-US'), String(v));
  });
});
