import assert from 'node:assert/strict';
import type { GoalSnapshot, SessionEvent } from '../../../src/core/session/events';
import { harnessPerTest, until } from '../../support/harness';

const goals = (evs: readonly SessionEvent[]): (GoalSnapshot | null)[] => evs.flatMap((e) => (e.type === 'goal/change' ? [e.goal] : []));
const last = (evs: readonly SessionEvent[]) => goals(evs).at(-1);

// A host that bounds what it keeps in memory (arbor acp's LRU, decision 0037) releases settled
// roots; a goal's activation lives only in memory (decision 0029), so a root whose armed goal is
// between two rounds is not settled work: it is held.
describe('goals hold their root: no release while a goal may run a round', () => {
  const w = harnessPerTest();

  it('an armed goal keeps its root resident: a release asked at every idle between rounds is refused, and every round runs (session 52)', async () => {
    const agent = await w.t.h.createSession();
    // At each idle the goal row plans the next round; a host bounding memory (arbor acp's LRU)
    // asks to release the settled root right then. Activation lives only in memory: a release
    // would drop it and the goal would stall active, unarmed, with its rounds unrun.
    const asked: Promise<boolean>[] = [];
    const between: boolean[] = [];
    const off = w.t.h.observe((c) => {
      if (c.type !== 'live' || c.what !== 'idle' || c.sessionId !== agent.id || w.t.h.resident(agent.id) !== agent) return;
      between.push(w.t.h.releasable(agent.id));
      asked.push(w.t.h.release(agent.id));
    });
    try {
      await w.t.h.goals.set(agent.id, 'Make the README say hello', 3);
      await until(() => last(agent.session.events)?.phase === 'blocked' || w.t.h.resident(agent.id) !== agent, 20_000);
      await w.t.h.settle();
    } finally {
      off();
    }
    const answers = await Promise.all(asked);
    assert.ok(answers.length >= 3, `asked at each idle (${answers.length})`);
    assert.equal(w.t.h.resident(agent.id), agent, 'still resident');
    assert.deepEqual(
      goals(agent.session.events).map((g) => g && `${g.operation}:${g.phase}:${g.roundsStarted}/${g.maxGoalRounds}`),
      ['set:active:0/3', 'round:active:1/3', 'round:active:2/3', 'round:active:3/3', 'block:blocked:3/3'],
    );
    // Refused while the goal could run a round; the last idle (the goal blocked, disarmed) may release it.
    assert.deepEqual(between.slice(0, 3), [false, false, false], `releasable at each idle: ${between.join(', ')}`);
    assert.deepEqual(answers.slice(0, 3), [false, false, false]);
    assert.equal(await w.t.h.release(agent.id), true, 'with the goal blocked (disarmed) the root may go');
  });
});
