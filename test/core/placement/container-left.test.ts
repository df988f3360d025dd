// A container the engine cannot remove (decision 0071, amended in session 53): its process ignored
// the stop and `rm --force` failed. Something of the node may still run and write its folder, so
// the turn says so — which containers, and the command that removes them — and nothing is
// collected; the next turn of the node removes what is left before it starts another beside it.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ContainerTransport } from '../../../src/core/placement/container';
import { placementRow } from '../../../src/core/placement/row';
import { arborImage, ENGINE, engineMissing, RUN_ARGS } from '../../support/container-image';
import { ofType, subagentWorld, waitFor } from '../subagent/helpers';
import { makeRepo } from '../worktree/fixture';

const VERSION = (JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', '..', '..', 'package.json'), 'utf8')) as { version: string }).version;

describe('placement: a container the engine cannot remove', function () {
  this.timeout(300_000);
  const world = subagentWorld({}, { gates: false, perTest: true });
  let base: string;
  let image: string;
  before(function () {
    this.timeout(600_000);
    const missing = engineMissing();
    if (missing) throw new Error(`the container placement needs a real engine: ${missing}`);
    image = arborImage();
  });
  /** This test's running containers (by their mounts): their names. */
  const running = () =>
    execFileSync(ENGINE, ['ps', '--format', '{{.Names}} {{.Mounts}}'], { encoding: 'utf8' })
      .split('\n')
      .filter((l) => l.includes(base))
      .map((l) => l.split(' ')[0]!);
  afterEach(() => {
    for (const name of running()) execFileSync(ENGINE, ['rm', '--force', '--time', '0', name], { stdio: 'ignore' });
    fs.rmSync(base, { recursive: true, force: true });
  });

  it('the turn says which container is left and how to remove it, collects nothing, and the next turn removes it first', async () => {
    base = fs.realpathSync(fs.mkdtempSync('/var/tmp/arbor-ct-left-'));
    const ws = makeRepo(base);
    // The node's "arbor" is `sh` running this file of the workspace: it ignores every stop signal and keeps writing.
    fs.writeFileSync(path.join(ws, 'acp'), 'trap "" TERM INT HUP\nwhile :; do date >> still-working.txt; sleep 0.2; done\n');
    // The engine as the user's: podman, except that `rm` fails while the mark is there (a runtime that cannot stop it).
    const mark = path.join(base, 'rm-fails');
    const engine = path.join(base, 'engine', 'podman-flaky');
    fs.mkdirSync(path.dirname(engine));
    fs.writeFileSync(
      engine,
      `#!/bin/sh\nif [ "$1" = rm ] && [ -e '${mark}' ]; then echo "Error: cannot stop the container: the runtime did not answer" >&2; exit 125; fi\nexec ${ENGINE} "$@"\n`,
      { mode: 0o755 },
    );
    const t = new ContainerTransport(
      { name: 'pod', kind: 'container', engine, image, runArgs: RUN_ARGS, arbor: 'sh' },
      { version: VERSION, workDir: path.join(base, 'placed') },
    );
    t.check = async () => ({ name: 'pod', kind: 'container', where: image });
    await world.setup({ workspace: [ws], storeDir: path.join(ws, '.arbor', 'store'), rows: [placementRow([t])] });
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
