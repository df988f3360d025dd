import assert from 'node:assert/strict';
import type { InboxAcceptedEvent, SessionEvent, StopReason } from '../../../src/core/session/events';
import { interruptAgent } from '../../../src/core/subagent/control';
import { delivered, eventsOf, hold, ofType, subagentWorld, systemOf, toolNames, waitFor } from './helpers';

type Notice = InboxAcceptedEvent & { source: { kind: 'subagent-settled' } & { stopReason: StopReason } };
const notices = (evs: readonly SessionEvent[], from: string) => delivered(evs, 'subagent-settled', from) as Notice[];

describe('subagent: one settlement notice per Activation, to the direct parent', () => {
  const w = subagentWorld();

  it('tells the parent once, with the stop reason and the final text, and wakes it', async () => {
    w.script.on('c', { toolCalls: [{ name: 'list_files', arguments: {} }] }, { text: 'final answer from C' });
    w.script.on('root', { text: 'root saw it' });
    const { childId } = await w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: '[[c]] task', label: 'worker' });
    await w.t.h.settle();
    const [n, ...more] = notices(w.root.session.events, childId);
    assert.equal(more.length, 0, 'exactly one');
    assert.equal(n.type, 'inbox/accepted', 'a notice wakes the parent');
    assert.equal(n.source.stopReason, 'completed');
    assert.match(n.text, /^\[subagent worker settled: completed\]\n/);
    assert.ok(n.text.endsWith('final answer from C'));
    // The parent ran a turn on it.
    const claimed = ofType(w.root.session.events, 'user/message').find((e) => e.messageId === n.messageId);
    assert.ok(claimed, 'the notice was claimed into a parent turn');
    assert.equal(ofType(w.root.session.events, 'turn/end').at(-1)?.stopReason, 'completed');
  });

  it('a second Activation (follow-up after release) gives exactly one more notice with its own final text', async () => {
    w.script.on('c', { text: 'first final' }, { text: 'second final' });
    const { childId } = await w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: '[[c]] task' });
    await w.t.h.settle();
    assert.equal(notices(w.root.session.events, childId).length, 1);
    const r = await w.t.h.subagents.followup(w.root.id, childId, '[[c]] again');
    assert.equal(r.path, 'cold-resume');
    await w.t.h.settle();
    const all = notices(w.root.session.events, childId);
    assert.equal(all.length, 2);
    assert.ok(all[0].text.endsWith('first final'));
    assert.ok(all[1].text.endsWith('second final'));
  });

  it('an interrupted Activation is reported as interrupted', async () => {
    w.script.on('c', { text: 'started', toolCalls: [hold('c')] });
    const { childId } = await w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: '[[c]] long task' });
    await w.gates.whenHeld('c');
    assert.deepEqual(await interruptAgent(w.t.h.subagents, w.root, childId), { accepted: true, effect: 'interrupted' });
    await w.t.h.settle();
    const [n, ...more] = notices(w.root.session.events, childId);
    assert.equal(more.length, 0);
    assert.equal(n.source.stopReason, 'interrupted');
    assert.match(n.text, /settled: interrupted/);
  });

  it('a child whose model fails is reported with stopReason error', async () => {
    w.script.on('c', { fault: { kind: 'status', status: 500, message: 'upstream exploded' } });
    const { childId } = await w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: '[[c]] task' });
    await w.t.h.settle();
    const [n, ...more] = notices(w.root.session.events, childId);
    assert.equal(more.length, 0);
    assert.equal(n.source.stopReason, 'error');
    assert.match(n.text, /settled: error/);
  });

  it('a grandchild notifies its own parent, not the root; the child settles only after it', async () => {
    w.script.on('c', { toolCalls: [hold('c')] }, { text: 'C first turn' }, { text: 'C after G' });
    w.script.on('g', { text: 'G result' });
    const c = await w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: '[[c]] task' });
    await w.gates.whenHeld('c');
    const g = await w.t.h.subagents.startContinuable(w.t.h.resident(c.childId)!, 'spawn', { prompt: '[[g]] leaf' });
    w.gates.release('c');
    await w.t.h.settle();
    const childLog = await w.t.h.store.readEvents(c.childId);
    assert.equal(notices(childLog, g.childId).length, 1);
    assert.equal(notices(w.root.session.events, g.childId).length, 0);
    const [n] = notices(w.root.session.events, c.childId);
    assert.equal(notices(w.root.session.events, c.childId).length, 1);
    assert.ok(n.text.endsWith('C after G'), 'the child settled after it had taken the grandchild notice');
  });

  it('settle waits for a notice that is still on its way to disk, then for the turn it starts, which asks nothing before it lands', async () => {
    w.script.on('c', { text: 'C done' });
    const append = w.t.h.store.append.bind(w.t.h.store);
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    let held = false;
    // From the notice on, the parent's appends wait at the gate, in order (its turn's first
    // facts share the notice's group commit, decision 0063).
    w.t.h.store.append = async (id, events) => {
      if (id === w.root.id && (held || events.some((e) => e.type === 'inbox/accepted'))) {
        held = true;
        await gate;
      }
      return append(id, events);
    };
    const { childId } = await w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: '[[c]] task' });
    await waitFor(() => held, 'the notice to reach the store');
    // The notice is in the parent's log but not durable yet: a turn is coming, and it acts on nothing.
    assert.equal(w.root.isSettled, false);
    const requests = w.server.requests.length;
    const settled = w.t.h.settle();
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(w.server.requests.length, requests, 'the parent asked the model nothing while the notice was not durable');
    setImmediate(open); // only after the event loop turns: settle must wait, not spin
    await settled;
    const [n] = notices(w.root.session.events, childId);
    assert.ok(
      ofType(w.root.session.events, 'user/message').some((e) => e.messageId === n.messageId),
      'the notice ran as a turn',
    );
    assert.ok(w.root.isSettled);
    assert.deepEqual(
      (await w.t.h.store.readEvents(w.root.id)).map((e) => e.seq),
      w.root.session.events.map((e) => e.seq),
      'and all of it is durable',
    );
  });

  it('a notice to a released continuable parent resumes it with its own composition, and it settles in turn', async () => {
    const persona = 'You are C-PERSONA.';
    w.script.on('c', { toolCalls: [hold('c')] }, { text: 'C first' }, { text: 'C ack G' }, { text: 'C ack G again' });
    w.script.on('g', { text: 'G first' }, { text: 'G second' });
    const c = await w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: '[[c]] task', persona: { text: persona }, toolFilter: ['read_file', 'hold'] });
    await w.gates.whenHeld('c');
    const g = await w.t.h.subagents.startContinuable(w.t.h.resident(c.childId)!, 'spawn', { prompt: '[[g]] leaf' });
    w.gates.release('c');
    await w.t.h.settle();
    assert.equal(w.t.h.residentCount, 1, 'both released');

    // The human messages the grandchild directly (UI, or `arbor send`); its parent is not resident.
    await w.t.h.send(g.childId, '[[g]] once more');
    await w.t.h.settle();
    const childLog = await w.t.h.store.readEvents(c.childId);
    assert.equal(notices(childLog, g.childId).length, 2);
    const last = w.script.bodies('c').at(-1)!;
    assert.ok(
      last.messages.some((m) => String(m.content).endsWith('G second')),
      'this request answers the second notice',
    );
    assert.deepEqual(toolNames(last), ['hold', 'read_file', 'report'], "the child's filter and report tool");
    assert.ok(systemOf(last).includes(persona), "the child's persona");
    assert.equal(notices(w.root.session.events, c.childId).length, 2, 'its Activation settled and told the root');
    assert.equal(w.t.h.residentCount, 1, 'released again');

    // And it is still one agent on one log: a parent follow-up resumes it cleanly.
    w.script.on('c', { text: 'C answers root' });
    const r = await w.t.h.subagents.followup(w.root.id, c.childId, '[[c]] status?');
    assert.equal(r.path, 'cold-resume');
    await w.t.h.settle();
    const evs = await w.t.h.store.readEvents(c.childId);
    assert.deepEqual(
      evs.map((e) => e.seq),
      evs.map((_, i) => i),
    );
    assert.equal(ofType(evs, 'assistant/message').at(-1)?.text, 'C answers root');
  });

  it('a notice to a one-shot parent that is gone is recorded in its log without running it', async () => {
    w.script.on('o', { text: 'O done' });
    w.script.on('g', { text: 'G first' }, { text: 'G second' });
    const o = await w.t.h.subagents.start(w.root, 'spawn', { prompt: '[[o]] task' });
    await o.result;
    const g = await w.t.h.subagents.startContinuable(o.localAgent, 'spawn', { prompt: '[[g]] leaf' });
    await w.t.h.settle();
    await o.dispose();
    const turnsBefore = ofType(await eventsOf(w.t.h, o.id), 'turn/start').length;
    const requestsBefore = w.script.bodies('o').length;

    await w.t.h.send(g.childId, '[[g]] again');
    await w.t.h.settle();
    const oLog = await w.t.h.store.readEvents(o.id);
    const n = notices(oLog, g.childId).at(-1)!;
    assert.ok(n.text.endsWith('G second'));
    assert.equal(n.type, 'user/message', 'recorded, not queued for a turn');
    assert.equal(ofType(oLog, 'turn/start').length, turnsBefore, 'the one-shot did not run again');
    assert.equal(w.script.bodies('o').length, requestsBefore);
    assert.equal(w.t.h.resident(o.id), undefined);
    assert.equal(w.t.h.residentCount, 1);
  });
});
