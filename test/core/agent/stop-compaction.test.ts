import assert from 'node:assert/strict';
import { harnessPerTest, until } from '../../support/harness';
import { agentAfterTwoTurns, agentPastThreshold } from './past-threshold';

// A Stop that lands while the turn's automatic compaction (a model request of its own) runs:
// the request must end at once (its connection closed), no summary may be written after the
// Stop, and the user's message stays queued (paused), not lost.
describe('agent: a Stop during the automatic compaction before a turn', () => {
  const w = harnessPerTest();

  it('ends the compaction request, writes no summary and keeps the message', async () => {
    const agent = await agentPastThreshold(w);
    // The compaction's summary request streams slowly: long enough for a Stop to land in it.
    const before = w.server.requests.length;
    w.server.enqueue({ text: 'SUMMARY: '.repeat(40), chunkSize: 4, chunkDelayMs: 50 }, { text: 'third answer' });
    await agent.accept('third question');
    await until(() => w.server.requests.length > before && w.server.streaming > 0, 5000);
    const stoppedAt = agent.session.length;
    await agent.cancel('interrupted');
    await agent.idle();
    // No model request is still being answered for this agent.
    await until(() => w.server.inFlight === 0, 500).catch(() => undefined);
    assert.equal(w.server.inFlight, 0, 'the compaction request is still streaming after the Stop');
    const after = agent.session.events.slice(stoppedAt);
    assert.ok(!after.some((e) => e.type === 'compaction/summary'), 'a summary was written after the Stop');
    assert.ok(!after.some((e) => e.type === 'compaction/end' && e.outcome === 'committed'), 'the compaction committed after the Stop');
    assert.equal(w.server.requests.length, before + 1, 'a request was made after the Stop');
    // The user's words wait, paused.
    assert.equal(agent.isPaused, true);
    assert.deepEqual(
      agent.queue.map((q) => q.text),
      ['third question'],
    );
  });

  it('a Stop during a compaction the user asked for ends its request and writes no summary', async () => {
    const agent = await agentAfterTwoTurns(w);
    const before = w.server.requests.length;
    w.server.enqueue({ text: 'SUMMARY: '.repeat(40), chunkSize: 4, chunkDelayMs: 50 });
    const stoppedAt = agent.session.length;
    const done = agent.compact(1);
    await until(() => w.server.requests.length > before && w.server.streaming > 0, 5000);
    // The Stop the panel and the command send: the subtree's.
    const stopped = await w.t.h.interruptSubtree(agent.id);
    assert.deepEqual(stopped, [agent.id], 'the Stop found the compaction running');
    const r = await done;
    assert.equal(r.outcome, 'aborted');
    assert.ok(!agent.session.events.slice(stoppedAt).some((e) => e.type === 'compaction/summary'), 'a summary was written after the Stop');
  });

  it('a compaction asked for while a turn runs, then a Stop: neither the turn nor the compaction goes on', async () => {
    const agent = await w.t.h.createSession();
    w.server.enqueue({ text: 'first answer' });
    await agent.accept('first question');
    await agent.idle();
    w.server.enqueue({ text: 'slow answer '.repeat(40), chunkSize: 4, chunkDelayMs: 50 });
    const before = w.server.requests.length;
    await agent.accept('second question');
    await until(() => w.server.requests.length > before && w.server.streaming > 0, 5000);
    const done = agent.compact(1); // waits for the running turn
    await w.t.h.interruptSubtree(agent.id);
    const r = await done;
    assert.equal(r.outcome, 'aborted');
    await new Promise((res) => setTimeout(res, 200));
    assert.equal(w.server.requests.length, before + 1, 'the compaction asked the model after the Stop');
    assert.ok(!agent.session.events.some((e) => e.type === 'compaction/start'), 'a compaction started after the Stop');
  });
});
