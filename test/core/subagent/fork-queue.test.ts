import assert from 'node:assert/strict';
import { hold, ofType, subagentWorld } from './helpers';

// Seed 000 §三: "the parent's current inbox must not be copied". A message typed to the parent
// mid-turn (or a settlement notice, a wakeup report) is accepted into its inbox before the turn
// ends; a fork cut at that turn's end must not answer it — it runs once, in the parent.
describe("subagent: a fork never inherits the parent's queue", () => {
  const w = subagentWorld();

  it('subagent_fork answers only its own task; the queued instruction runs once, in the parent', async () => {
    // Turn 1 holds on a gate so the user can type while it runs; turn 2 (the queued message)
    // forks a child; the child's own task is the only thing it answers.
    w.script.on('root', { toolCalls: [hold('t1')] }, { text: 'turn one done' });
    w.script.on(
      'queued',
      { toolCalls: [{ name: 'subagent_fork', arguments: { prompt: '[[f]] side task' } }] },
      { text: 'parent handled the queued instruction' },
    );
    w.script.on('f', { text: 'fork did the side task' });
    await w.root.accept('[[root]] start');
    await w.gates.whenHeld('t1');
    await w.root.accept('[[queued]] run the migration (has side effects)');
    w.gates.release('t1');
    await w.t.h.settle();

    const [forkHeader] = w.t.h.store.children(w.root.id);
    assert.ok(forkHeader, 'a fork was created');
    const fork = await w.t.h.store.inspect(forkHeader.id);
    const endSeed = fork.events[fork.seedLength];
    assert.equal(endSeed.type, 'session/end-seed');
    assert.equal(endSeed.type === 'session/end-seed' && endSeed.droppedInbox?.length, 1, "the parent's queued message was dropped from the fork's inbox");
    // The fork's live part ran one turn, for its own task.
    const live = fork.events.slice(fork.firstLiveSeq);
    const asked = ofType(live, 'user/message').map((e) => e.text);
    assert.ok(!asked.some((t) => t.includes('run the migration')), `the fork ran the parent's queued instruction: ${JSON.stringify(asked)}`);
    assert.ok(asked.includes('[[f]] side task'));
    assert.deepEqual(
      ofType(live, 'turn/end').map((e) => e.stopReason),
      ['completed'],
    );
    assert.deepEqual(
      ofType(live, 'assistant/message').map((e) => e.text),
      ['fork did the side task'],
    );
    // Every request the model saw for the fork ended with the fork's task, never the queued one.
    for (const body of w.script.bodies('f')) assert.ok(!String(body.messages.at(-1)?.content).includes('run the migration'));
    // The queued instruction ran exactly once, in the parent.
    const runs = ofType(w.root.session.events, 'user/message').filter((e) => e.text.includes('run the migration'));
    assert.equal(runs.length, 1);
    assert.equal(w.script.bodies('queued').length, 2, 'the parent asked the model twice for it: the fork call, then its answer');
    // The fork's result reached the parent as the fork's own answer.
    const result = ofType(w.root.session.events, 'tool/result').find((e) => e.name === 'subagent_fork');
    assert.match(result?.content ?? '', /fork did the side task/);
  });

  it('a user fork from the panel starts with an empty inbox and runs only what the user sends it', async () => {
    w.script.on('root', { toolCalls: [hold('t1')] }, { text: 'turn one done' });
    w.script.on('queued', { text: 'parent handled it' });
    await w.root.accept('[[root]] start');
    await w.gates.whenHeld('t1');
    await w.root.accept('[[queued]] delete the build folder');
    // Fork from turn 1 while the queued message is still unclaimed in the log before its end.
    w.gates.release('t1');
    await w.t.h.settle();
    const firstEnd = ofType(w.root.session.events, 'turn/end')[0];
    const fork = await w.t.h.forkSession(w.root.id, firstEnd.seq);
    assert.deepEqual(fork.session.unclaimedInbox, []);
    w.script.on('mine', { text: 'fork answered the user' });
    await fork.accept('[[mine]] hello fork');
    await w.t.h.settle();
    const asked = ofType(fork.session.events.slice(fork.session.firstLiveSeq), 'user/message').map((e) => e.text);
    assert.deepEqual(asked, ['[[mine]] hello fork']);
    assert.equal(ofType(w.root.session.events, 'user/message').filter((e) => e.text.includes('delete the build folder')).length, 1);
  });
});
