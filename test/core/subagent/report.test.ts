import assert from 'node:assert/strict';
import type { SessionEvent } from '../../../src/core/session/events';
import { reportToParent } from '../../../src/core/subagent/control';
import { assertCode, contents, delivered, hold, ofType, subagentWorld, toolNames, turnsEnded, waitFor } from './helpers';

const report = (message: string, mode?: 'quiet' | 'wakeup') => ({ name: 'report', arguments: { message, ...(mode ? { mode } : {}) } });
const reports = (evs: readonly SessionEvent[], from?: string) => delivered(evs, 'subagent-report', from);

describe('subagent: report — child to its direct parent, quiet or wakeup, not a result', () => {
  const w = subagentWorld();

  it('quiet: lands in the idle parent history without starting a turn; the child turn goes on', async () => {
    w.script.on('c', { toolCalls: [report('half way')] }, { toolCalls: [hold('c')] }, { text: 'all done' });
    const { childId } = await w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: '[[c]] task', label: 'worker' });
    await w.gates.whenHeld('c');
    const [r, ...more] = reports(w.root.session.events, childId);
    assert.equal(more.length, 0);
    assert.ok(r.type === 'user/message', 'written straight into the history');
    assert.deepEqual(r.source, { kind: 'subagent-report', fromSession: childId, mode: 'quiet' });
    assert.equal(r.text, '[report from subagent worker]\nhalf way');
    assert.equal(ofType(w.root.session.events, 'inbox/accepted').length, 0, 'not queued');
    assert.equal(ofType(w.root.session.events, 'turn/start').length, 0, 'no parent turn');
    assert.equal(w.root.activity, 'idle');

    // The child's turn did not end at the report: it made another request in the same turn.
    const child = w.t.h.resident(childId)!;
    assert.equal(child.activity, 'running');
    assert.equal(ofType(child.session.events, 'turn/end').length, 0);
    const rep = ofType(child.session.events, 'tool/result').find((e) => e.name === 'report')!;
    assert.ok(!rep.isError, rep.content);
    assert.ok(child.session.events.some((e) => e.type === 'request/header' && e.seq > rep.seq));

    w.gates.release('c');
    await w.t.h.settle();
    // The final message is the result, not the report.
    const [n] = delivered(w.root.session.events, 'subagent-settled', childId) as { text: string }[];
    assert.ok(n.text.endsWith('all done'));
    assert.ok(!n.text.includes('half way'));
    // Only the notice started a parent turn, and it saw the report as history.
    assert.equal(ofType(w.root.session.events, 'turn/start').length, 1);
    const [body] = w.script.bodies(undefined);
    assert.ok(contents(body).includes('[report from subagent worker]\nhalf way'));
  });

  it('quiet to a parent mid-turn: held until its next safe point, then before its next request', async () => {
    w.script.on(
      'root',
      { toolCalls: [{ name: 'subagent', arguments: { prompt: '[[c]] task', label: 'worker', mode: 'continuable' } }, hold('root')] },
      { text: 'root done' },
    );
    w.script.on('c', { toolCalls: [report('early news')] }, { text: 'c done' });
    await w.root.accept('[[root]] go');
    await w.gates.whenHeld('root');
    await waitFor(() => w.t.h.store.children(w.root.id).length === 1, 'the child');
    const [child] = w.t.h.store.children(w.root.id);
    await waitFor(() => ofType(w.t.h.resident(child.id)?.session.events ?? [], 'tool/result').some((e) => e.name === 'report'), 'the child report');
    assert.equal(reports(w.root.session.events).length, 0, 'not in the middle of the step');

    w.gates.release('root');
    await turnsEnded(w.root, 1);
    const evs = w.root.session.events;
    const [r] = reports(evs, child.id);
    assert.ok(r && r.type === 'user/message');
    const holdResult = ofType(evs, 'tool/result').find((e) => e.name === 'hold')!;
    const nextRequest = ofType(evs, 'request/header').find((e) => e.seq > holdResult.seq)!;
    assert.ok(holdResult.seq < r.seq && r.seq < nextRequest.seq, 'after the tool results, before the next request');
    assert.equal(contents(w.script.bodies('root')[1]).at(-1), '[report from subagent worker]\nearly news');
    const firstEnd = ofType(evs, 'turn/end')[0];
    assert.ok(r.seq < firstEnd.seq, 'it joined the running turn at a safe point');
    assert.equal(ofType(evs, 'inbox/accepted').filter((e) => e.source.kind === 'subagent-report').length, 0, 'it queued no turn of its own');
    await w.t.h.settle();
  });

  it('wakeup: queued to the parent and starts a parent turn while the child still works', async () => {
    w.script.on('c', { toolCalls: [report('need a decision', 'wakeup')] }, { toolCalls: [hold('c')] }, { text: 'c done' });
    const { childId } = await w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: '[[c]] task', label: 'worker' });
    await w.gates.whenHeld('c');
    await turnsEnded(w.root, 1);
    const [r] = reports(w.root.session.events, childId);
    assert.equal(r.type, 'inbox/accepted');
    assert.deepEqual(r.source, { kind: 'subagent-report', fromSession: childId, mode: 'wakeup' });
    const [body] = w.script.bodies(undefined);
    assert.equal(contents(body).at(-1), '[report from subagent worker]\nneed a decision');
    assert.equal(w.t.h.resident(childId)!.activity, 'running', 'the child is still in its turn');
    w.gates.release('c');
    await w.t.h.settle();
  });

  it('goes to the durable direct parent, which the model cannot name', async () => {
    w.script.on('c', { toolCalls: [hold('c')] }, { text: 'c done' });
    w.script.on('g', { toolCalls: [report('to my parent'), { name: 'report', arguments: { message: 'elsewhere', to: w.root.id } }] }, { text: 'g done' });
    const c = await w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: '[[c]] task' });
    await w.gates.whenHeld('c');
    const g = await w.t.h.subagents.startContinuable(w.t.h.resident(c.childId)!, 'spawn', { prompt: '[[g]] leaf' });
    const gAgent = w.t.h.resident(g.childId)!;
    await turnsEnded(gAgent, 1);
    const [ok, bad] = ofType(gAgent.session.events, 'tool/result');
    assert.ok(!ok.isError);
    assert.match(ok.content, new RegExp(`Reported to ${c.childId.replace(/\./g, '\\.')}`));
    assert.ok(bad.isError, 'an unknown argument (a recipient) is refused');
    w.gates.release('c');
    await w.t.h.settle();
    const cEvents = await w.t.h.store.readEvents(c.childId);
    assert.deepEqual(
      reports(cEvents, g.childId).map((e) => (e.type === 'user/message' ? e.text.split('\n')[1] : e.type)),
      ['to my parent'],
    );
    assert.equal(reports(w.root.session.events).length, 0, 'never the grandparent');
  });

  it('a quiet report to a released parent is recorded in its log without resuming it', async () => {
    w.script.on('c', { toolCalls: [hold('c')] }, { text: 'C first' }, { text: 'C saw G' }, { text: 'C saw G again' });
    w.script.on('g', { text: 'G first' }, { toolCalls: [report('quiet note')] }, { text: 'G second' });
    const c = await w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: '[[c]] task' });
    await w.gates.whenHeld('c');
    const g = await w.t.h.subagents.startContinuable(w.t.h.resident(c.childId)!, 'spawn', { prompt: '[[g]] leaf', label: 'leaf' });
    w.gates.release('c');
    await w.t.h.settle();
    assert.equal(w.t.h.resident(c.childId), undefined);
    const cRequests = w.script.bodies('c').length;

    await w.t.h.send(g.childId, '[[g]] report quietly');
    await w.t.h.settle();
    const cLog = await w.t.h.store.readEvents(c.childId);
    const [r] = reports(cLog, g.childId);
    assert.ok(r && r.type === 'user/message' && r.text === '[report from subagent leaf]\nquiet note');
    const notices = delivered(cLog, 'subagent-settled', g.childId);
    assert.equal(notices.length, 2);
    assert.ok(r.seq < notices[1].seq, 'recorded before the settlement notice that woke the parent');
    assert.equal(w.script.bodies('c').length, cRequests + 1, 'only the notice gave the parent a turn');
    assert.deepEqual(
      cLog.map((e) => e.seq),
      cLog.map((_, i) => i),
    );
  });

  it('is registered only in a continuable child scope: not for roots, one-shots or forks', async () => {
    w.script.on('root', { text: 'root turn' }, { toolCalls: [{ name: 'subagent_fork', arguments: { prompt: '[[f]] fork' } }] }, { text: 'root done' });
    await w.root.accept('[[root]] first');
    await w.root.idle();
    const once = await w.t.h.subagents.start(w.root, 'spawn', { prompt: '[[o]] one-shot' });
    await once.result;
    await once.dispose();
    await w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: '[[c]] continuable' });
    await w.root.accept('[[root]] fork now');
    await w.t.h.settle();
    assert.ok(!toolNames(w.script.bodies('root')[0]).includes('report'));
    assert.ok(!toolNames(w.script.bodies('o')[0]).includes('report'));
    assert.ok(!toolNames(w.script.bodies('f')[0]).includes('report'));
    assert.ok(toolNames(w.script.bodies('c')[0]).includes('report'));
    await assert.rejects(reportToParent(w.t.h.subagents, w.root.id, 'x', 'quiet'), assertCode('UNKNOWN_PARENT'));
  });
});
