import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Agent } from '../../../src/core/agent/agent';
import type { HarnessConfig } from '../../../src/core/harness';
import { scriptedApproval, type ScriptedApproval } from '../../../src/core/policy/approval';
import type { SessionEvent } from '../../../src/core/session/events';
import { policyOverrides } from '../../../src/core/session/folds';
import { Session } from '../../../src/core/session/session';
import { ModelServer } from '../../support/model-server';
import { makeHarness, type TestHarness } from '../../support/harness';
import { Gates, hold, ofType, Script } from './helpers';

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
  let server: ModelServer;
  let t: TestHarness;
  let script: Script;
  let gates: Gates;
  let root: Agent;
  before(async () => (server = await ModelServer.start()));
  after(() => server.stop());
  afterEach(async () => {
    gates.releaseAll();
    await t.cleanup();
  });

  async function setup(overrides: Partial<HarnessConfig> = {}): Promise<void> {
    server.reset();
    script = new Script(server);
    t = await makeHarness(server, { releaseDelayMs: 5, sandbox: 'workspace-write', ...overrides });
    gates = new Gates().install(t.h);
    root = await t.h.createSession();
  }

  const readOnly = (a: Agent) => a.cfg.writer.append({ type: 'sandbox/mode', mode: 'read-only', source: 'user' });
  const exists = (f: string) => fs.existsSync(path.join(t.workspace, f));

  it('a read-only parent: its child and grandchild cannot write, though the deployment allows writes', async () => {
    await setup();
    await readOnly(root);
    script.on('root', { toolCalls: [{ name: 'subagent', arguments: { prompt: '[[c]] write c.txt and delegate' } }] }, { text: 'root done' });
    script.on('c', { toolCalls: [write('c.txt'), { name: 'subagent', arguments: { prompt: '[[g]] write g.txt' } }] }, { text: 'c done' });
    script.on('g', { toolCalls: [write('g.txt')] }, { text: 'g done' });
    script.on('other', { toolCalls: [write('other.txt')] }, { text: 'other done' });
    await root.accept('[[root]] go');
    await t.h.settle();

    const [child] = t.h.store.children(root.id);
    const [grand] = t.h.store.children(child.id);
    for (const [id, file] of [[child.id, 'c.txt'], [grand.id, 'g.txt']]) {
      const evs = await t.h.store.readEvents(id);
      const [r] = results(evs, 'write_file');
      assert.ok(r.isError, `${file}: ${r.content}`);
      assert.match(r.content, /read-only/);
      assert.equal(exists(file), false, `${file} was not written`);
      const d = delegationEvents(t.h, id, evs);
      assert.equal(d.sandbox.length, 1);
      assert.equal(d.sandbox[0].mode, 'read-only');
      assert.ok(d.sandbox[0].seq >= d.firstLive);
      assert.equal(policyOverrides(evs).sandbox?.value, 'read-only');
    }

    // Control: a root without the override writes under the same deployment.
    const other = await t.h.createSession();
    await other.accept('[[other]] write');
    await t.h.settle();
    assert.equal(exists('other.txt'), true);
  });

  it('the snapshot is taken synchronously at start: a switch in the same tick is not seen by the child', async () => {
    await setup();
    await readOnly(root);
    script.on('c', { toolCalls: [write('c.txt')] }, { text: 'c done' });
    const started = t.h.subagents.startContinuable(root, 'spawn', { prompt: '[[c]] write' });
    const switched = root.cfg.writer.append({ type: 'sandbox/mode', mode: 'workspace-write', source: 'user' });
    const [{ childId }] = await Promise.all([started, switched]);
    await t.h.settle();
    const evs = await t.h.store.readEvents(childId);
    assert.equal(policyOverrides(evs).sandbox?.value, 'read-only');
    assert.ok(results(evs, 'write_file')[0].isError);
    assert.equal(exists('c.txt'), false);
  });

  it('a parent switch after the child started never reaches the running child', async () => {
    await setup();
    await readOnly(root);
    script.on('c', { toolCalls: [hold('c')] }, { toolCalls: [write('c.txt')] }, { text: 'c done' });
    script.on('root', { toolCalls: [write('root.txt')] }, { text: 'root wrote' });
    const { childId } = await t.h.subagents.startContinuable(root, 'spawn', { prompt: '[[c]] wait, then write' });
    await gates.whenHeld('c');
    await root.cfg.writer.append({ type: 'sandbox/mode', mode: 'workspace-write', source: 'user' });
    await root.accept('[[root]] write root.txt');
    await root.idle();
    assert.equal(exists('root.txt'), true, 'the switch is real for the parent');
    gates.release('c');
    await t.h.settle();
    const evs = await t.h.store.readEvents(childId);
    assert.ok(results(evs, 'write_file')[0].isError);
    assert.equal(exists('c.txt'), false);
    assert.equal(ofType(evs, 'sandbox/mode').length, 1, 'nothing was appended to the child after it started');
  });

  it('with an approval service in the deployment, children get approval/policy never and are refused without asking', async () => {
    const port: ScriptedApproval = scriptedApproval(() => 'allow');
    await setup({ approval: 'ask', approvalPort: port });
    script.on('root', { toolCalls: [{ name: 'run_command', arguments: { command: 'echo root-ran' } }, { name: 'subagent', arguments: { prompt: '[[c]] run' } }] }, { text: 'root done' });
    script.on('c', { toolCalls: [{ name: 'run_command', arguments: { command: 'echo child-ran > child.txt' } }] }, { text: 'c done' });
    await root.accept('[[root]] go');
    await t.h.settle();
    const [child] = t.h.store.children(root.id);
    const evs = await t.h.store.readEvents(child.id);
    const d = delegationEvents(t.h, child.id, evs);
    assert.deepEqual(d.approval.map((e) => e.policy), ['never']);
    const [r] = results(evs, 'run_command');
    assert.ok(r.isError);
    assert.match(r.content, /approval policy is "never"/);
    assert.equal(exists('child.txt'), false);
    assert.deepEqual(port.requests.map((q) => q.sessionId), [root.id], 'only the root asked');
    const rootRun = results(root.session.events, 'run_command')[0];
    assert.ok(!rootRun.isError, rootRun.content);
  });

  it("a fork's delegation events sit after its seed, and override the seed's switches", async () => {
    await setup();
    await root.cfg.writer.append({ type: 'sandbox/mode', mode: 'full-access', source: 'user' });
    script.on('root', { text: 'first turn done' }, { toolCalls: [{ name: 'subagent_fork', arguments: { prompt: '[[f]] write f.txt' } }] }, { text: 'root done' });
    script.on('f', { toolCalls: [write('f.txt')] }, { text: 'f done' });
    await root.accept('[[root]] first');
    await root.idle();
    // The seed (up to turn 1) says full-access; the parent is read-only when it forks.
    await readOnly(root);
    await root.accept('[[root]] now fork');
    await t.h.settle();
    const [fork] = t.h.store.children(root.id);
    const evs = await t.h.store.readEvents(fork.id);
    const session = Session.restore(fork, evs);
    assert.ok(session.seedLength > 0);
    const d = delegationEvents(t.h, fork.id, evs);
    assert.equal(d.firstLive, session.firstLiveSeq);
    assert.equal(evs[session.seedLength].type, 'session/end-seed');
    const seedSwitches = ofType(evs.slice(0, session.seedLength), 'sandbox/mode');
    assert.deepEqual(seedSwitches.map((e) => [e.mode, e.source]), [['full-access', 'user']], 'the seed carries the old switch as history');
    assert.equal(d.sandbox.length, 1);
    assert.ok(d.sandbox[0].seq >= session.firstLiveSeq, 'delegation facts are live, after the seed');
    assert.ok(ofType(evs, 'subagent/descriptor')[0].seq > d.sandbox[0].seq);
    assert.ok(results(evs, 'write_file')[0].isError);
    assert.equal(exists('f.txt'), false);
  });
});
