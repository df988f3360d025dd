import assert from 'node:assert/strict';
import { stopReasons, subagentWorld, waitFor } from './helpers';

// A Stop landing in the same tick as a message (its turn scheduled, not yet open): the message
// waits, kept; "Send now" then runs it — the Stop must not linger and end that later turn at once.
describe('subagent: a Stop in the same tick as a message', () => {
  const w = subagentWorld();

  it('the kept message runs on "Send now", not interrupted by the old Stop', async () => {
    w.script.on('root', { text: 'first' });
    await w.root.accept('[[root]] one');
    await w.t.h.settle();
    const before = w.server.requests.length;
    w.script.on('root', { text: 'answered the kept message' });
    const accepted = w.root.accept('[[root]] two'); // its turn is scheduled for the next tick
    const stopped = w.t.h.interruptSubtree(w.root.id); // the Stop, same tick
    await accepted;
    await stopped;
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(w.server.requests.length, before, 'no request after the Stop');
    assert.equal(w.root.inboxSize, 1, 'the message is kept');
    await w.t.h.runQueue(w.root.id);
    await w.t.h.settle();
    await waitFor(() => w.server.requests.length > before, 'the kept message to reach the model', 5000);
    assert.deepEqual(stopReasons(w.root.session.events).slice(-1), ['completed']);
  });
});
