import assert from 'node:assert/strict';
import { ROUND_ERROR_STREAK } from '../../../src/core/goal/driver';
import { GoalError } from '../../../src/core/goal/snapshot';
import type { GoalSnapshot, MessageSource, SessionEvent } from '../../../src/core/session/events';
import { onEvents } from '../../support/changes';
import { harnessPerTest, makeHarness, until } from '../../support/harness';

const goals = (evs: readonly SessionEvent[]): (GoalSnapshot | null)[] => evs.flatMap((e) => (e.type === 'goal/change' ? [e.goal] : []));
const last = (evs: readonly SessionEvent[]) => goals(evs).at(-1);
const rounds = (evs: readonly SessionEvent[]) => evs.filter((e) => e.type === 'user/message' && e.source.kind === 'goal');
const turns = (evs: readonly SessionEvent[]) => evs.filter((e) => e.type === 'turn/end').length;

async function refused(p: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(p, (err: unknown) => err instanceof GoalError && err.code === code);
}

describe('goals: durable snapshots, in-memory activation, the round driver', () => {
  const w = harnessPerTest();

  it('runs rounds while armed, then blocks at round-limit; settle never returns between two rounds', async () => {
    const agent = await w.t.h.createSession();
    await w.t.h.goals.set(agent.id, 'Make the README say hello', 2);
    await w.t.h.settle();
    const evs = agent.session.events;
    assert.deepEqual(
      goals(evs).map((g) => g && `${g.operation}:${g.phase}:${g.roundsStarted}/${g.maxGoalRounds}`),
      ['set:active:0/2', 'round:active:1/2', 'round:active:2/2', 'block:blocked:2/2'],
    );
    assert.equal(last(evs)?.blocked?.code, 'round-limit');
    assert.equal(rounds(evs).length, 2);
    assert.equal(turns(evs), 2);
    // The objective travels in the round's user message (source goal), never in the system prompt.
    assert.equal(w.server.requests.length, 2);
    for (const r of w.server.requests) {
      assert.ok(!String(r.body.messages[0].content).includes('Make the README say hello'));
      assert.ok(String(r.body.messages.at(-1)?.content).includes('Make the README say hello'));
    }
    const src = rounds(evs)[1];
    assert.ok(src.type === 'user/message' && src.source.kind === 'goal' && src.source.round === 2 && typeof src.source.revision === 'number');
    assert.deepEqual((await w.t.h.goals.state(agent.id)).armed, false);
  });

  it('says how to report in full in the first round of each run only; every round restates the objective', async () => {
    const agent = await w.t.h.createSession();
    await w.t.h.goals.set(agent.id, 'Make the README say hello', 3);
    await w.t.h.settle();
    await w.t.h.goals.limit(agent.id, 4);
    await w.t.h.goals.resume(agent.id);
    await w.t.h.settle();
    const said = rounds(agent.session.events).map((e) => (e.type === 'user/message' ? e.text : ''));
    assert.equal(said.length, 4);
    const full = /action "complete".*action "block".*action "progress"/s;
    assert.deepEqual(
      said.map((t) => [t.includes('Make the README say hello'), full.test(t)]),
      [
        [true, true],
        [true, false],
        [true, false],
        [true, true],
      ],
      'round 1 (set) and round 4 (resumed) in full, 2 and 3 point to the goal tool',
    );
    assert.match(said[1], /report through the `goal` tool/);
    assert.ok(said[1].length < said[0].length - 100, 'a later round adds less to the context');
  });

  it('refuses resume while the rounds are used up; a raised limit keeps it blocked until the human resumes', async () => {
    const agent = await w.t.h.createSession();
    await w.t.h.goals.set(agent.id, 'count to three', 1);
    await w.t.h.settle();
    assert.equal(last(agent.session.events)?.blocked?.code, 'round-limit');
    await refused(w.t.h.goals.resume(agent.id), 'ROUNDS_EXHAUSTED');
    await w.t.h.goals.limit(agent.id, 2);
    await w.t.h.settle();
    assert.equal(last(agent.session.events)?.phase, 'blocked');
    assert.equal(rounds(agent.session.events).length, 1);
    await w.t.h.goals.resume(agent.id);
    await w.t.h.settle();
    assert.equal(rounds(agent.session.events).length, 2);
    assert.equal(last(agent.session.events)?.blocked?.code, 'round-limit');
    // The limit cannot go below the rounds already started.
    await refused(w.t.h.goals.limit(agent.id, 1), 'BAD_MAX_ROUNDS');
  });

  it('refuses round limits of 0, -1, 1.5 and 1e12 and writes nothing', async () => {
    const agent = await w.t.h.createSession();
    for (const bad of [0, -1, 1.5, 1e12, Number.NaN, '3']) await refused(w.t.h.goals.set(agent.id, 'x', bad), 'BAD_MAX_ROUNDS');
    await refused(w.t.h.goals.set(agent.id, '   ', 3), 'BAD_OBJECTIVE');
    assert.equal(goals(agent.session.events).length, 0);
    await w.t.h.goals.set(agent.id, 'x', 1);
    for (const bad of [0, -1, 1.5, 1e12]) await refused(w.t.h.goals.limit(agent.id, bad), 'BAD_MAX_ROUNDS');
  });

  it('takes every transition: set, pause, resume, block (model), resume, complete (model), clear, set again', async () => {
    const agent = await w.t.h.createSession();
    const g = w.t.h.goals;
    await refused(g.pause(agent.id), 'NO_GOAL');
    // The model answers "ok" to every round; the first one is still running when we pause.
    w.server.setFallback(() => ({ text: 'working', delayMs: 50 }));
    await g.set(agent.id, 'tidy up', 10);
    await g.pause(agent.id);
    await w.t.h.settle();
    assert.equal(last(agent.session.events)?.phase, 'paused');
    assert.equal((await g.state(agent.id)).armed, false);
    const afterPause = rounds(agent.session.events).length;
    await refused(g.pause(agent.id), 'BAD_PHASE');
    await g.resume(agent.id);
    assert.equal((await g.state(agent.id)).armed, true);
    await g.block(agent.id, 'needs a password');
    await w.t.h.settle();
    assert.deepEqual(last(agent.session.events)?.blocked, { code: 'model', message: 'needs a password' });
    assert.ok(rounds(agent.session.events).length <= afterPause + 1);
    await g.resume(agent.id);
    await g.complete(agent.id, 'all tidy');
    await w.t.h.settle();
    const done = last(agent.session.events)!;
    assert.equal(done.phase, 'complete');
    assert.equal(done.note, 'all tidy');
    await refused(g.resume(agent.id), 'BAD_PHASE');
    await g.clear(agent.id);
    const evs = agent.session.events;
    assert.equal(last(evs), null);
    await refused(g.resume(agent.id), 'NO_GOAL');
    await g.set(agent.id, 'again', 1);
    await w.t.h.settle();
    // Revisions keep growing across the clear; every snapshot passed validation at append.
    const revs = goals(agent.session.events)
      .filter((x): x is GoalSnapshot => x !== null)
      .map((x) => x.revision);
    assert.deepEqual(
      revs,
      [...revs].sort((a, b) => a - b),
    );
    assert.equal(new Set(revs).size, revs.length);
    assert.equal(last(agent.session.events)?.objective, 'again');
  });

  it('the model tool notes progress, completes and blocks, but cannot arm; it refuses in subagents', async () => {
    const agent = await w.t.h.createSession();
    await w.t.h.goals.set(agent.id, 'write a haiku', 5);
    await w.t.h.goals.pause(agent.id);
    await w.t.h.settle();
    const before = w.server.requests.length;
    const roundsBefore = rounds(agent.session.events).length;
    // A human message to the paused goal's conversation: the model tries everything it can.
    w.server.enqueue(
      { toolCalls: [{ id: 'a', name: 'goal', arguments: { action: 'resume' } }] },
      { toolCalls: [{ id: 'b', name: 'goal', arguments: { action: 'progress', note: 'two lines done' } }] },
      { toolCalls: [{ id: 'c', name: 'goal', arguments: { action: 'status' } }] },
      { text: 'ok' },
    );
    await agent.accept('how is the haiku going?');
    await w.t.h.settle();
    const results = agent.session.events.filter((e) => e.type === 'tool/result');
    assert.ok(results[0].type === 'tool/result' && results[0].isError && /action/.test(results[0].content));
    const g = last(agent.session.events)!;
    assert.equal(g.phase, 'paused');
    assert.equal(g.note, 'two lines done');
    assert.ok(results[2].type === 'tool/result' && /"armed": false/.test(results[2].content));
    assert.equal((await w.t.h.goals.state(agent.id)).armed, false);
    // Only the human's turn ran (4 requests): no round started.
    assert.equal(w.server.requests.length, before + 4);
    assert.equal(rounds(agent.session.events).length, roundsBefore);

    // An armed goal stays armed through a progress note, and the model's complete ends it.
    w.server.enqueue(
      { toolCalls: [{ id: 'd', name: 'goal', arguments: { action: 'progress', note: 'first draft' } }] },
      { text: 'drafted' },
      { toolCalls: [{ id: 'e', name: 'goal', arguments: { action: 'complete', note: 'done' } }] },
      { text: 'finished' },
    );
    await w.t.h.goals.resume(agent.id);
    await w.t.h.settle();
    assert.equal(rounds(agent.session.events).length, roundsBefore + 2);
    assert.equal(last(agent.session.events)?.phase, 'complete');

    // A subagent has no goal: the tool refuses, and so does a human set.
    w.server.enqueue(
      { toolCalls: [{ id: 's', name: 'subagent', arguments: { prompt: 'child task' } }] },
      { toolCalls: [{ id: 'k', name: 'goal', arguments: { action: 'status' } }] },
      { text: 'child done' },
      { text: 'parent done' },
    );
    await agent.accept('delegate');
    await w.t.h.settle();
    const child = w.t.h.store.list().find((h) => h.parentSession === agent.id)!;
    const childEvents = await w.t.h.store.readEvents(child.id);
    const kr = childEvents.find((e) => e.type === 'tool/result' && e.callId === 'k');
    assert.ok(kr && kr.type === 'tool/result' && kr.isError && /NOT_ROOT/.test(kr.content));
    await refused(w.t.h.goals.set(child.id, 'x', 1), 'NOT_ROOT');
  });

  it('a human prompt beats a queued round: the round is claimed without a turn and the goal blocks prompt-rejected', async () => {
    const agent = await w.t.h.createSession();
    let human: Promise<string> | undefined;
    // The human speaks the moment the driver has planned round 1 (its goal/change is appended,
    // the round's message not yet in the inbox).
    onEvents(w.t.h, (id, e) => {
      // (Not from inside the listener: an append there would overtake the one being emitted.)
      if (id === agent.id && e.type === 'goal/change' && e.goal?.operation === 'round' && !human)
        human = Promise.resolve().then(() => agent.accept('stop, do this instead', { kind: 'user' }));
    });
    w.server.enqueue({ text: 'doing what the human asked' });
    await w.t.h.goals.set(agent.id, 'long objective', 5);
    await w.t.h.settle();
    await human;
    const evs = agent.session.events;
    assert.equal(last(evs)?.blocked?.code, 'prompt-rejected');
    assert.equal(last(evs)?.phase, 'blocked');
    // The human's turn ran; the round's message was claimed and never became a turn.
    await roundRejected(agent.id, evs);
  });

  /** The competing message's turn ran alone: the round was claimed, never became a turn, and the goal is disarmed. */
  async function roundRejected(id: string, evs: readonly SessionEvent[]): Promise<void> {
    assert.equal(turns(evs), 1);
    assert.equal(rounds(evs).length, 0);
    const roundMsg = evs.find((e) => e.type === 'inbox/accepted' && e.source.kind === 'goal');
    assert.ok(roundMsg && roundMsg.type === 'inbox/accepted');
    assert.ok(evs.some((e) => e.type === 'inbox/claimed' && e.messageId === roundMsg.messageId));
    assert.equal(w.server.requests.length, 1);
    assert.equal((await w.t.h.goals.state(id)).armed, false);
  }

  // Seed 002 追问四: any non-goal enqueue competes, not only a human's. The runtime's own
  // deliveries (a child settled, a background child's result, a wakeup report) arrive through
  // `deliver`, the path the residency, the one-shot tool and the report tool take.
  const sourceOf = (kind: 'subagent-settled' | 'subagent-result' | 'subagent-report', fromSession: string): MessageSource =>
    kind === 'subagent-report' ? { kind, fromSession, mode: 'wakeup' } : { kind, fromSession, stopReason: 'completed' };
  for (const [kind, says] of [
    ['subagent-settled', /settlement notice/],
    ['subagent-result', /background subagent's result/],
    ['subagent-report', /report/],
  ] as const) {
    it(`a runtime ${kind} message beats a queued round as a human prompt does: the goal blocks prompt-rejected`, async () => {
      const agent = await w.t.h.createSession();
      let notice: Promise<void> | undefined;
      onEvents(w.t.h, (id, e) => {
        if (id === agent.id && e.type === 'goal/change' && e.goal?.operation === 'round' && !notice)
          notice = Promise.resolve().then(() => w.t.h.subagents.deliver(agent.id, `[from a child: ${kind}]`, sourceOf(kind, `${agent.id}.abc123`)));
      });
      w.server.enqueue({ text: 'read the notice' });
      await w.t.h.goals.set(agent.id, 'long objective', 5);
      await w.t.h.settle();
      await notice;
      const evs = agent.session.events;
      const g = last(evs);
      assert.equal(g?.blocked?.code, 'prompt-rejected');
      assert.match(g?.blocked?.message ?? '', says);
      // The notice's turn ran; the round was claimed and never became a turn.
      await roundRejected(agent.id, evs);
    });
  }

  it('a human interrupt of a round pauses the goal (disarmed, no further round)', async () => {
    const agent = await w.t.h.createSession();
    w.server.enqueue({ text: 'a long answer '.repeat(200), chunkSize: 4, chunkDelayMs: 20 });
    await w.t.h.goals.set(agent.id, 'think long', 5);
    await until(() => agent.activity === 'running' && agent.session.events.some((e) => e.type === 'request/header'));
    await w.t.h.interruptSubtree(agent.id);
    await w.t.h.settle();
    const g = last(agent.session.events)!;
    assert.equal(g.phase, 'paused');
    assert.equal(g.operation, 'interrupt');
    assert.equal(g.roundsStarted, 1);
    assert.equal(rounds(agent.session.events).length, 1);
    assert.equal((await w.t.h.goals.state(agent.id)).armed, false);
  });

  it('a round its budget stopped pauses the goal: no further round runs into the same budget, the rounds are not used up (session 48)', async () => {
    const agent = await w.t.h.createSession();
    await w.t.h.setBudget(agent.id, { maxTokens: 50 });
    await w.t.h.goals.set(agent.id, 'do a lot', 20);
    await w.t.h.settle();
    const evs = agent.session.events;
    const ends = evs.flatMap((e) => (e.type === 'turn/end' ? [e.stopReason] : []));
    assert.deepEqual(ends, ['budget'], `one round, stopped by the budget (turns: ${ends.join(', ')})`);
    const g = last(evs)!;
    assert.equal(g.phase, 'paused', `the goal waits for the human (${g.operation}:${g.phase}:${g.roundsStarted}/${g.maxGoalRounds})`);
    assert.equal(g.roundsStarted, 1);
    assert.equal((await w.t.h.goals.state(agent.id)).armed, false);
    assert.equal(w.server.requests.length, 0);
  });

  it('starts disarmed after a restart: no round runs, a round queued before the restart is dropped; resume arms again', async () => {
    const first = w.t.h;
    const agent = await first.createSession();
    const id = agent.id;
    // Round 1 is slow; the harness closes mid-round with the goal active and armed.
    w.server.enqueue({ text: 'slow', delayMs: 800 });
    await first.goals.set(id, 'survive a restart', 5);
    await until(() => agent.session.events.some((e) => e.type === 'request/header'));
    assert.equal((await first.goals.state(id)).armed, true);
    await first.close();

    const again = await makeHarness(w.server, { storeDir: w.t.storeDir, workspace: [w.t.workspace] });
    try {
      const before = w.server.requests.length;
      const reopened = await again.h.openSession(id);
      await again.h.settle();
      const s = await again.h.goals.state(id);
      assert.equal(s.goal?.phase, 'active');
      assert.equal(s.armed, false);
      assert.equal(w.server.requests.length, before);
      assert.equal(rounds(reopened.session.events).length, 1);
      await again.h.goals.resume(id);
      await again.h.settle();
      assert.equal(rounds(reopened.session.events).length, 5);
      assert.equal(last(reopened.session.events)?.blocked?.code, 'round-limit');
    } finally {
      await again.h.close();
    }
  });

  it('a round left in the inbox by a crash is dropped at the next open, never run', async () => {
    const agent = await w.t.h.createSession();
    // A round planned, its message accepted, then the process died before the turn (simulated
    // by writing what the driver writes).
    await w.t.h.goals.set(agent.id, 'x', 3);
    await w.t.h.goals.pause(agent.id);
    await w.t.h.settle();
    const g = last(agent.session.events)!;
    const requests = w.server.requests.length;
    await agent.append({
      type: 'goal/change',
      goal: { ...g, phase: 'active', operation: 'round', roundsStarted: g.roundsStarted + 1, revision: g.revision + 1 },
    });
    const id = agent.id;
    const store = w.t.storeDir;
    await w.t.h.close();
    const again = await makeHarness(w.server, { storeDir: store, workspace: [w.t.workspace] });
    try {
      const stale = (await again.h.store.inspect(id)).length;
      const writer = await again.h.openSession(id);
      await writer.append({
        type: 'inbox/accepted',
        messageId: 'stale-round',
        text: 'round',
        source: { kind: 'goal', revision: g.revision + 1, round: g.roundsStarted + 1 },
      });
      again.h.resident(id)!.pump();
      await again.h.settle();
      const evs = again.h.resident(id)!.session.events.slice(stale);
      assert.ok(evs.some((e) => e.type === 'inbox/claimed' && e.messageId === 'stale-round'));
      assert.equal(turns(evs), 0);
      assert.equal(w.server.requests.length, requests);
      // Dropped, not blocked: the goal is as it was (active, disarmed).
      assert.equal(last(again.h.resident(id)!.session.events)?.phase, 'active');
    } finally {
      await again.h.close();
    }
  });

  it('a fork starts disarmed: it carries the goal but runs no round until the human resumes it there', async () => {
    const agent = await w.t.h.createSession();
    await w.t.h.goals.set(agent.id, 'fork me', 3);
    await w.t.h.settle();
    const firstEnd = agent.session.events.find((e) => e.type === 'turn/end')!;
    const before = w.server.requests.length;
    const fork = await w.t.h.forkSession(agent.id, firstEnd.seq);
    await w.t.h.settle();
    const s = await w.t.h.goals.state(fork.id);
    assert.equal(s.goal?.phase, 'active');
    assert.equal(s.goal?.roundsStarted, 1);
    assert.equal(s.armed, false);
    assert.equal(w.server.requests.length, before);
    await w.t.h.goals.resume(fork.id);
    await w.t.h.settle();
    assert.equal(rounds(fork.session.events.slice(fork.session.header.seedLength)).length, 2);
    assert.equal(last(fork.session.events)?.blocked?.code, 'round-limit');
  });

  it(`blocks with round-error after ${ROUND_ERROR_STREAK} failing rounds in a row, not after one failure followed by a good round`, async () => {
    const agent = await w.t.h.createSession();
    w.server.enqueue(
      { fault: { kind: 'status', status: 500 } },
      { text: 'recovered' },
      { fault: { kind: 'status', status: 500 } },
      { fault: { kind: 'status', status: 500 } },
    );
    w.server.setFallback(() => ({ fault: { kind: 'status', status: 500 } }));
    await w.t.h.goals.set(agent.id, 'flaky model', 10);
    await w.t.h.settle();
    const g = last(agent.session.events)!;
    assert.equal(g.blocked?.code, 'round-error');
    // error, ok, error, error, error: five rounds, not ten.
    assert.equal(g.roundsStarted, 5);
  });
});
