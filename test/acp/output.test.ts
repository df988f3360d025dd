import * as assert from 'node:assert/strict';
import type { AnyMessage } from '@agentclientprotocol/sdk/unstable';
import { BatchedOutput } from '../../src/acp/output';

// `arbor acp`'s stdout (decision 0065): a moment's messages in one write, in order; an answer
// never waits for the notification timer; a failed stdout fails every later write.

const note = (n: number): AnyMessage => ({ jsonrpc: '2.0', method: 'session/update', params: { n } });
const answer = (id: number): AnyMessage => ({ jsonrpc: '2.0', id, result: { stopReason: 'end_turn' } });
const tick = () => new Promise((r) => setImmediate(r));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function world(holdMs: number) {
  const writes: string[] = [];
  const out = new BatchedOutput({ write: (t) => writes.push(t) }, holdMs);
  const w = out.messages().getWriter();
  const lines = () => writes.join('').split('\n').filter(Boolean);
  return { out, w, writes, lines };
}

describe('acp output: messages batched per moment', () => {
  it('notifications wait for the hold, then leave together in one write, in order', async () => {
    const { w, writes, lines } = world(40);
    for (let n = 0; n < 5; n++) await w.write(note(n));
    await sleep(10);
    assert.deepEqual(writes, [], 'held while the hold runs');
    await sleep(80);
    assert.equal(writes.length, 1);
    assert.deepEqual(
      lines().map((l) => (JSON.parse(l) as { params: { n: number } }).params.n),
      [0, 1, 2, 3, 4],
    );
  });

  it('an answer goes at the end of the tick with everything held before it: one write, not one per message', async () => {
    const { w, writes, lines } = world(60_000);
    await w.write(note(1));
    await w.write(note(2));
    await w.write(answer(7));
    await tick();
    await tick();
    assert.equal(writes.length, 1, 'the notifications rode with the answer');
    assert.deepEqual(
      lines().map((l) => JSON.parse(l) as Record<string, unknown>),
      [note(1), note(2), answer(7)],
    );
  });

  it('a request to the client (it has an id) is not held either, and what follows it in the same tick joins it', async () => {
    const { w, writes, lines } = world(60_000);
    const ask: AnyMessage = { jsonrpc: '2.0', id: 3, method: 'session/request_permission', params: {} };
    await w.write(ask);
    await w.write(note(9));
    await tick();
    await tick();
    assert.equal(writes.length, 1);
    assert.deepEqual(
      lines().map((l) => JSON.parse(l) as Record<string, unknown>),
      [ask, note(9)],
    );
  });

  it("the SDK's own replies to malformed input (bytes) go out this tick, in order with the rest", async () => {
    const { out, w, lines } = world(60_000);
    await w.write(note(1));
    const bytes = out.bytes().getWriter();
    await bytes.write(new TextEncoder().encode('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}\n'));
    await tick();
    await tick();
    assert.deepEqual(
      lines().map((l) => Object.keys(JSON.parse(l) as object)),
      [
        ['jsonrpc', 'method', 'params'],
        ['jsonrpc', 'id', 'error'],
      ],
    );
  });

  it('with no hold (as arbor acp runs it), notifications of one tick share a write at its end', async () => {
    const { w, writes, lines } = world(0);
    for (let n = 0; n < 3; n++) await w.write(note(n));
    assert.deepEqual(writes, []);
    await tick();
    await tick();
    assert.equal(writes.length, 1);
    assert.equal(lines().length, 3);
    await w.write(note(3));
    await tick();
    await tick();
    assert.equal(writes.length, 2, 'a later tick, a later write');
  });

  it('flush() writes what is held now (before exit)', async () => {
    const { out, w, writes } = world(60_000);
    await w.write(note(1));
    out.flush();
    assert.equal(writes.length, 1);
    out.flush();
    assert.equal(writes.length, 1, 'nothing held, nothing written');
  });

  it('once stdout has failed, what is held is dropped and every later write rejects (the SDK then closes the connection)', async () => {
    let calls = 0;
    const out = new BatchedOutput(
      {
        write: () => {
          calls++;
          throw new Error('EPIPE');
        },
      },
      60_000,
    );
    const w = out.messages().getWriter();
    await w.write(answer(1));
    await tick();
    await tick();
    assert.equal(calls, 1);
    await assert.rejects(w.write(note(2)), /EPIPE/);
    const fresh = new BatchedOutput({ write: () => assert.fail('nothing is written after a failure') }, 10);
    fresh.fail(new Error('stdout closed'));
    await assert.rejects(fresh.messages().getWriter().write(note(3)), /stdout closed/);
    await sleep(30);
  });
});
