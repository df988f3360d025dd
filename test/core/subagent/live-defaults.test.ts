import assert from 'node:assert/strict';
import { SubagentDepthError } from '../../../src/core/subagent/types';
import { delivered, subagentWorld, waitFor } from './helpers';

// Issue 21.4: the delegation limits are settings (arbor.subagents.maxDepth, releaseDelayMs) the
// host hands over with `setDefaults` when they change; the next child uses them, nothing reopens.
describe('subagent: maxDepth and releaseDelayMs changed live (setDefaults) reach the next child', () => {
  const w = subagentWorld();

  it('maxDepth: a lower limit refuses the next start, a higher one allows it again', async () => {
    w.t.h.setDefaults({ maxDepth: 0 });
    await assert.rejects(w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: '[[c]] x' }), (err: unknown) => {
      assert.ok(err instanceof SubagentDepthError, String(err));
      assert.deepEqual([err.depth, err.maxDepth], [1, 0]);
      return true;
    });
    assert.equal(w.t.h.store.list().length, 1, 'nothing was created');
    w.t.h.setDefaults({ maxDepth: 1 });
    w.script.on('c', { text: 'c done' });
    const { childId } = await w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: '[[c]] allowed now' });
    assert.equal(w.t.h.store.header(childId)?.delegationDepth, 1);
    await w.t.h.settle();
  });

  it('releaseDelayMs: the next settled child stays resident for the new delay', async () => {
    // The world's delay is 5 ms: a first child is released at once after it settles.
    w.script.on('c1', { text: 'c1 done' });
    w.script.on('root', { text: 'noted' });
    const first = await w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: '[[c1]] task' });
    await w.t.h.settle();
    assert.equal(w.t.h.resident(first.childId), undefined, 'released after 5 ms');
    w.t.h.setDefaults({ releaseDelayMs: 60_000 });
    w.script.on('c2', { text: 'c2 done' });
    const second = await w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: '[[c2]] task' });
    // Its turn ends; it is released (and its parent told) only after the new delay.
    await waitFor(() => w.t.h.resident(second.childId)?.isSettled === true, 'the second child to settle');
    // Forty times the old delay later, it is still there (the harness's close releases it).
    await new Promise((r) => setTimeout(r, 200));
    assert.ok(w.t.h.resident(second.childId), 'still resident under the new delay');
    assert.equal(delivered(w.root.session.events, 'subagent-settled', second.childId).length, 0, 'no notice before its release');
  });
});
