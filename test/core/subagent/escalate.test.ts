import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Agent } from '../../../src/core/agent/agent';
import type { HarnessConfig } from '../../../src/core/harness';
import { scriptedApproval, type ApprovalDecision, type ApprovalRequest, type ScriptedApproval } from '../../../src/core/policy/approval';
import { ModelServer } from '../../support/model-server';
import { makeHarness, type TestHarness } from '../../support/harness';
import { ofType, Script } from './helpers';

const run = (command: string) => ({ name: 'run_command', arguments: { command } });

/** allow / deny by the command text; `hang` never answers. */
function decide(req: ApprovalRequest): ApprovalDecision | Promise<ApprovalDecision> {
  if (req.summary.includes('hang')) return new Promise<ApprovalDecision>(() => undefined);
  return req.summary.includes('allowed') ? 'allow' : 'deny';
}

describe('subagent: childApproval escalate — a child asks the human through the host port, tagged', () => {
  let server: ModelServer;
  let t: TestHarness;
  let script: Script;
  let port: ScriptedApproval;
  let root: Agent;
  before(async () => (server = await ModelServer.start()));
  after(() => server.stop());
  afterEach(() => t.cleanup());

  async function setup(overrides: Partial<HarnessConfig> = {}): Promise<void> {
    server.reset();
    script = new Script(server);
    port = scriptedApproval(decide);
    t = await makeHarness(server, { releaseDelayMs: 5, sandbox: 'workspace-write', approval: 'ask', approvalPort: port, childApproval: 'escalate', escalateTimeoutMs: 50, ...overrides });
    root = await t.h.createSession();
  }
  const exists = (f: string) => fs.existsSync(path.join(t.workspace, f));
  const childResults = async (id: string) => ofType(await t.h.store.readEvents(id), 'tool/result').filter((e) => e.name === 'run_command');

  it("a child's command reaches the port with its id and lineage; allow runs it, deny refuses it", async () => {
    await setup();
    script.on('root', { toolCalls: [{ name: 'subagent', arguments: { prompt: '[[c]] run two commands' } }] }, { text: 'root done' });
    script.on('c', { toolCalls: [run('echo allowed > a.txt'), run('echo denied > d.txt')] }, { text: 'c done' });
    await root.accept('[[root]] go');
    await t.h.settle();
    const [child] = t.h.store.children(root.id);
    assert.deepEqual(
      port.requests.map((r) => [r.sessionId, r.tool, r.lineage]),
      [
        [child.id, 'run_command', [child.id, root.id]],
        [child.id, 'run_command', [child.id, root.id]],
      ],
    );
    assert.equal(exists('a.txt'), true);
    assert.equal(exists('d.txt'), false);
    const [allowed, denied] = await childResults(child.id);
    assert.ok(!allowed.isError, allowed.content);
    assert.ok(denied.isError);
    assert.match(denied.content, /refused by the user/);
    const policy = ofType(await t.h.store.readEvents(child.id), 'approval/policy');
    assert.deepEqual(policy.map((e) => [e.policy, e.source]), [['ask', 'delegation']]);
  });

  it('a grandchild is tagged with its whole lineage', async () => {
    await setup();
    script.on('root', { toolCalls: [{ name: 'subagent', arguments: { prompt: '[[c]] delegate' } }] }, { text: 'root done' });
    script.on('c', { toolCalls: [{ name: 'subagent', arguments: { prompt: '[[g]] run' } }] }, { text: 'c done' });
    script.on('g', { toolCalls: [run('echo allowed > g.txt')] }, { text: 'g done' });
    await root.accept('[[root]] go');
    await t.h.settle();
    const [child] = t.h.store.children(root.id);
    const [grand] = t.h.store.children(child.id);
    assert.deepEqual(port.requests.map((r) => r.lineage), [[grand.id, child.id, root.id]]);
    assert.equal(exists('g.txt'), true);
  });

  it('a port that never answers is a denial after the timeout, not a stuck child', async () => {
    await setup();
    script.on('c', { toolCalls: [run('echo hang > h.txt')] }, { text: 'gave up' });
    const once = await t.h.subagents.start(root, 'spawn', { prompt: '[[c]] run' });
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
    script.on('c', { text: 'first turn' }, { toolCalls: [run('echo allowed > later.txt')] }, { text: 'ran it' });
    const { childId } = await t.h.subagents.startContinuable(root, 'spawn', { prompt: '[[c]] wait for instructions' });
    await t.h.settle();
    assert.equal(t.h.resident(childId), undefined);
    const r = await t.h.subagents.followup(root.id, childId, '[[c]] now run it');
    assert.equal(r.path, 'cold-resume');
    await t.h.settle();
    assert.deepEqual(port.requests.map((q) => [q.sessionId, q.lineage]), [[childId, [childId, root.id]]]);
    assert.equal(exists('later.txt'), true);
  });

  it("never widens: a parent whose own policy is 'never' has children that never ask", async () => {
    await setup();
    await root.cfg.writer.append({ type: 'approval/policy', policy: 'never', source: 'user' });
    script.on('c', { toolCalls: [run('echo allowed > n.txt')] }, { text: 'refused' });
    const once = await t.h.subagents.start(root, 'spawn', { prompt: '[[c]] run' });
    await once.result;
    assert.equal(port.requests.length, 0);
    assert.equal(exists('n.txt'), false);
    assert.deepEqual(ofType(await t.h.store.readEvents(once.id), 'approval/policy').map((e) => e.policy), ['never']);
    await once.dispose();
  });

  it("the default childApproval 'never' refuses without asking anyone, while the root still asks", async () => {
    await setup({ childApproval: undefined });
    script.on('root', { toolCalls: [run('echo allowed > root.txt'), { name: 'subagent', arguments: { prompt: '[[c]] run' } }] }, { text: 'root done' });
    script.on('c', { toolCalls: [run('echo allowed > child.txt')] }, { text: 'c done' });
    await root.accept('[[root]] go');
    await t.h.settle();
    const [child] = t.h.store.children(root.id);
    assert.deepEqual(port.requests.map((r) => [r.sessionId, r.lineage]), [[root.id, undefined]]);
    assert.equal(exists('root.txt'), true);
    assert.equal(exists('child.txt'), false);
    const [res] = await childResults(child.id);
    assert.match(res.content, /approval policy is "never"/);
    assert.deepEqual(ofType(await t.h.store.readEvents(child.id), 'approval/policy').map((e) => e.policy), ['never']);
  });
});
