// "Run a Task on a Placement…" from the tree (decision 0074): the webview's `placement/start` is
// validated like every message, and the host's start makes a continuable placed child of that
// node, which runs there, comes back, and takes a follow-up; an unknown placement is refused.
import assert from 'node:assert/strict';
import { placementNames, startPlaced } from '../../src/extension/handlers/placement-requests';
import { isWebviewToHost } from '../../src/extension/validate-message';
import { placedWorld, untilLog } from '../core/placement/fixture';
import { ofType, stopReasons, systemOf } from '../core/subagent/helpers';

describe('extension: a task on a placement from the tree', function () {
  this.timeout(180_000);
  const w = placedWorld();

  it('validates placement/start: a session id, a placement name, a non-empty prompt', () => {
    const ok = { type: 'placement/start', id: 'r1', sessionId: 'abc', placement: 'far', prompt: 'do it' };
    assert.equal(isWebviewToHost(ok), true);
    assert.equal(isWebviewToHost({ ...ok, placement: '../etc' }), false);
    assert.equal(isWebviewToHost({ ...ok, prompt: '   ' }), false);
    assert.equal(isWebviewToHost({ ...ok, sessionId: 'a b' }), false);
  });

  it('lists the configured placements and starts a continuable placed child of the node that takes a follow-up', async () => {
    assert.deepEqual(placementNames(w.t.h), ['far', 'near']);
    w.script.on('u', { text: 'first done' }, { text: 'second done' });
    const id = await startPlaced(w.t.h, w.root.id, 'near', '[[u]] check the build');
    assert.equal(w.t.h.store.header(id)?.parentSession, w.root.id);
    await untilLog(w, id, (e) => ofType(e, 'turn/end').length === 1, 'the first turn');
    await w.t.h.subagents.followup(null, id, '[[u]] and again');
    const evs = await untilLog(w, id, (e) => ofType(e, 'turn/end').length === 2, 'the follow-up');
    assert.deepEqual(stopReasons(evs), ['completed', 'completed']);
    assert.equal(ofType(evs, 'subagent/descriptor')[0].mode, 'continuable');
    assert.equal(ofType(evs, 'subagent/descriptor')[0].placement?.name, 'near');
    await assert.rejects(startPlaced(w.t.h, w.root.id, 'mars', 'x'), /No placement named "mars". Configured placements: far, near\./);
  });

  it('a task under a resting subagent wakes it as itself: the placed child reports to it, and it answers with its own role', async () => {
    const persona = 'You are QUINCE-WATCHER, who only ever reports quinces.';
    w.script.on('q', { text: 'watching' });
    const { childId } = await w.t.h.subagents.startContinuable(w.root, 'spawn', { prompt: '[[q]] watch', label: 'watcher', persona: { text: persona } });
    await w.t.h.settle();
    assert.equal(w.t.h.resident(childId), undefined, 'released after settling');
    w.script.on('u', { text: 'far task done' });
    w.script.on('q', { text: 'heard from below' });
    const placed = await startPlaced(w.t.h, childId, 'near', 'look there\n[[u]]'); // labelled by its first line: the notice carries no tag
    assert.equal(w.t.h.store.header(placed)?.parentSession, childId);
    // Its settlement notice wakes the watcher: a turn of its own composition, never a root's.
    await untilLog(w, childId, (e) => ofType(e, 'turn/end').length === 2, "the watcher's turn on the notice");
    const [first, woken] = w.script.bodies('q');
    assert.ok(systemOf(woken).includes(persona), 'its role is its own');
    assert.equal(systemOf(woken), systemOf(first));
  });
});
