import assert from 'node:assert/strict';
import { DEFAULT_MAX_CONCURRENT_CHILDREN, FanoutLimiter } from '../../../src/core/subagent/fanout';

// The slot bookkeeping on its own: who runs, who waits and in which order.
describe('subagent: the fan-out limiter', () => {
  const tick = () => new Promise((r) => setImmediate(r));
  /** Enter and record when the slot is granted. */
  function enter(l: FanoutLimiter, id: string, granted: string[], signal = new AbortController().signal): Promise<void> {
    return l.enter(id, signal).then(() => void granted.push(id));
  }

  it('defaults to 8 and refuses a limit below 1 or not whole, saying what it needs', () => {
    assert.equal(new FanoutLimiter().limit, DEFAULT_MAX_CONCURRENT_CHILDREN);
    assert.equal(DEFAULT_MAX_CONCURRENT_CHILDREN, 8);
    for (const bad of [0, -1, 1.5, Number.NaN]) assert.throws(() => new FanoutLimiter(bad), /at least 1/);
    const l = new FanoutLimiter(2);
    assert.throws(() => (l.limit = 0), /at least 1/);
    assert.equal(l.limit, 2);
  });

  it('admits up to the limit, then queues in FIFO order; each leave admits the head', async () => {
    const changed: string[] = [];
    const l = new FanoutLimiter(2, (id) => changed.push(id));
    const granted: string[] = [];
    for (const id of ['a', 'b', 'c', 'd', 'e']) void enter(l, id, granted);
    await tick();
    assert.deepEqual(granted, ['a', 'b']);
    assert.deepEqual(l.queued(), ['c', 'd', 'e']);
    assert.ok(l.isQueued('d') && !l.isQueued('a'));
    l.leave('b');
    await tick();
    assert.deepEqual(granted, ['a', 'b', 'c']);
    l.leave('a');
    l.leave('c');
    await tick();
    assert.deepEqual(granted, ['a', 'b', 'c', 'd', 'e']);
    assert.equal(l.running, 2);
    assert.deepEqual(l.queued(), []);
    // Views heard of every child that joined or left the queue.
    for (const id of ['c', 'd', 'e']) assert.ok(changed.filter((x) => x === id).length >= 2, id);
  });

  it('a waiter aborted before its turn leaves the queue without a slot; the next one gets the freed slot', async () => {
    const l = new FanoutLimiter(1);
    const granted: string[] = [];
    void enter(l, 'a', granted);
    const stop = new AbortController();
    let bDone = false;
    void l.enter('b', stop.signal).then(() => (bDone = true));
    void enter(l, 'c', granted);
    await tick();
    stop.abort();
    await tick();
    assert.equal(bDone, true, 'the aborted enter resolved');
    assert.deepEqual(l.queued(), ['c']);
    l.leave('b'); // its turn ends: it held nothing
    assert.equal(l.running, 1);
    l.leave('a');
    await tick();
    assert.deepEqual(granted, ['a', 'c']);
  });

  it('a holder waiting on its children lends its slot; it takes one again ahead of children that never started', async () => {
    const l = new FanoutLimiter(1);
    const granted: string[] = [];
    await enter(l, 'p', granted);
    void enter(l, 'q', granted); // queued behind p
    let finish!: () => void;
    const waiting = l.lend('p', new Promise<void>((r) => (finish = r)));
    await tick();
    assert.deepEqual(granted, ['p', 'q'], 'q took the lent slot');
    void enter(l, 'g', granted); // p's child, queued
    await tick();
    finish();
    await waiting;
    void enter(l, 'p', granted); // p's next request
    await tick();
    assert.deepEqual(l.queued(), ['p', 'g'], 'the resuming holder goes first');
    l.leave('q');
    await tick();
    assert.deepEqual(granted, ['p', 'q', 'p']);
    // A root (no slot) lends nothing.
    assert.equal(await l.lend('root', Promise.resolve(7)), 7);
    assert.equal(l.running, 1);
  });

  it('a higher limit admits queued children at once; a lower one lets the running finish', async () => {
    const l = new FanoutLimiter(1);
    const granted: string[] = [];
    for (const id of ['a', 'b', 'c']) void enter(l, id, granted);
    await tick();
    l.limit = 3;
    await tick();
    assert.deepEqual(granted, ['a', 'b', 'c']);
    l.limit = 1;
    void enter(l, 'd', granted);
    l.leave('a');
    l.leave('b');
    await tick();
    assert.deepEqual(l.queued(), ['d'], 'two of three left, one still runs: at the limit');
    l.leave('c');
    await tick();
    assert.deepEqual(granted, ['a', 'b', 'c', 'd']);
  });
});
