import assert from 'node:assert/strict';
import { type SchedulerHost, TurnScheduler } from '../../../src/core/agent/scheduling';

// Decision 0075, amended: a turn opens on the next tick behind its message, unless it would only
// queue for a fan-out slot; then it yields to the turns that run and opens a few ticks later,
// in the order it yielded, a few per tick. A cancel opens it at once.

const tick = () => new Promise<void>((r) => setImmediate(r));

/** An agent with one message: records when its loop ran; `later` says whether its turn would only queue. */
function host(name: string, opened: string[], later: () => boolean): SchedulerHost & { inbox: number } {
  const h = {
    inbox: 1,
    inboxSize: () => h.inbox,
    disposed: () => false,
    loop: async () => {
      opened.push(name);
      h.inbox = 0;
    },
    becameIdle: () => undefined,
    opensLater: later,
  };
  return h;
}

describe('agent: when a turn opens', () => {
  it('on the next tick, when it would not queue', async () => {
    const opened: string[] = [];
    new TurnScheduler(host('a', opened, () => false)).pump();
    assert.deepEqual(opened, [], 'not in the same tick: its first facts share the accept’s commit');
    await tick();
    assert.deepEqual(opened, ['a']);
  });

  it('after the turns that run, in the order it yielded, eight per tick, when it would only queue for a slot', async () => {
    const opened: string[] = [];
    const names = Array.from({ length: 20 }, (_, i) => `q${i}`);
    const scheds = names.map((n) => new TurnScheduler(host(n, opened, () => true)));
    for (const s of scheds) s.pump();
    await tick();
    assert.deepEqual(opened, [], 'none opened on the next tick: they yielded');
    await tick();
    assert.deepEqual(opened, names.slice(0, 8));
    await tick();
    assert.deepEqual(opened, names.slice(0, 16));
    await tick();
    assert.deepEqual(opened, names);
    for (const s of scheds) await s.idle();
  });

  it('a cancel opens a yielded turn at once (the turn it interrupts is in the log)', async () => {
    const opened: string[] = [];
    const s = new TurnScheduler(host('c', opened, () => true));
    s.pump();
    await tick();
    assert.deepEqual(opened, []);
    s.openScheduled();
    assert.deepEqual(opened, ['c'], 'opened by the cancel, not by the drain');
    await tick();
    await tick();
    assert.deepEqual(opened, ['c'], 'the drain does not open it twice');
  });

  it('asks whether it would queue when it is about to open, not when it was scheduled', async () => {
    const opened: string[] = [];
    let full = true;
    const s = new TurnScheduler(host('d', opened, () => full));
    s.pump();
    full = false; // a slot freed before the next tick
    await tick();
    assert.deepEqual(opened, ['d']);
  });
});
