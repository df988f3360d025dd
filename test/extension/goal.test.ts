import assert from 'node:assert/strict';
import { FakePort } from '../support/fake-port';
import { panelPerTest } from '../support/panel';

describe("extension: goals in the panel (goal/* messages, the node's goal)", () => {
  const w = panelPerTest({ harness: { approval: 'never' } });

  it('set from the panel arms the goal: the node shows active · n/2 while armed, then blocked round-limit; raise and resume run one more round', async () => {
    const port = w.port;
    const id = (await w.t.h.createSession({ title: 'goal here' })).id;
    await w.c.receive(port, { type: 'goal/set', id: 'g1', sessionId: id, objective: 'keep going', maxRounds: 2 });
    assert.equal(port.done('g1')?.ok, true);
    await w.t.h.settle();
    const seen = port
      .of('tree/node')
      .filter((m) => m.node.id === id && m.node.goal)
      .map((m) => `${m.node.goal!.phase}:${m.node.goal!.roundsStarted}/${m.node.goal!.maxGoalRounds}:${m.node.goal!.armed}`);
    assert.ok(seen.includes('active:1/2:true') && seen.includes('active:2/2:true'), seen.join(' '));
    let g = port.node(id)!.goal!;
    assert.equal(g.phase, 'blocked');
    assert.equal(g.blocked?.code, 'round-limit');
    assert.equal(g.armed, false);
    assert.equal(g.objective, 'keep going');

    await w.c.receive(port, { type: 'goal/resume', id: 'g2', sessionId: id });
    const refused = port.done('g2');
    assert.ok(refused && !refused.ok && /raise the limit/.test(refused.error));
    assert.equal(refused.code, 'ROUNDS_EXHAUSTED', 'the answer carries the error code: the panel says what to do');
    await w.c.receive(port, { type: 'goal/limit', id: 'g3', sessionId: id, maxRounds: 3 });
    await w.c.receive(port, { type: 'goal/resume', id: 'g4', sessionId: id });
    assert.equal(port.done('g4')?.ok, true);
    await w.t.h.settle();
    g = port.node(id)!.goal!;
    assert.equal(`${g.phase}:${g.roundsStarted}/${g.maxGoalRounds}`, 'blocked:3/3');

    await w.c.receive(port, { type: 'goal/clear', id: 'g5', sessionId: id });
    assert.equal(port.node(id)!.goal, undefined);
  });

  it("an example prompt's goal button starts a new conversation titled by the objective, selected, with the goal armed", async () => {
    const port = w.port;
    await w.c.receive(port, { type: 'goal/start', id: 's1', objective: 'tidy the workspace', maxRounds: 2 });
    const done = port.done('s1');
    assert.ok(done?.ok, JSON.stringify(done));
    const roots = w.t.h.store.list().filter((s) => !s.parentSession);
    assert.equal(roots.length, 1, 'one new conversation');
    const id = roots[0].id;
    assert.ok(
      port.of('session/selected').some((m) => m.sessionId === id),
      'the panel shows it',
    );
    await w.t.h.settle();
    const g = port.node(id)!.goal!;
    assert.equal(port.node(id)!.title, 'tidy the workspace');
    assert.equal(`${g.objective}:${g.phase}:${g.roundsStarted}/${g.maxGoalRounds}`, 'tidy the workspace:blocked:2/2', 'both rounds ran by themselves');

    // A limit no goal takes is refused before any conversation is made.
    for (const bad of [
      { type: 'goal/start', id: 'b1', objective: 'x', maxRounds: 0 },
      { type: 'goal/start', id: 'b2', objective: ' ', maxRounds: 2 },
      { type: 'goal/start', id: 'b3', objective: 'x' },
    ])
      await w.c.receive(port, bad);
    assert.equal(port.of('message/rejected').length, 3);
    assert.equal(w.t.h.store.list().filter((s) => !s.parentSession).length, 1);
  });

  it('pauses a goal of a session that is not loaded (no event reaches the panel: the node is reloaded)', async () => {
    const id = (await w.t.h.createSession()).id;
    await w.t.h.goals.set(id, 'x', 1);
    await w.t.h.settle();
    await w.t.h.goals.limit(id, 4);
    // A fresh harness and panel: the session is on disk only.
    await w.reopen({ storeDir: w.t.storeDir, workspace: [w.t.workspace] });
    const p2 = w.port;
    await w.c.nodes();
    assert.equal(w.t.h.resident(id), undefined);
    await w.c.receive(p2, { type: 'goal/pause', id: 'p', sessionId: id });
    assert.equal(p2.done('p')?.ok, true);
    assert.equal(p2.node(id)!.goal?.phase, 'paused');
    assert.equal(w.t.h.resident(id), undefined);
  });

  it('refuses malformed goal messages before they reach the harness', async () => {
    const port = new FakePort('panel');
    const id = (await w.t.h.createSession()).id;
    for (const bad of [
      { type: 'goal/set', id: 'b1', sessionId: id, objective: 'x', maxRounds: '3' },
      { type: 'goal/set', id: 'b2', sessionId: id },
      { type: 'goal/limit', id: 'b3', sessionId: id },
      { type: 'goal/pause', id: 'b4', sessionId: '../etc' },
    ])
      await w.c.receive(port, bad);
    assert.equal(port.of('message/rejected').length, 4);
    for (const maxRounds of [0, -1, 1.5, 1e12]) {
      await w.c.receive(port, { type: 'goal/set', id: `m${maxRounds}`, sessionId: id, objective: 'x', maxRounds });
      const d = port.done(`m${maxRounds}`);
      assert.ok(d && !d.ok && /whole number from 1 to 1000/.test(d.error));
    }
    assert.equal((await w.t.h.goals.state(id)).goal, null);
  });
});
