import * as assert from 'node:assert/strict';
import { editScript, type Op, unifiedDiff } from '../../../src/core/tools/diff';

// The line diff behind approval cards and rewind previews (diff.ts, Myers' O(ND) script):
// always a true script from one text to the other, always a shortest one, and exact for long
// files with a few edits far apart, which the old quadratic table gave up on (whole-file).

/** A deterministic pseudo-random sequence (no test may depend on the run). */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** The length of a longest common subsequence, by the plain table: the reference for minimality. */
function lcsLength(a: string[], b: string[]): number {
  let prev = new Array<number>(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    const row = new Array<number>(b.length + 1).fill(0);
    for (let j = 1; j <= b.length; j++) row[j] = a[i - 1] === b[j - 1] ? prev[j - 1] + 1 : Math.max(prev[j], row[j - 1]);
    prev = row;
  }
  return prev[b.length];
}

const side = (ops: Op[], keep: '-' | '+') => ops.filter((o) => o.op === ' ' || o.op === keep).map((o) => o.line);
const changes = (ops: Op[]) => ops.filter((o) => o.op !== ' ').length;

describe('line diff: a shortest true script, exact for long files', () => {
  it('600 random pairs over a small alphabet: the script turns one into the other and is as short as any can be', () => {
    const next = rng(42);
    for (let round = 0; round < 600; round++) {
      const make = () => Array.from({ length: Math.floor(next() * 14) }, () => 'abcde'[Math.floor(next() * 5)]);
      const a = make();
      const b = make();
      const ops = editScript(a, b);
      assert.deepEqual(side(ops, '-'), a, `round ${round}: the kept and removed lines are a`);
      assert.deepEqual(side(ops, '+'), b, `round ${round}: the kept and added lines are b`);
      assert.equal(changes(ops), a.length + b.length - 2 * lcsLength(a, b), `round ${round}: ${JSON.stringify(a)} → ${JSON.stringify(b)} is not shortest`);
    }
  });

  it('within a run of changes, the removed lines come before the added ones', () => {
    const ops = editScript(['k', 'a', 'b', 'k2'], ['k', 'x', 'y', 'k2']);
    assert.deepEqual(
      ops.map((o) => `${o.op}${o.line}`),
      [' k', '-a', '-b', '+x', '+y', ' k2'],
    );
  });

  it('a 20,000-line file with two edits far apart: two small hunks, not the whole file', () => {
    const before = Array.from({ length: 20_000 }, (_, i) => `line ${i}`);
    const after = [...before];
    after[100] = 'line one hundred';
    after[19_900] = 'line nineteen thousand nine hundred';
    const d = unifiedDiff(`${before.join('\n')}\n`, `${after.join('\n')}\n`, 'big.txt');
    const hunks = d.split('\n').filter((l) => l.startsWith('@@'));
    assert.deepEqual(hunks, ['@@ -98,7 +98,7 @@', '@@ -19898,7 +19898,7 @@']);
    assert.equal(d.split('\n').filter((l) => /^[-+][^-+]/.test(l)).length, 4, 'two lines out, two in');
  });

  it('a 200,000-line file with its first and last lines changed: two hunks (a spread of its middle overflowed the call stack)', () => {
    const before = Array.from({ length: 200_000 }, (_, i) => `row ${i}`);
    const after = [...before];
    after[0] = 'first';
    after[199_999] = 'last';
    const hunks = unifiedDiff(`${before.join('\n')}\n`, `${after.join('\n')}\n`, 'huge.txt')
      .split('\n')
      .filter((l) => l.startsWith('@@'));
    assert.deepEqual(hunks, ['@@ -1,4 +1,4 @@', '@@ -199997,4 +199997,4 @@']);
  });

  it('files with no line in common, and files too different to search: every line out, then every line in, still a true script', () => {
    const disjoint = editScript(['a', 'b'], ['x', 'y', 'z']);
    assert.deepEqual(
      disjoint.map((o) => `${o.op}${o.line}`),
      ['-a', '-b', '+x', '+y', '+z'],
    );
    // 3,000 lines against a shuffle of them: the shortest script is far past the step bound.
    const next = rng(7);
    const a = Array.from({ length: 3000 }, (_, i) => `l${i}`);
    const b = [...a];
    for (let i = b.length - 1; i > 0; i--) {
      const j = Math.floor(next() * (i + 1));
      [b[i], b[j]] = [b[j], b[i]];
    }
    const ops = editScript(a, b);
    assert.deepEqual(side(ops, '-'), a);
    assert.deepEqual(side(ops, '+'), b);
  });

  it('the unified diff keeps its format: hunk headers, context, a new file, no change', () => {
    const before = `${Array.from({ length: 20 }, (_, i) => `line ${i + 1}`).join('\n')}\n`;
    const after = before.replace('line 10\n', 'line ten\n');
    assert.equal(
      unifiedDiff(before, after, 'f.txt'),
      ['--- a/f.txt', '+++ b/f.txt', '@@ -7,7 +7,7 @@', ' line 7', ' line 8', ' line 9', '-line 10', '+line ten', ' line 11', ' line 12', ' line 13'].join(
        '\n',
      ),
    );
    assert.equal(unifiedDiff('', 'x\ny\n', 'n'), '--- a/n\n+++ b/n\n@@ -0,0 +1,2 @@\n+x\n+y');
    assert.equal(unifiedDiff('same\n', 'same\n'), '');
  });
});
