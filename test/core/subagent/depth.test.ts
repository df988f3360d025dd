import assert from 'node:assert/strict';
import type { Agent } from '../../../src/core/agent/agent';
import { Harness } from '../../../src/core/harness';
import { SubagentDepthError, type SubagentRun } from '../../../src/core/subagent/types';
import { Gates, hold, ofType, subagentWorld } from './helpers';

describe('subagent: delegation depth is absolute, persisted and limited', () => {
  const runs: SubagentRun[] = [];
  const disposeRuns = async () => {
    for (const r of runs.splice(0)) await r.dispose().catch(() => undefined);
  };
  const w = subagentWorld({}, { perTest: true, beforeCleanup: disposeRuns });

  async function oneShot(parent: Agent, tag: string): Promise<SubagentRun> {
    const run = await w.t.h.subagents.start(parent, 'spawn', { prompt: `[[${tag}]] work` });
    runs.push(run);
    await run.result;
    return run;
  }

  function assertDepthError(depth: number, max: number) {
    return (err: unknown) => {
      assert.ok(err instanceof SubagentDepthError, String(err));
      assert.equal(err.code, 'DEPTH_EXCEEDED');
      assert.equal(err.depth, depth);
      assert.equal(err.maxDepth, max);
      return true;
    };
  }

  it('a child is its parent + 1, persisted in its header, through the model tools too', async () => {
    await w.setup();
    w.script.on('root', { toolCalls: [{ name: 'subagent', arguments: { prompt: '[[c]] delegate further' } }] }, { text: 'root done' });
    w.script.on('c', { toolCalls: [{ name: 'subagent', arguments: { prompt: '[[g]] leaf work' } }] }, { text: 'c done' });
    await w.root.accept('[[root]] go');
    await w.t.h.settle();
    const [child] = w.t.h.store.children(w.root.id);
    const [grand] = w.t.h.store.children(child.id);
    assert.equal(w.t.h.store.header(w.root.id)?.delegationDepth, 0);
    assert.equal(child.delegationDepth, 1);
    assert.equal(grand.delegationDepth, 2);
    assert.equal(grand.parentSession, child.id);
    const notice = ofType(await w.t.h.store.readEvents(grand.id), 'user/message')[0];
    assert.match(notice.text, /depth 2/);
  });

  it('default maxDepth 5: a sixth level is refused with SubagentDepthError and nothing is created', async () => {
    await w.setup();
    const chain: SubagentRun[] = [];
    let parent = w.root;
    for (let i = 1; i <= 5; i++) {
      const run = await oneShot(parent, `c${i}`);
      chain.push(run);
      parent = run.localAgent;
    }
    assert.deepEqual(
      chain.map((r) => w.t.h.store.header(r.id)?.delegationDepth),
      [1, 2, 3, 4, 5],
    );
    const before = w.t.h.store.list().length;
    await assert.rejects(w.t.h.subagents.start(parent, 'spawn', { prompt: 'x' }), assertDepthError(6, 5));
    await assert.rejects(w.t.h.subagents.startContinuable(parent, 'fork', { prompt: 'x' }), assertDepthError(6, 5));
    assert.equal(w.t.h.store.list().length, before);
  });

  it('the setting still caps the default (3: a fourth level is refused)', async () => {
    await w.setup({ maxDepth: 3 });
    const c1 = await oneShot(w.root, 'c1');
    const c2 = await oneShot(c1.localAgent, 'c2');
    const c3 = await oneShot(c2.localAgent, 'c3');
    await assert.rejects(w.t.h.subagents.start(c3.localAgent, 'spawn', { prompt: 'x' }), assertDepthError(4, 3));
  });

  it('the deployment maxDepth applies (1: no grandchildren; 0: no subagents)', async () => {
    await w.setup({ maxDepth: 1 });
    const c1 = await oneShot(w.root, 'c1');
    await assert.rejects(w.t.h.subagents.start(c1.localAgent, 'spawn', { prompt: 'x' }), assertDepthError(2, 1));
    await w.t.cleanup();
    await w.setup({ maxDepth: 0 });
    await assert.rejects(w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: 'x' }), assertDepthError(1, 0));
    assert.equal(w.t.h.store.list().length, 1);
  });

  it('a request maxDepth narrows the limit but never widens the deployment one', async () => {
    await w.setup({ maxDepth: 2 });
    const c1 = await oneShot(w.root, 'c1');
    await assert.rejects(w.t.h.subagents.start(c1.localAgent, 'spawn', { prompt: 'x', maxDepth: 1 }), assertDepthError(2, 1));
    const c2 = await oneShot(c1.localAgent, 'c2');
    await assert.rejects(w.t.h.subagents.start(c2.localAgent, 'spawn', { prompt: 'x', maxDepth: 10 }), assertDepthError(3, 2));
    await assert.rejects(w.t.h.subagents.start(w.root, 'spawn', { prompt: 'x', maxDepth: 0 }), assertDepthError(1, 0));
  });

  it('depth survives a cold resume in a new harness: a resumed depth-3 child cannot delegate under maxDepth 3', async () => {
    await w.setup({ maxDepth: 3 });
    const c1 = await oneShot(w.root, 'c1');
    const c2 = await oneShot(c1.localAgent, 'c2');
    const { childId: c3 } = await w.t.h.subagents.startContinuable(c2.localAgent, 'spawn', { prompt: '[[c3]] first' });
    await w.t.h.settle();
    assert.equal(w.t.h.resident(c3), undefined);
    for (const r of runs.splice(0).reverse()) await r.dispose();
    await w.t.h.close();

    // A fresh process-local runtime: nothing remembers depths but the logs.
    const h2 = await Harness.open({ ...w.t.h.config });
    const g2 = new Gates().install(h2);
    try {
      w.script.on('c3', { toolCalls: [{ name: 'subagent', arguments: { prompt: 'deeper' } }] }, { toolCalls: [hold('c3')] }, { text: 'could not delegate' });
      await h2.send(c3, '[[c3]] delegate something');
      await g2.whenHeld('c3');
      const agent = h2.resident(c3)!;
      const refusal = ofType(agent.session.events, 'tool/result').find((e) => e.name === 'subagent');
      assert.ok(refusal?.isError);
      assert.match(refusal.content, /DEPTH_EXCEEDED/);
      await assert.rejects(h2.subagents.start(agent, 'spawn', { prompt: 'x' }), assertDepthError(4, 3));
      assert.equal(h2.store.children(c3).length, 0);
      g2.release('c3');
      await h2.settle();
    } finally {
      g2.releaseAll();
      await h2.close();
    }
  });
});
