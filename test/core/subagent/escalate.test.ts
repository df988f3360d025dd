import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { HarnessConfig } from '../../../src/core/harness';
import type { ApprovalDecision, ApprovalRequest } from '../../../src/core/policy/approval';
import { type ScriptedApproval, scriptedApproval } from '../../support/scripted-approval';
import { ofType, subagentWorld } from './helpers';

// Outside the OS sandbox: the one thing a command needs approval for (decision 0005).
const run = (command: string) => ({ name: 'run_command', arguments: { command, outsideSandbox: true } });

/** allow / deny by the command text; `hang` never answers. */
function decide(req: ApprovalRequest): ApprovalDecision | Promise<ApprovalDecision> {
  if (req.summary.includes('hang')) return new Promise<ApprovalDecision>(() => undefined);
  return req.summary.includes('allowed') ? 'allow' : 'deny';
}

describe('subagent: childApproval escalate — a child asks the human through the host port, tagged', () => {
  let port: ScriptedApproval;
  const w = subagentWorld({}, { gates: false, perTest: true });

  async function setup(overrides: Partial<HarnessConfig> = {}): Promise<void> {
    port = scriptedApproval(decide);
    await w.setup({ sandbox: 'workspace-write', approval: 'ask', approvalPort: port, childApproval: 'escalate', escalateTimeoutMs: 50, ...overrides });
  }
  const exists = (f: string) => fs.existsSync(path.join(w.t.workspace, f));
  const childResults = async (id: string) => ofType(await w.t.h.store.readEvents(id), 'tool/result').filter((e) => e.name === 'run_command');

  it("a child's command reaches the port with its id and lineage; allow runs it, deny refuses it", async () => {
    await setup();
    w.script.on('root', { toolCalls: [{ name: 'subagent', arguments: { prompt: '[[c]] run two commands' } }] }, { text: 'root done' });
    w.script.on('c', { toolCalls: [run('echo allowed > a.txt'), run('echo denied > d.txt')] }, { text: 'c done' });
    await w.root.accept('[[root]] go');
    await w.t.h.settle();
    const [child] = w.t.h.store.children(w.root.id);
    assert.deepEqual(
      port.requests.map((r) => [r.sessionId, r.tool, r.lineage]),
      [
        [child.id, 'run_command', [child.id, w.root.id]],
        [child.id, 'run_command', [child.id, w.root.id]],
      ],
    );
    assert.equal(exists('a.txt'), true);
    assert.equal(exists('d.txt'), false);
    const [allowed, denied] = await childResults(child.id);
    assert.ok(!allowed.isError, allowed.content);
    assert.ok(denied.isError);
    assert.match(denied.content, /refused by the user/);
    const policy = ofType(await w.t.h.store.readEvents(child.id), 'approval/policy');
    assert.deepEqual(
      policy.map((e) => [e.policy, e.source]),
      [['ask', 'delegation']],
    );
  });

  it('childApproval changed live (setDefaults, as a settings change does): the next child uses it, no reopen (issue 21.4)', async () => {
    await setup({ childApproval: 'never' });
    w.script.on('root', { toolCalls: [{ name: 'subagent', arguments: { prompt: '[[c]] run one' } }] }, { text: 'root done' });
    w.script.on('c', { toolCalls: [run('echo allowed > first.txt')] }, { text: 'c done' });
    await w.root.accept('[[root]] go');
    await w.t.h.settle();
    assert.equal(port.requests.length, 0, 'under never, nothing reaches the human');
    assert.equal(exists('first.txt'), false);
    w.t.h.setDefaults({ childApproval: 'escalate' });
    w.script.on('root', { toolCalls: [{ name: 'subagent', arguments: { prompt: '[[c2]] run one' } }] }, { text: 'root done again' });
    w.script.on('c2', { toolCalls: [run('echo allowed > second.txt')] }, { text: 'c2 done' });
    await w.root.accept('[[root]] again');
    await w.t.h.settle();
    assert.equal(port.requests.length, 1, 'the next child asks the human');
    assert.equal(exists('second.txt'), true);
  });

  it('a grandchild is tagged with its whole lineage', async () => {
    await setup();
    w.script.on('root', { toolCalls: [{ name: 'subagent', arguments: { prompt: '[[c]] delegate' } }] }, { text: 'root done' });
    w.script.on('c', { toolCalls: [{ name: 'subagent', arguments: { prompt: '[[g]] run' } }] }, { text: 'c done' });
    w.script.on('g', { toolCalls: [run('echo allowed > g.txt')] }, { text: 'g done' });
    await w.root.accept('[[root]] go');
    await w.t.h.settle();
    const [child] = w.t.h.store.children(w.root.id);
    const [grand] = w.t.h.store.children(child.id);
    assert.deepEqual(
      port.requests.map((r) => r.lineage),
      [[grand.id, child.id, w.root.id]],
    );
    assert.equal(exists('g.txt'), true);
  });

  it('a port that never answers is a denial after the timeout, not a stuck child', async () => {
    await setup();
    w.script.on('c', { toolCalls: [run('echo hang > h.txt')] }, { text: 'gave up' });
    const once = await w.t.h.subagents.start(w.root, 'spawn', { prompt: '[[c]] run' });
    const r = await once.result;
    assert.equal(r.stopReason, 'completed');
    assert.equal(port.requests.length, 1);
    const [res] = await childResults(once.id);
    assert.ok(res.isError);
    assert.match(res.content, /refused/);
    assert.equal(exists('h.txt'), false);
    await once.dispose();
  });

  it('escalation survives a cold resume (the child log says ask; the lineage is rebuilt)', async () => {
    await setup();
    w.script.on('c', { text: 'first turn' }, { toolCalls: [run('echo allowed > later.txt')] }, { text: 'ran it' });
    const { childId } = await w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: '[[c]] wait for instructions' });
    await w.t.h.settle();
    assert.equal(w.t.h.resident(childId), undefined);
    const r = await w.t.h.subagents.followup(w.root.id, childId, '[[c]] now run it');
    assert.equal(r.path, 'cold-resume');
    await w.t.h.settle();
    assert.deepEqual(
      port.requests.map((q) => [q.sessionId, q.lineage]),
      [[childId, [childId, w.root.id]]],
    );
    assert.equal(exists('later.txt'), true);
  });

  it("never widens: a parent whose own policy is 'never' has children that never ask", async () => {
    await setup();
    await w.root.append({ type: 'approval/policy', policy: 'never', source: 'user' });
    w.script.on('c', { toolCalls: [run('echo allowed > n.txt')] }, { text: 'refused' });
    const once = await w.t.h.subagents.start(w.root, 'spawn', { prompt: '[[c]] run' });
    await once.result;
    assert.equal(port.requests.length, 0);
    assert.equal(exists('n.txt'), false);
    assert.deepEqual(
      ofType(await w.t.h.store.readEvents(once.id), 'approval/policy').map((e) => e.policy),
      ['never'],
    );
    await once.dispose();
  });

  it("the default childApproval 'never' refuses without asking anyone, while the root still asks", async () => {
    await setup({ childApproval: undefined });
    w.script.on('root', { toolCalls: [run('echo allowed > root.txt'), { name: 'subagent', arguments: { prompt: '[[c]] run' } }] }, { text: 'root done' });
    w.script.on('c', { toolCalls: [run('echo allowed > child.txt')] }, { text: 'c done' });
    await w.root.accept('[[root]] go');
    await w.t.h.settle();
    const [child] = w.t.h.store.children(w.root.id);
    assert.deepEqual(
      port.requests.map((r) => [r.sessionId, r.lineage]),
      [[w.root.id, undefined]],
    );
    assert.equal(exists('root.txt'), true);
    assert.equal(exists('child.txt'), false);
    const [res] = await childResults(child.id);
    assert.match(res.content, /approval policy is "never"/);
    assert.deepEqual(
      ofType(await w.t.h.store.readEvents(child.id), 'approval/policy').map((e) => e.policy),
      ['never'],
    );
  });
});
