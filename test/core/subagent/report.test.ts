import assert from 'node:assert/strict';
import type { Agent } from '../../../src/core/agent/agent';
import type { SessionEvent } from '../../../src/core/session/events';
import { reportToParent } from '../../../src/core/subagent/control';
import { ModelServer } from '../../support/model-server';
import { makeHarness, type TestHarness } from '../../support/harness';
import { assertCode, contents, delivered, Gates, hold, ofType, Script, toolNames, turnsEnded, waitFor } from './helpers';

const report = (message: string, mode?: 'quiet' | 'wakeup') => ({ name: 'report', arguments: { message, ...(mode ? { mode } : {}) } });
const reports = (evs: readonly SessionEvent[], from?: string) => delivered(evs, 'subagent-report', from);

describe('subagent: report — child to its direct parent, quiet or wakeup, not a result', () => {
  let server: ModelServer;
  let t: TestHarness;
  let script: Script;
  let gates: Gates;
  let root: Agent;
  before(async () => (server = await ModelServer.start()));
  after(() => server.stop());
  beforeEach(async () => {
    server.reset();
    script = new Script(server);
    t = await makeHarness(server, { releaseDelayMs: 5 });
    gates = new Gates().install(t.h);
    root = await t.h.createSession();
  });
  afterEach(async () => {
    gates.releaseAll();
    await t.cleanup();
  });

  it('quiet: lands in the idle parent history without starting a turn; the child turn goes on', async () => {
    script.on('c', { toolCalls: [report('half way')] }, { toolCalls: [hold('c')] }, { text: 'all done' });
    const { childId } = await t.h.subagents.startContinuable(root, 'spawn', { prompt: '[[c]] task', label: 'worker' });
    await gates.whenHeld('c');
    const [r, ...more] = reports(root.session.events, childId);
    assert.equal(more.length, 0);
    assert.ok(r.type === 'user/message', 'written straight into the history');
    assert.deepEqual(r.source, { kind: 'subagent-report', fromSession: childId, mode: 'quiet' });
    assert.equal(r.text, '[report from subagent worker]\nhalf way');
    assert.equal(ofType(root.session.events, 'inbox/accepted').length, 0, 'not queued');
    assert.equal(ofType(root.session.events, 'turn/start').length, 0, 'no parent turn');
    assert.equal(root.status, 'idle');

    // The child's turn did not end at the report: it made another request in the same turn.
    const child = t.h.resident(childId)!;
    assert.equal(child.status, 'running');
    assert.equal(ofType(child.session.events, 'turn/end').length, 0);
    const rep = ofType(child.session.events, 'tool/result').find((e) => e.name === 'report')!;
    assert.ok(!rep.isError, rep.content);
    assert.ok(child.session.events.some((e) => e.type === 'request/header' && e.seq > rep.seq));

    gates.release('c');
    await t.h.settle();
    // The final message is the result, not the report.
    const [n] = delivered(root.session.events, 'subagent-settled', childId) as { text: string }[];
    assert.ok(n.text.endsWith('all done'));
    assert.ok(!n.text.includes('half way'));
    // Only the notice started a parent turn, and it saw the report as history.
    assert.equal(ofType(root.session.events, 'turn/start').length, 1);
    const [body] = script.bodies(undefined);
    assert.ok(contents(body).includes('[report from subagent worker]\nhalf way'));
  });

  it('quiet to a parent mid-turn: held until its next safe point, then before its next request', async () => {
    script.on(
      'root',
      { toolCalls: [{ name: 'subagent', arguments: { prompt: '[[c]] task', label: 'worker', mode: 'continuable' } }, hold('root')] },
      { text: 'root done' },
    );
    script.on('c', { toolCalls: [report('early news')] }, { text: 'c done' });
    await root.accept('[[root]] go');
    await gates.whenHeld('root');
    await waitFor(() => t.h.store.children(root.id).length === 1, 'the child');
    const [child] = t.h.store.children(root.id);
    await waitFor(() => ofType(t.h.resident(child.id)?.session.events ?? [], 'tool/result').some((e) => e.name === 'report'), 'the child report');
    assert.equal(reports(root.session.events).length, 0, 'not in the middle of the step');

    gates.release('root');
    await turnsEnded(root, 1);
    const evs = root.session.events;
    const [r] = reports(evs, child.id);
    assert.ok(r && r.type === 'user/message');
    const holdResult = ofType(evs, 'tool/result').find((e) => e.name === 'hold')!;
    const nextRequest = ofType(evs, 'request/header').find((e) => e.seq > holdResult.seq)!;
    assert.ok(holdResult.seq < r.seq && r.seq < nextRequest.seq, 'after the tool results, before the next request');
    assert.equal(contents(script.bodies('root')[1]).at(-1), '[report from subagent worker]\nearly news');
    const firstEnd = ofType(evs, 'turn/end')[0];
    assert.ok(r.seq < firstEnd.seq, 'it joined the running turn at a safe point');
    assert.equal(ofType(evs, 'inbox/accepted').filter((e) => e.source.kind === 'subagent-report').length, 0, 'it queued no turn of its own');
    await t.h.settle();
  });

  it('wakeup: queued to the parent and starts a parent turn while the child still works', async () => {
    script.on('c', { toolCalls: [report('need a decision', 'wakeup')] }, { toolCalls: [hold('c')] }, { text: 'c done' });
    const { childId } = await t.h.subagents.startContinuable(root, 'spawn', { prompt: '[[c]] task', label: 'worker' });
    await gates.whenHeld('c');
    await turnsEnded(root, 1);
    const [r] = reports(root.session.events, childId);
    assert.equal(r.type, 'inbox/accepted');
    assert.deepEqual(r.source, { kind: 'subagent-report', fromSession: childId, mode: 'wakeup' });
    const [body] = script.bodies(undefined);
    assert.equal(contents(body).at(-1), '[report from subagent worker]\nneed a decision');
    assert.equal(t.h.resident(childId)!.status, 'running', 'the child is still in its turn');
    gates.release('c');
    await t.h.settle();
  });

  it('goes to the durable direct parent, which the model cannot name', async () => {
    script.on('c', { toolCalls: [hold('c')] }, { text: 'c done' });
    script.on('g', { toolCalls: [report('to my parent'), { name: 'report', arguments: { message: 'elsewhere', to: root.id } }] }, { text: 'g done' });
    const c = await t.h.subagents.startContinuable(root, 'spawn', { prompt: '[[c]] task' });
    await gates.whenHeld('c');
    const g = await t.h.subagents.startContinuable(t.h.resident(c.childId)!, 'spawn', { prompt: '[[g]] leaf' });
    const gAgent = t.h.resident(g.childId)!;
    await turnsEnded(gAgent, 1);
    const [ok, bad] = ofType(gAgent.session.events, 'tool/result');
    assert.ok(!ok.isError);
    assert.match(ok.content, new RegExp(`Reported to ${c.childId.replace(/\./g, '\\.')}`));
    assert.ok(bad.isError, 'an unknown argument (a recipient) is refused');
    gates.release('c');
    await t.h.settle();
    const cEvents = await t.h.store.readEvents(c.childId);
    assert.deepEqual(reports(cEvents, g.childId).map((e) => (e.type === 'user/message' ? e.text.split('\n')[1] : e.type)), ['to my parent']);
    assert.equal(reports(root.session.events).length, 0, 'never the grandparent');
  });

  it('a quiet report to a released parent is recorded in its log without resuming it', async () => {
    script.on('c', { toolCalls: [hold('c')] }, { text: 'C first' }, { text: 'C saw G' }, { text: 'C saw G again' });
    script.on('g', { text: 'G first' }, { toolCalls: [report('quiet note')] }, { text: 'G second' });
    const c = await t.h.subagents.startContinuable(root, 'spawn', { prompt: '[[c]] task' });
    await gates.whenHeld('c');
    const g = await t.h.subagents.startContinuable(t.h.resident(c.childId)!, 'spawn', { prompt: '[[g]] leaf', label: 'leaf' });
    gates.release('c');
    await t.h.settle();
    assert.equal(t.h.resident(c.childId), undefined);
    const cRequests = script.bodies('c').length;

    await t.h.send(g.childId, '[[g]] report quietly');
    await t.h.settle();
    const cLog = await t.h.store.readEvents(c.childId);
    const [r] = reports(cLog, g.childId);
    assert.ok(r && r.type === 'user/message' && r.text === '[report from subagent leaf]\nquiet note');
    const notices = delivered(cLog, 'subagent-settled', g.childId);
    assert.equal(notices.length, 2);
    assert.ok(r.seq < notices[1].seq, 'recorded before the settlement notice that woke the parent');
    assert.equal(script.bodies('c').length, cRequests + 1, 'only the notice gave the parent a turn');
    assert.deepEqual(cLog.map((e) => e.seq), cLog.map((_, i) => i));
  });

  it('is registered only in a continuable child scope: not for roots, one-shots or forks', async () => {
    script.on('root', { text: 'root turn' }, { toolCalls: [{ name: 'subagent_fork', arguments: { prompt: '[[f]] fork' } }] }, { text: 'root done' });
    await root.accept('[[root]] first');
    await root.idle();
    const once = await t.h.subagents.start(root, 'spawn', { prompt: '[[o]] one-shot' });
    await once.result;
    await once.dispose();
    await t.h.subagents.startContinuable(root, 'spawn', { prompt: '[[c]] continuable' });
    await root.accept('[[root]] fork now');
    await t.h.settle();
    assert.ok(!toolNames(script.bodies('root')[0]).includes('report'));
    assert.ok(!toolNames(script.bodies('o')[0]).includes('report'));
    assert.ok(!toolNames(script.bodies('f')[0]).includes('report'));
    assert.ok(toolNames(script.bodies('c')[0]).includes('report'));
    await assert.rejects(reportToParent(t.h.subagents, root.id, 'x', 'quiet'), assertCode('UNKNOWN_PARENT'));
  });
});
