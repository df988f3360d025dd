import assert from 'node:assert/strict';
import { SseReader } from '../../../src/core/model/sse';

// The SSE reader under the model client (decision 0094): events however the bytes are split.
describe('model: server-sent events reader', () => {
  const all = (pieces: string[]) => {
    const r = new SseReader();
    return pieces.flatMap((p) => r.push(p));
  };

  it('one event per blank line; data lines joined with LF; comments and unknown fields ignored; the event name kept', () => {
    assert.deepEqual(all([': keep-alive\n\ndata: a\ndata: b\nid: 7\n\nevent: error\ndata:{"x":1}\n\n']), [
      { event: null, data: 'a\nb' },
      { event: 'error', data: '{"x":1}' },
    ]);
  });

  it('LF, CRLF and CR all end lines, also when a CRLF is split between two pieces', () => {
    assert.deepEqual(all(['data: 1\r\n\r\ndata: 2\r', '\n\r', '\ndata: 3\r\rdata: 4\n\n']), [
      { event: null, data: '1' },
      { event: null, data: '2' },
      { event: null, data: '3' },
      { event: null, data: '4' },
    ]);
  });

  it('an event split anywhere, even inside a field name, comes out whole', () => {
    const text = 'data: {"choices":[{"delta":{"content":"hé"}}]}\n\n';
    for (let cut = 1; cut < text.length; cut++)
      assert.deepEqual(all([text.slice(0, cut), text.slice(cut)]), [{ event: null, data: text.slice(6, -2) }], `cut at ${cut}`);
  });

  it('an event the stream ends inside is never dispatched (a cut reply ends cut, not with half a chunk)', () => {
    assert.deepEqual(all(['data: {"whole":1}\n\ndata: {"ha']), [{ event: null, data: '{"whole":1}' }]);
  });

  it('one giant line in a thousand pieces is one event, whole', () => {
    const big = 'x'.repeat(2 * 1024 * 1024);
    const text = `data: ${big}\n\n`;
    const pieces: string[] = [];
    for (let i = 0; i < text.length; i += 2048) pieces.push(text.slice(i, i + 2048));
    const evs = all(pieces);
    assert.equal(evs.length, 1);
    assert.equal(evs[0].data.length, big.length);
  });
});
