import assert from 'node:assert/strict';
import type { SessionStatus } from '../../../src/core/session/status';
import { harnessPerTest, until } from '../../support/harness';
import { agentAfterTwoTurns } from './past-threshold';

// Session 48: a compaction the user asks for is a model request of the agent's own (it spends,
// a Stop ends it). The one status fold must say so: `running` while it works, and every face
// that re-reads the status on a change must be told when it ends.
describe('agent: the status of a compaction the user asked for', () => {
  const w = harnessPerTest();

  it('reads running while its summary request streams, and idle once it ended (the last status a face re-read is idle)', async () => {
    const h = w.t.h;
    const agent = await agentAfterTwoTurns(w);
    const seen: SessionStatus[] = [];
    const off = h.observe((c) => {
      if ((c.type === 'event' || c.type === 'live') && c.sessionId === agent.id) seen.push(h.statusOf(agent.id)!.status);
    });
    try {
      const before = w.server.requests.length;
      w.server.enqueue({ text: 'SUMMARY: '.repeat(40), chunkSize: 4, chunkDelayMs: 20 });
      const done = agent.compact(1);
      await until(() => w.server.requests.length > before && w.server.streaming > 0, 5000);
      assert.equal(h.statusOf(agent.id)!.status, 'running', 'a summary request is streaming: the node is not idle');
      const r = await done;
      assert.equal(r.outcome, 'committed', r.error);
      await h.settle();
      assert.equal(h.statusOf(agent.id)!.status, 'idle');
      assert.ok(seen.includes('running'), `a face saw it running (${seen.join(', ')})`);
      assert.equal(seen.at(-1), 'idle', `the last status a face re-read is idle, not running (${seen.join(', ')})`);
    } finally {
      off();
    }
  });
});
