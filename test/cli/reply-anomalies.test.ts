import assert from 'node:assert/strict';
import { arbor, cliWorld } from '../support/cli';
import { rawChunk } from '../support/model-server';

// Issue 10.4 / 10.5 through the real CLI: the message that names the anomaly is printed,
// the exit code says the turn failed, and the session takes the next message.

describe('cli: a broken or silent model reply ends the turn with a printed reason', () => {
  const w = cliWorld('arbor-cli-anomaly-');

  it('prints the anomaly (a numeric tool-call id), exits 1, and the session takes the next message', async () => {
    w.server.enqueue({
      raw: [
        rawChunk({ tool_calls: [{ index: 0, id: 123, type: 'function', function: { name: 'list_files', arguments: '{}' } }] }),
        rawChunk({}, 'tool_calls'),
        'data: [DONE]\n\n',
      ],
    });
    const r = await arbor(['run', ...w.common, 'list the files']);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /turn ended: error — The model sent a reply Arbor cannot accept: a tool call id that is not text \(123\)/);
    const id = /session (\S+)/.exec(r.stderr)?.[1];
    assert.ok(id, r.stderr);

    w.server.enqueue({ text: 'Here they are.' });
    const next = await arbor(['send', ...w.common, id, 'try again']);
    assert.equal(next.code, 0, next.stderr);
    assert.match(next.stdout, /Here they are\./);
  });

  it('--timeout bounds the gap between chunks: a stream that goes silent ends with "stopped sending"', async () => {
    w.server.enqueue({ text: 'hello there', chunkSize: 5, fault: { kind: 'stall', afterChunks: 1 } });
    const r = await arbor(['run', ...w.common, '--timeout', '1000', 'say hello']);
    assert.equal(r.code, 1, `the process ended on its own (code ${r.code}): ${r.stderr}`);
    assert.match(r.stderr, /turn ended: error — The model stopped sending for 1 s/);
    assert.match(r.stdout, /^hello$/m, 'the partial answer is printed');
  });
});
