import * as assert from 'node:assert/strict';
import { OutputBuffer } from '../../../src/core/tools/output-buffer';

describe('OutputBuffer (run_command output cap)', () => {
  it('keeps everything under the cap', () => {
    const b = new OutputBuffer(10);
    b.push(Buffer.from('abc'));
    b.push(Buffer.from('defgh'));
    assert.equal(b.toString(), 'abcdefgh');
    assert.equal(b.truncated, false);
  });

  it('keeps the first and last halves past the cap, across chunk boundaries', () => {
    const b = new OutputBuffer(6);
    for (const s of ['ab', 'cd', 'ef', 'gh', 'ij']) b.push(Buffer.from(s));
    assert.equal(b.total, 10);
    assert.equal(b.truncated, true);
    assert.equal(b.toString(), 'abc\n[… 4 bytes omitted (output is capped at 6 bytes: first and last halves kept) …]\nhij');
  });
});
