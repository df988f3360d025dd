import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Agent } from '../../../src/core/agent/agent';
import type { SessionEvent } from '../../../src/core/session/events';
import { policyOverrides } from '../../../src/core/session/folds';
import { Session } from '../../../src/core/session/session';
import type { TestHarness } from '../../support/harness';
import { type ScriptedApproval, scriptedApproval } from '../../support/scripted-approval';
import { hold, ofType, subagentWorld } from './helpers';

const write = (file: string) => ({ name: 'write_file', arguments: { path: file, content: 'written' } });

function results(evs: readonly SessionEvent[], name: string) {
  return ofType(evs, 'tool/result').filter((e) => e.name === name);
}

/** The delegation policy events of a child log, with where its own (live) facts start. */
function delegationEvents(h: TestHarness['h'], id: string, evs: SessionEvent[]) {
  const header = h.store.header(id)!;
  const firstLive = header.seedLength === undefined ? 0 : header.seedLength + 1;
  return {
    firstLive,
    sandbox: ofType(evs, 'sandbox/mode').filter((e) => e.source === 'delegation'),
    approval: ofType(evs, 'approval/policy').filter((e) => e.source === 'delegation'),
  };
}

describe('subagent: the parent policy snapshot, enforced for real in children', () => {
  const w = subagentWorld({ sandbox: 'workspace-write' }, { perTest: true });

  const readOnly = (a: Agent) => a.append({ type: 'sandbox/mode', mode: 'read-only', source: 'user' });
  const exists = (f: string) => fs.existsSync(path.join(w.t.workspace, f));

  it('a read-only parent: its child and grandchild cannot write, though the deployment allows writes', async () => {
    await w.setup();
    await readOnly(w.root);
    w.script.on('root', { toolCalls: [{ name: 'subagent', arguments: { prompt: '[[c]] write c.txt and delegate' } }] }, { text: 'root done' });
    w.script.on('c', { toolCalls: [write('c.txt'), { name: 'subagent', arguments: { prompt: '[[g]] write g.txt' } }] }, { text: 'c done' });
    w.script.on('g', { toolCalls: [write('g.txt')] }, { text: 'g done' });
    w.script.on('other', { toolCalls: [write('other.txt')] }, { text: 'other done' });
    await w.root.accept('[[root]] go');
    await w.t.h.settle();

    const [child] = w.t.h.store.children(w.root.id);
    const [grand] = w.t.h.store.children(child.id);
    for (const [id, file] of [
      [child.id, 'c.txt'],
      [grand.id, 'g.txt'],
    ]) {
      const evs = await w.t.h.store.readEvents(id);
      const [r] = results(evs, 'write_file');
      assert.ok(r.isError, `${file}: ${r.content}`);
      assert.match(r.content, /read-only/);
      assert.equal(exists(file), false, `${file} was not written`);
      const d = delegationEvents(w.t.h, id, evs);
      assert.equal(d.sandbox.length, 1);
      assert.equal(d.sandbox[0].mode, 'read-only');
      assert.ok(d.sandbox[0].seq >= d.firstLive);
      assert.equal(policyOverrides(evs).sandbox?.value, 'read-only');
    }

    // Control: a root without the override writes under the same deployment.
    const other = await w.t.h.createSession();
    await other.accept('[[other]] write');
    await w.t.h.settle();
    assert.equal(exists('other.txt'), true);
  });

  it('the snapshot is taken synchronously at start: a switch in the same tick is not seen by the child', async () => {
    await w.setup();
    await readOnly(w.root);
    w.script.on('c', { toolCalls: [write('c.txt')] }, { text: 'c done' });
    const started = w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: '[[c]] write' });
    const switched = w.root.append({ type: 'sandbox/mode', mode: 'workspace-write', source: 'user' });
    const [{ childId }] = await Promise.all([started, switched]);
    await w.t.h.settle();
    const evs = await w.t.h.store.readEvents(childId);
    assert.equal(policyOverrides(evs).sandbox?.value, 'read-only');
    assert.ok(results(evs, 'write_file')[0].isError);
    assert.equal(exists('c.txt'), false);
  });

  it('a parent switch after the child started never reaches the running child', async () => {
    await w.setup();
    await readOnly(w.root);
    w.script.on('c', { toolCalls: [hold('c')] }, { toolCalls: [write('c.txt')] }, { text: 'c done' });
    w.script.on('root', { toolCalls: [write('root.txt')] }, { text: 'root wrote' });
    const { childId } = await w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: '[[c]] wait, then write' });
    await w.gates.whenHeld('c');
    await w.root.append({ type: 'sandbox/mode', mode: 'workspace-write', source: 'user' });
    await w.root.accept('[[root]] write root.txt');
    await w.root.idle();
    assert.equal(exists('root.txt'), true, 'the switch is real for the parent');
    w.gates.release('c');
    await w.t.h.settle();
    const evs = await w.t.h.store.readEvents(childId);
    assert.ok(results(evs, 'write_file')[0].isError);
    assert.equal(exists('c.txt'), false);
    assert.equal(ofType(evs, 'sandbox/mode').length, 1, 'nothing was appended to the child after it started');
  });

  it('with an approval service in the deployment, children get approval/policy never and are refused without asking', async () => {
    const port: ScriptedApproval = scriptedApproval(() => 'allow');
    await w.setup({ approval: 'ask', approvalPort: port });
    w.script.on(
      'root',
      {
        toolCalls: [
          { name: 'run_command', arguments: { command: 'echo root-ran', outsideSandbox: true } },
          { name: 'subagent', arguments: { prompt: '[[c]] run' } },
        ],
      },
      { text: 'root done' },
    );
    w.script.on('c', { toolCalls: [{ name: 'run_command', arguments: { command: 'echo child-ran > child.txt', outsideSandbox: true } }] }, { text: 'c done' });
    await w.root.accept('[[root]] go');
    await w.t.h.settle();
    const [child] = w.t.h.store.children(w.root.id);
    const evs = await w.t.h.store.readEvents(child.id);
    const d = delegationEvents(w.t.h, child.id, evs);
    assert.deepEqual(
      d.approval.map((e) => e.policy),
      ['never'],
    );
    const [r] = results(evs, 'run_command');
    assert.ok(r.isError);
    assert.match(r.content, /approval policy is "never"/);
    assert.equal(exists('child.txt'), false);
    assert.deepEqual(
      port.requests.map((q) => q.sessionId),
      [w.root.id],
      'only the root asked',
    );
    const rootRun = results(w.root.session.events, 'run_command')[0];
    assert.ok(!rootRun.isError, rootRun.content);
  });

  it("a fork's delegation events sit after its seed, and override the seed's switches", async () => {
    await w.setup();
    await w.root.append({ type: 'sandbox/mode', mode: 'full-access', source: 'user' });
    w.script.on(
      'root',
      { text: 'first turn done' },
      { toolCalls: [{ name: 'subagent_fork', arguments: { prompt: '[[f]] write f.txt' } }] },
      { text: 'root done' },
    );
    w.script.on('f', { toolCalls: [write('f.txt')] }, { text: 'f done' });
    await w.root.accept('[[root]] first');
    await w.root.idle();
    // The seed (up to turn 1) says full-access; the parent is read-only when it forks.
    await readOnly(w.root);
    await w.root.accept('[[root]] now fork');
    await w.t.h.settle();
    const [fork] = w.t.h.store.children(w.root.id);
    const evs = await w.t.h.store.readEvents(fork.id);
    const session = Session.restore(fork, evs);
    assert.ok(session.seedLength > 0);
    const d = delegationEvents(w.t.h, fork.id, evs);
    assert.equal(d.firstLive, session.firstLiveSeq);
    assert.equal(evs[session.seedLength].type, 'session/end-seed');
    const seedSwitches = ofType(evs.slice(0, session.seedLength), 'sandbox/mode');
    assert.deepEqual(
      seedSwitches.map((e) => [e.mode, e.source]),
      [['full-access', 'user']],
      'the seed carries the old switch as history',
    );
    assert.equal(d.sandbox.length, 1);
    assert.ok(d.sandbox[0].seq >= session.firstLiveSeq, 'delegation facts are live, after the seed');
    assert.ok(ofType(evs, 'subagent/descriptor')[0].seq > d.sandbox[0].seq);
    assert.ok(results(evs, 'write_file')[0].isError);
    assert.equal(exists('f.txt'), false);
  });
});
