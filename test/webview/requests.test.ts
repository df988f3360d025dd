import * as assert from 'node:assert/strict';
import type { WebviewToHost } from '../../src/protocol';
import { hintFor } from '../../webview/src/lib/error-hints';
import { RequestError, Requests } from '../../webview/src/lib/requests';

describe('webview requests: typed answers by id', () => {
  const make = () => {
    const sent: WebviewToHost[] = [];
    let n = 0;
    return {
      sent,
      requests: new Requests(
        (m) => sent.push(m),
        () => `r${++n}`,
      ),
    };
  };

  it('posts the request with a fresh id and resolves with what its answer carries', async () => {
    const { sent, requests } = make();
    const { id, answer } = requests.send({ type: 'transcript/more', sessionId: 's-1', beforeSeq: 40 });
    assert.deepEqual(sent, [{ type: 'transcript/more', sessionId: 's-1', beforeSeq: 40, id: 'r1' }]);
    assert.equal(requests.settle({ type: 'request/done', id, ok: true, sessionId: 's-1', entries: [], hasMore: false }), true);
    assert.deepEqual(await answer, { sessionId: 's-1', entries: [], hasMore: false });
    assert.equal(requests.pending, 0);
  });

  it('rejects with the error and its code; an answer nobody waits for is not settled', async () => {
    const { requests } = make();
    const { id, answer } = requests.send({ type: 'goal/resume', sessionId: 's-1' });
    assert.equal(requests.settle({ type: 'request/done', id: 'other', ok: false, error: 'x' }), false);
    requests.settle({ type: 'request/done', id, ok: false, error: 'Every round is used.', code: 'ROUNDS_EXHAUSTED' });
    const err = await answer.then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof RequestError);
    assert.deepEqual([err.message, err.code], ['Every round is used.', 'ROUNDS_EXHAUSTED']);
    assert.equal(requests.settle({ type: 'request/done', id, ok: true }), false, 'answered once');
  });

  it('knows what to do about the codes a panel action meets, and nothing about others', () => {
    assert.match(hintFor('ROUNDS_EXHAUSTED') ?? '', /Raise the round limit/);
    assert.equal(hintFor('toString'), undefined);
    assert.equal(hintFor('E_SOMETHING'), undefined);
    assert.equal(hintFor(undefined), undefined);
  });
});
