// A container the engine cannot remove (decision 0071, amended in session 53): its process ignored
// the stop and `rm --force` failed. Something of the node may still run and write its folder, so
// the turn says so — which containers, and the command that removes them — and nothing is
// collected; the next turn of the node removes what is left before it starts another beside it.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ENGINE } from '../../support/container-image';
import { ofType, waitFor } from '../subagent/helpers';
import { deafContainers } from './deaf-container';

describe('placement: a container the engine cannot remove', function () {
  this.timeout(300_000);
  const deaf = deafContainers();
  const { world, running } = deaf;
  // The engine as the user's: podman, except that `rm` fails while the mark is there (a runtime that cannot stop it).
  const engineDir = path.join('/var/tmp', `arbor-ct-engine-${process.pid}`);
  const engine = path.join(engineDir, 'podman-flaky');
  const mark = path.join(engineDir, 'rm-fails');
  after(() => fs.rmSync(engineDir, { recursive: true, force: true }));

  it('the turn says which container is left and how to remove it, collects nothing, and the next turn removes it first', async () => {
    fs.mkdirSync(engineDir, { recursive: true });
    fs.writeFileSync(
      engine,
      `#!/bin/sh\nif [ "$1" = rm ] && [ -e '${mark}' ]; then echo "Error: cannot stop the container: the runtime did not answer" >&2; exit 125; fi\nexec ${ENGINE} "$@"\n`,
      { mode: 0o755 },
    );
    const { ws } = await deaf.setUp('arbor-ct-left-', engine);
    const h = world.t.h;
    const started = await h.subagents.startContinuable(world.root, 'spawn', { prompt: 'wait', placement: 'pod' });
    await waitFor(() => running().length === 1, 'the container to start', 120_000);
    const [first] = running();
    const branch = () => execFileSync('git', ['for-each-ref', '--format=%(objectname)', 'refs/heads/arbor/', 'refs/arbor/'], { cwd: ws, encoding: 'utf8' });
    const refsBefore = branch();

    fs.writeFileSync(mark, '');
    await h.interruptSubtree(world.root.id);
    await waitFor(() => !h.subagents.isRunning(started.childId), 'the stopped turn to end', 60_000);
    const end = ofType((await h.store.inspect(started.childId)).events, 'turn/end')[0];
    assert.equal(end?.stopReason, 'interrupted');
    assert.match(end?.error ?? '', new RegExp(`CONTAINER_LEFT: .*could not remove the container .*${first}: Error: cannot stop the container`));
    assert.match(end?.error ?? '', new RegExp(`its changes were not collected\\. Remove it with \`${engine} rm --force ${first}\``));
    assert.deepEqual(running(), [first], 'the container is still there, and the turn said so');
    assert.equal(branch(), refsBefore, 'nothing was collected from a folder it may still write');

    // Removable again: the node's next turn removes what was left before a new container starts beside it.
    fs.rmSync(mark);
    await h.subagents.followup(world.root.id, started.childId, 'go on');
    await waitFor(() => running().length === 1 && running()[0] !== first, 'the next turn’s container', 120_000);
    assert.deepEqual(running().includes(first), false, 'the one left by the turn before is gone');
    await h.interruptSubtree(world.root.id);
    await waitFor(() => !h.subagents.isRunning(started.childId), 'the second turn to end', 60_000);
    const ends = ofType((await h.store.inspect(started.childId)).events, 'turn/end');
    assert.equal(ends.length, 2);
    assert.equal(ends[1]?.error, undefined, 'nothing left this time');
    assert.deepEqual(running(), []);
  });
});
