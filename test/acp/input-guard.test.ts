import assert from 'node:assert/strict';
import { headOf, LineGuard, type Refusal, refusalAnswer, refusalText } from '../../src/acp/input-guard';

const enc = new TextEncoder();
const dec = new TextDecoder();

/** Feeds `text` to a guard in chunks of `size` bytes; what went on (as text) and what was refused. */
function run(text: string, size: number, limits = { maxBytes: 200, maxDepth: 4 }): { passed: string; refused: Refusal[] } {
  const refused: Refusal[] = [];
  const guard = new LineGuard(limits, (r) => refused.push(r));
  const bytes = enc.encode(text);
  let passed = '';
  const out = (b: Uint8Array) => (passed += dec.decode(b));
  for (let i = 0; i < bytes.length; i += size) guard.push(bytes.subarray(i, i + size), out);
  guard.end(out);
  return { passed, refused };
}

describe('acp: the input guard in front of the SDK (lines too large or too deep)', () => {
  it('lines within the limits pass unchanged, whatever the chunking; a last line without a newline too; empty lines are skipped (as the SDK does)', () => {
    const text = '{"jsonrpc":"2.0","id":1,"method":"a","params":{"x":[[1]]}}\n\n{"id":"é\\"{{{{{"}\r\n{"tail":true}';
    for (const size of [1, 2, 3, 7, 64, 4096]) assert.deepEqual(run(text, size), { passed: text.replace('\n\n', '\n'), refused: [] }, `chunks of ${size}`);
  });

  it('brackets inside strings (escaped quotes included, split across chunks) are not nesting', () => {
    const line = `{"t":"${'[{'.repeat(50)}\\"${'[['.repeat(50)}"}\n`;
    for (const size of [1, 5, 4096]) assert.deepEqual(run(line, size, { maxBytes: 1000, maxDepth: 4 }), { passed: line, refused: [] });
  });

  it('a line past the depth or the size is dropped, the lines around it pass; the refusal names its id and method', () => {
    const deep = `{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"a":{"b":{"c":{}}}}}`;
    const big = `{"jsonrpc":"2.0","id":"k-1","method":"session/new","params":{"x":"${'a'.repeat(300)}"}}`;
    const text = `{"id":1}\n${deep}\n{"id":2}\n${big}\n{"id":3}\n`;
    for (const size of [1, 13, 4096]) {
      const r = run(text, size);
      assert.equal(r.passed, '{"id":1}\n{"id":2}\n{"id":3}\n', `chunks of ${size}`);
      assert.deepEqual(r.refused, [
        { code: 'MESSAGE_TOO_DEEP', bytes: deep.length, id: 7, method: 'session/prompt' },
        { code: 'MESSAGE_TOO_LARGE', bytes: big.length, id: 'k-1', method: 'session/new' },
      ]);
    }
  });

  it('the head: id and method at the top level only, before or after other members; what is cut or nested is not taken', () => {
    assert.deepEqual(headOf('{"jsonrpc":"2.0","id":5,"method":"m","params":{'), { id: 5, method: 'm' });
    assert.deepEqual(headOf('{"params":{"id":9,"method":"x","v":["]"]},"method":"m","id":"s\\"1"}'), { id: 's"1', method: 'm' });
    assert.deepEqual(headOf('{"method":"session/cancel","params":{"sessionId":"s-1"'), { method: 'session/cancel' });
    assert.deepEqual(headOf('{"params":{"x":"aaaa'), {});
    assert.deepEqual(headOf('[{"id":1}]'), {});
    assert.deepEqual(headOf('{"id":12'), {}, 'a number cut at the end of the head may be longer');
  });

  it('the answer: an invalid request with the id (null when none was found), none for a notification', () => {
    const text = refusalText({ code: 'MESSAGE_TOO_LARGE', bytes: 40 * 1024 * 1024 });
    assert.match(text, /40 MiB, past the 32 MiB/);
    assert.deepEqual(refusalAnswer({ code: 'MESSAGE_TOO_LARGE', bytes: 1, id: 3, method: 'm' }, 'why'), {
      jsonrpc: '2.0',
      id: 3,
      error: { code: -32600, message: 'Invalid request: why', data: { code: 'MESSAGE_TOO_LARGE', message: 'why' } },
    });
    assert.equal((refusalAnswer({ code: 'MESSAGE_TOO_DEEP', bytes: 1 }, 'why') as { id: unknown }).id, null);
    assert.equal(refusalAnswer({ code: 'MESSAGE_TOO_DEEP', bytes: 1, method: 'session/cancel' }, 'why'), undefined);
  });
});
