import assert from 'node:assert/strict';
import type { Agent } from '../../../src/core/agent/agent';
import type { GoalSnapshot, SessionEvent } from '../../../src/core/session/events';
import { onEvents } from '../../support/changes';
import { harnessPerTest } from '../../support/harness';

// Decision 0127 (amended s59): a Stop at any moment of a goal's life pauses the goal, as a Stop
// during a round does — also one that lands between two rounds, when no round's turn runs.

const goals = (evs: readonly SessionEvent[]): (GoalSnapshot | null)[] => evs.flatMap((e) => (e.type === 'goal/change' ? [e.goal] : []));
const rounds = (evs: readonly SessionEvent[]) => evs.filter((e) => e.type === 'user/message' && e.source.kind === 'goal').length;

describe('goals: a Stop between two rounds pauses the goal (0127, amended s59)', () => {
  const w = harnessPerTest();

  /** The Stop lands at the seam `at` names; then the human sends a message: no round may follow it. */
  async function stopAt(at: (agent: Agent, e: SessionEvent) => boolean): Promise<Agent> {
    const agent = await w.t.h.createSession();
    let stop: Promise<string[]> | undefined;
    onEvents(w.t.h, (id, e) => {
      // (Not from inside the listener: an append there would overtake the one being emitted.)
      if (id === agent.id && !stop && at(agent, e)) stop = Promise.resolve().then(() => w.t.h.interruptSubtree(agent.id));
    });
    await w.t.h.goals.set(agent.id, 'many rounds', 5);
    await w.t.h.settle();
    assert.ok(stop, 'the Stop was sent at the seam');
    await stop;
    await w.t.h.settle();
    const done = rounds(agent.session.events);
    const g = goals(agent.session.events).at(-1);
    assert.equal(g?.phase, 'paused', `the Stop paused the goal (${g?.operation}:${g?.phase}:${g?.roundsStarted})`);
    assert.equal(g?.operation, 'interrupt');
    assert.equal((await w.t.h.goals.state(agent.id)).armed, false);
    // The human's next message runs its own turn, and no round after it.
    const requests = w.server.requests.length;
    await w.t.h.send(agent.id, 'something else now');
    await w.t.h.settle();
    assert.equal(rounds(agent.session.events), done, 'no round ran after the human message');
    assert.equal(w.server.requests.length, requests + 1, 'one model request: the human message alone');
    assert.equal(goals(agent.session.events).at(-1)?.phase, 'paused');
    return agent;
  }

  it('a Stop right after a round’s turn ended, before the next round is planned', async () => {
    const agent = await stopAt((_a, e) => e.type === 'turn/end');
    assert.equal(rounds(agent.session.events), 1);
  });

  it('a Stop right after the next round was planned (its goal/change written), before its turn opens', async () => {
    await stopAt((_a, e) => e.type === 'goal/change' && e.goal?.operation === 'round' && e.goal.roundsStarted === 2);
  });

  it('a Stop right after the next round’s message was accepted, before its turn opens', async () => {
    await stopAt((_a, e) => e.type === 'inbox/accepted' && e.source.kind === 'goal' && e.source.round === 2);
  });
});
