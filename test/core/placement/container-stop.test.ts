// Stop of a container-placed node (decision 0071): the engine's client is the process Arbor
// stops, and a container whose process ignores the stop (a broken or hostile image: PID 1 has no
// default SIGTERM action) outlives its client. The stop must end the container too, before its
// changes are collected: nothing of the node keeps running on this machine, nor writing its folder.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ofType, waitFor } from '../subagent/helpers';
import { deafContainers } from './deaf-container';

describe('placement: Stop of a container node whose process ignores the stop', function () {
  this.timeout(300_000);
  const deaf = deafContainers();
  const { world, running } = deaf;

  it('stopping the subtree ends the container too: nothing of it runs after the turn ends, nothing writes its folder', async () => {
    await deaf.setUp('arbor-ct-stop-');
    const started = await world.t.h.subagents.startContinuable(world.root, 'spawn', { prompt: 'wait', placement: 'pod' });
    const nodes = path.join(deaf.base(), 'placed', 'nodes');
    const log = () => {
      for (const n of fs.existsSync(nodes) ? fs.readdirSync(nodes) : []) {
        const f = path.join(nodes, n, 'still-working.txt');
        if (fs.existsSync(f)) return f;
      }
      return undefined;
    };
    await waitFor(() => !!log(), 'the container to start working', 120_000);
    assert.equal(running().length, 1, 'its container runs');
    const stopped = await world.t.h.interruptSubtree(world.root.id);
    assert.ok(stopped.includes(started.childId));
    await waitFor(() => !world.t.h.subagents.isRunning(started.childId), 'the stopped turn to end', 60_000);
    const evs = (await world.t.h.store.inspect(started.childId)).events;
    assert.equal(ofType(evs, 'turn/end')[0]?.stopReason, 'interrupted');
    assert.deepEqual(running(), [], 'no container of the node runs once its turn has ended');
    const size = fs.statSync(log()!).size;
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(fs.statSync(log()!).size, size, 'nothing writes the node folder any more');
  });
});
