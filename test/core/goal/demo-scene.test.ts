import assert from 'node:assert/strict';
import { demoReply } from '../../support/demo-script';
import { harnessPerTest } from '../../support/harness';

describe("demo: the scripted model's goal scene", () => {
  const w = harnessPerTest();

  it('runs two rounds, each noting its progress, then blocks at round-limit', async () => {
    w.server.setFallback((body) => ({ ...demoReply(body), chunkDelayMs: 0 }));
    const agent = await w.t.h.createSession();
    await w.t.h.goals.set(agent.id, 'tidy the workspace', 2);
    await w.t.h.settle();
    const changes = agent.session.events.flatMap((e) => (e.type === 'goal/change' && e.goal ? [e.goal] : []));
    assert.deepEqual(
      changes.map((g) => g.operation),
      ['set', 'round', 'progress', 'round', 'progress', 'block'],
    );
    assert.equal(changes.at(-1)?.blocked?.code, 'round-limit');
    assert.equal(changes.at(-1)?.note, 'round 2: took the next step');
    const texts = agent.session.events.flatMap((e) => (e.type === 'assistant/message' && e.text ? [e.text] : []));
    assert.deepEqual(texts, ['Round 1 done: one more step toward the goal.', 'Round 2 done: one more step toward the goal.']);
  });
});
