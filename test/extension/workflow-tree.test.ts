import assert from 'node:assert/strict';
import { AT_REST } from '../../src/core/live/state';
import type { SessionEvent, SessionHeader } from '../../src/core/session/events';
import { summarize } from '../../src/core/session/summary';
import { TreeModel } from '../../src/extension/presenter/tree-model';

const AT = '2026-01-01T00:00:00.000Z';
const header = (id: string, parent?: string): SessionHeader => ({
  id,
  createdAt: AT,
  origin: parent ? 'subagent' : 'user',
  delegationDepth: parent ? 1 : 0,
  ...(parent ? { parentSession: parent } : {}),
});
let seq = 0;
const wf = (type: string, runId: string, data: Record<string, unknown>) => ({ seq: seq++, at: AT, type, runId, data }) as unknown as SessionEvent;
const START = {
  name: 'review',
  description: 'review many files',
  scriptSha256: 'ab',
  scriptBytes: 10,
  limits: { maxTotalAgents: 1000, concurrency: 16, wallClockMs: 1000 },
};

// The panel's tree (decision 0027 §tree): a run is a node of its own under its parent, its
// agents hang under it (their headers keep the real parent), live from workflow/* events.
describe('tree: workflow runs as nodes of their own', () => {
  let running = true;
  let model: TreeModel;
  /** The root's log so far (a reload folds it from the store's summary). */
  let log: SessionEvent[] = [];
  beforeEach(() => {
    running = true;
    seq = 0;
    log = [];
    model = new TreeModel(() => ({ liveOf: (id) => ({ ...AT_REST, running: id === 'root' && running, workflows: id === 'root' && running ? ['r1'] : [] }) }));
    model.addHeader(header('root'));
  });
  /** One event of the root, as the controller feeds it: the summary fold, then the run nodes. */
  function feed(e: SessionEvent): string[] {
    log.push(e);
    model.apply('root', e);
    return model.applyWorkflow('root', e);
  }

  function start(n: number): void {
    feed(wf('workflow/start', 'r1', START));
    feed(wf('workflow/phase', 'r1', { index: 0, title: 'scan' }));
    feed(wf('workflow/log', 'r1', { message: 'found files' }));
    for (let i = 0; i < n; i++) {
      model.addHeader(header(`root.c${i}`, 'root'));
      const changed = feed(wf('workflow/agent', 'r1', { index: i, childId: `root.c${i}`, status: 'started' }));
      assert.deepEqual(changed, ['wf.r1', `root.c${i}`], 'the run and the re-parented agent are re-sent');
    }
  }

  it('shows the run under its parent with its phase, log and agents, and its agents under it', () => {
    start(3);
    feed(wf('workflow/agent', 'r1', { index: 0, childId: 'root.c0', status: 'done', stopReason: 'completed' }));
    const run = model.node('wf.r1')!;
    assert.equal(run.parentId, 'root');
    assert.equal(run.kind, 'workflow');
    assert.equal(run.status, 'running');
    assert.deepEqual(
      { phase: run.workflow!.phase, logs: run.workflow!.logs, agents: run.workflow!.agents, running: run.workflow!.running },
      { phase: 'scan', logs: ['found files'], agents: 3, running: 2 },
    );
    assert.equal(model.node('root.c1')!.parentId, 'wf.r1');
    assert.ok(model.nodes().some((n) => n.id === 'wf.r1'));
  });

  it('ends as the log says; a run a crash left open reads interrupted once its parent is not running', () => {
    start(1);
    running = false;
    assert.equal(model.node('wf.r1')!.status, 'interrupted');
    running = true;
    feed(wf('workflow/end', 'r1', { status: 'failed', code: 'AGENT_CAP', agents: 1, tokens: 0, resultBytes: 0, logsDropped: 0 }));
    const run = model.node('wf.r1')!;
    assert.equal(run.status, 'failed');
    assert.equal(run.workflow!.code, 'AGENT_CAP');
  });

  it('re-sends an agent when it is done and every agent when the run ends (their disposal has no event of its own)', () => {
    start(3);
    assert.deepEqual(feed(wf('workflow/agent', 'r1', { index: 0, childId: 'root.c0', status: 'done', stopReason: 'completed' })), ['wf.r1', 'root.c0']);
    // Cancelled: the two still running were cancelled and disposed before the end was written.
    assert.deepEqual(feed(wf('workflow/end', 'r1', { status: 'cancelled', code: 'CANCELLED', agents: 3, tokens: 0, resultBytes: 0, logsDropped: 0 })), [
      'wf.r1',
      'root.c0',
      'root.c1',
      'root.c2',
    ]);
  });

  it('survives a reload: the run node comes back from the summaries alone (no log read), its agents under it', () => {
    start(2);
    feed(wf('workflow/end', 'r1', { status: 'completed', agents: 2, tokens: 0, resultBytes: 0, logsDropped: 0 }));
    const child = (i: number): SessionEvent[] => [
      { seq: 0, at: AT, type: 'subagent/descriptor', provider: 'spawn', mode: 'one-shot', label: `c${i}`, workflow: { runId: 'r1', index: i } } as SessionEvent,
    ];
    const again = new TreeModel(() => undefined);
    again.addHeader(header('root'));
    const reloaded = again.load('root', summarize(header('root'), log));
    assert.deepEqual(reloaded, ['wf.r1']);
    for (const i of [0, 1]) {
      again.addHeader(header(`root.c${i}`, 'root'));
      assert.deepEqual(again.load(`root.c${i}`, summarize(header(`root.c${i}`, 'root'), child(i))), [`root.c${i}`], 'the agent is re-hung under its run');
    }
    const run = again.node('wf.r1')!;
    assert.deepEqual(
      [run.parentId, run.status, run.workflow!.phases, run.workflow!.logs, run.workflow!.agents],
      ['root', 'settled', ['scan'], ['found files'], 2],
    );
    assert.equal(again.node('root.c1')!.parentId, 'wf.r1');
  });

  // Issue 21.6: the row reads how its agents ended, from the events ("3 done, 1 cancelled").
  it('counts its agents by outcome: done ones by stop reason, the ones its end cancelled as cancelled', () => {
    start(4);
    for (const i of [0, 1, 2]) feed(wf('workflow/agent', 'r1', { index: i, childId: `root.c${i}`, status: 'done', stopReason: 'completed' }));
    assert.deepEqual(model.node('wf.r1')!.workflow!.ended, { done: 3 });
    feed(wf('workflow/end', 'r1', { status: 'cancelled', code: 'CANCELLED', agents: 4, tokens: 0, resultBytes: 0, logsDropped: 0 }));
    const run = model.node('wf.r1')!.workflow!;
    assert.deepEqual([run.ended, run.running], [{ done: 3, cancelled: 1 }, 0]);
    // A repeated done (or one for an agent the run never started) is not counted twice.
    feed(wf('workflow/agent', 'r1', { index: 0, childId: 'root.c0', status: 'done', stopReason: 'completed' }));
    assert.deepEqual(model.node('wf.r1')!.workflow!.ended, { done: 3, cancelled: 1 });
  });

  it('a run cut by a crash counts the agents it still had running as cancelled', () => {
    start(2);
    feed(wf('workflow/agent', 'r1', { index: 0, childId: 'root.c0', status: 'done', stopReason: 'error' }));
    running = false;
    const run = model.node('wf.r1')!.workflow!;
    assert.deepEqual([run.status, run.ended, run.running], ['interrupted', { failed: 1, cancelled: 1 }, 0]);
  });

  it("shows its agents' spend together as its Σ, and is re-sent when an agent spends", () => {
    start(2);
    assert.equal(model.node('wf.r1')!.subtree?.tokens ?? 0, 0, 'nothing spent yet');
    const spend = (id: string, prompt: number, completion: number): string[] => {
      const e = {
        seq: seq++,
        at: AT,
        type: 'assistant/message',
        text: 'ok',
        model: 'm',
        usage: { promptTokens: prompt, completionTokens: completion },
      } as unknown as SessionEvent;
      model.apply(id, e);
      return model.spendMoved(id, e);
    };
    assert.ok(spend('root.c0', 100, 10).includes('wf.r1'), "an agent's spending moves its run's Σ");
    spend('root.c1', 200, 20);
    assert.equal(model.node('wf.r1')!.subtree?.tokens, 330);
    assert.equal(model.node('root')!.subtree?.tokens, 330, 'the parent’s subtree holds the same agents');
  });

  it('stays readable with 1,000 agents: the parent’s own level holds one node, the run holds the thousand', () => {
    start(1000);
    const nodes = model.nodes();
    assert.equal(nodes.filter((n) => n.parentId === 'root').length, 1);
    assert.equal(nodes.filter((n) => n.parentId === 'wf.r1').length, 1000);
    assert.equal(model.node('wf.r1')!.workflow!.agents, 1000);
  });
});
