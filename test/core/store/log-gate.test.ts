import assert from 'node:assert/strict';
import { LogGate } from '../../../src/core/store/log-gate';

// The store's gate of a log no agent holds (decision 0129): one holder per session at a time,
// what was under way before a hold waited for too, a failed holder lets the next one in.

const tick = () => new Promise((r) => setImmediate(r));

describe('LogGate: one writer at a time per log', () => {
  it('runs one holder of a session at a time, in turn; another session’s is not held up', async () => {
    const gate = new LogGate();
    const order: string[] = [];
    let openA!: () => void;
    const a = gate.run('s', async () => {
      order.push('a in');
      await new Promise<void>((r) => (openA = r));
      order.push('a out');
    });
    const b = gate.run('s', async () => {
      order.push('b in');
    });
    const other = gate.run('t', async () => {
      order.push('t in');
    });
    await other;
    for (let i = 0; i < 5; i++) await tick();
    assert.deepEqual(order, ['a in', 't in'], 'b waits for a; t does not');
    openA();
    await Promise.all([a, b]);
    assert.deepEqual(order, ['a in', 't in', 'a out', 'b in']);
    assert.equal(gate.pending('s'), undefined, 'nothing held once both settled');
  });

  it('a holder that fails lets the next one in; its failure is its caller’s', async () => {
    const gate = new LogGate();
    const a = gate.run('s', async () => {
      throw new Error('refused');
    });
    const b = gate.run('s', async () => 'written');
    await assert.rejects(a, /refused/);
    assert.equal(await b, 'written');
  });

  it('a hold joins what held the log before it: a later writer waits for both (an agent leaving residency while a record goes in)', async () => {
    const gate = new LogGate();
    let openRecord!: () => void;
    let openFlush!: () => void;
    const done: string[] = [];
    const record = gate.run('s', () => new Promise<void>((r) => (openRecord = r)).then(() => void done.push('record')));
    await tick();
    const flush = gate.hold(
      's',
      new Promise<void>((r) => (openFlush = r)).then(() => void done.push('flush')),
    );
    const next = gate.run('s', async () => void done.push('next'));
    openFlush();
    await flush;
    for (let i = 0; i < 5; i++) await tick();
    assert.deepEqual(done, ['flush'], 'the next writer still waits for the record');
    openRecord();
    await Promise.all([record, next]);
    assert.deepEqual(done, ['flush', 'record', 'next']);
    await gate.drain();
    assert.equal(gate.pending('s'), undefined);
  });
});
