import assert from 'node:assert/strict';
import { boundAnswer, countSkipped, cutBytes, REMOTE_BOUNDS, TurnBounds } from '../../../src/core/subagent/remote-bounds';

// The bounds of one remote turn (decision 0044): what is kept is charged, what does not fit is
// dropped and counted; a child's answer for its parent keeps its head and its end.
describe('remote bounds: what one remote turn keeps', () => {
  it('cutBytes cuts on a character boundary at most the bytes asked', () => {
    assert.equal(cutBytes('abcdef', 3), 'abc');
    assert.equal(cutBytes('ééé', 3), 'é'); // 2 bytes each: a second one would be 4
    assert.equal(cutBytes('a🌳b', 3), 'a'); // never half a surrogate pair
    assert.equal(cutBytes('short', 100), 'short');
    assert.equal(cutBytes('x', 0), '');
  });

  it('a turn keeps at most turnBytes in all, each item at most what it is given, and then nothing', () => {
    const b = new TurnBounds();
    const item = b.take('y'.repeat(REMOTE_BOUNDS.itemBytes * 2), REMOTE_BOUNDS.itemBytes);
    assert.deepEqual([item.kept.length, item.dropped], [REMOTE_BOUNDS.itemBytes, REMOTE_BOUNDS.itemBytes]);
    const big = b.take('x'.repeat(REMOTE_BOUNDS.turnBytes));
    assert.equal(big.kept.length, REMOTE_BOUNDS.turnBytes - REMOTE_BOUNDS.itemBytes);
    assert.equal(b.room(), 0);
    assert.deepEqual(b.take('more'), { kept: '', dropped: 4 });
  });

  it('a turn keeps at most toolCalls calls', () => {
    const b = new TurnBounds();
    let kept = 0;
    for (let i = 0; i < REMOTE_BOUNDS.toolCalls + 50; i++) if (b.call()) kept++;
    assert.equal(kept, REMOTE_BOUNDS.toolCalls);
  });

  it("boundAnswer keeps a child's answer to answerBytes plus a note, with its head and its end", () => {
    const text = `HEAD${'m'.repeat(REMOTE_BOUNDS.answerBytes * 4)}[the truncation note]`;
    const out = boundAnswer(text);
    assert.ok(Buffer.byteLength(out) < REMOTE_BOUNDS.answerBytes + 1024, `${Buffer.byteLength(out)} bytes`);
    assert.ok(out.startsWith('HEAD'));
    assert.ok(out.endsWith('[the truncation note]'));
    const note = /\[… Arbor left out (\d+) KiB of this 1\.0 MiB answer here/.exec(out);
    assert.ok(note, 'the answer says what was left out');
    assert.ok(Number(note[1]) >= 700 && Number(note[1]) <= 800, `${note[1]} KiB left out`);
    assert.equal(boundAnswer('a short answer'), 'a short answer');
  });

  it('skipped kinds a program names are counted in a table of bounded size, "__proto__" included', () => {
    const counts: Record<string, number> = {};
    for (let i = 0; i < 10_000; i++) countSkipped(counts, `unknown:${i}${'k'.repeat(1000)}`);
    countSkipped(counts, '__proto__');
    assert.equal(Object.keys(counts).length, REMOTE_BOUNDS.skippedKinds + 1);
    assert.equal(counts.other, 10_000 - REMOTE_BOUNDS.skippedKinds + 1);
    assert.ok(Object.keys(counts).every((k) => k.length <= 101));
    const fresh: Record<string, number> = {};
    countSkipped(fresh, '__proto__');
    countSkipped(fresh, '__proto__');
    assert.equal(Object.getOwnPropertyDescriptor(fresh, '__proto__')?.value, 2);
  });
});
