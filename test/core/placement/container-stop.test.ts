// Stop of a container-placed node (decision 0071): the engine's client is the process Arbor
// stops, and a container whose process ignores the stop (a broken or hostile image: PID 1 has no
// default SIGTERM action) outlives its client. The stop must end the container too, before its
// changes are collected: nothing of the node keeps running on this machine, nor writing its folder.
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

describe('placement: Stop of a container node whose process ignores the stop', function () {
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
  /** This test's containers (by their mounts): running ones, or with `all` any still listed. */
  const running = (all = false) =>
    execFileSync(ENGINE, ['ps', ...(all ? ['--all'] : []), '--format', '{{.Names}} {{.Mounts}}'], { encoding: 'utf8' })
      .split('\n')
      .filter((l) => l.includes(base));
  afterEach(() => {
    // (A failed run leaves its container: this test's own, by name.)
    for (const l of running(true)) execFileSync(ENGINE, ['rm', '--force', '--time', '0', l.split(' ')[0]!], { stdio: 'ignore' });
    fs.rmSync(base, { recursive: true, force: true });
  });

  it('stopping the subtree ends the container too: nothing of it runs after the turn ends, nothing writes its folder', async () => {
    base = fs.realpathSync(fs.mkdtempSync('/var/tmp/arbor-ct-stop-'));
    const ws = makeRepo(base);
    // The node's "arbor" is `sh` running this file of the workspace: it ignores every stop signal and keeps writing.
    fs.writeFileSync(path.join(ws, 'acp'), 'trap "" TERM INT HUP\nwhile :; do date >> still-working.txt; sleep 0.2; done\n');
    const t = new ContainerTransport(
      { name: 'pod', kind: 'container', engine: ENGINE, image, runArgs: RUN_ARGS, arbor: 'sh' },
      { version: VERSION, workDir: path.join(base, 'placed') },
    );
    // (Its check would ask `sh --version`: the image is known to be there, the rest is real.)
    t.check = async () => ({ name: 'pod', kind: 'container', where: image });
    await world.setup({ workspace: [ws], storeDir: path.join(ws, '.arbor', 'store'), rows: [placementRow([t])] });
    const started = await world.t.h.subagents.startContinuable(world.root, 'spawn', { prompt: 'wait', placement: 'pod' });
    const nodes = path.join(base, 'placed', 'nodes');
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
