import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ContainerTransport } from '../../../src/core/placement/container';
import { placementRow } from '../../../src/core/placement/row';
import { arborImage, ENGINE, engineMissing, RUN_ARGS } from '../../support/container-image';
import { type SubagentWorld, subagentWorld } from '../subagent/helpers';
import { makeRepo } from '../worktree/fixture';

// A container node whose process ignores every stop (a broken or hostile image: PID 1 has no
// default SIGTERM action) and keeps writing its folder, through the real engine (decision 0071):
// the world of the container-stop and container-left specs.

const VERSION = (JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', '..', '..', 'package.json'), 'utf8')) as { version: string }).version;

export interface DeafContainers {
  readonly world: SubagentWorld;
  /** This spec's folder (under /var/tmp). */
  readonly base: () => string;
  /** This spec's running containers (by their mounts): their names. */
  running(): string[];
  /** A workspace in a fresh base whose placement `pod` runs the deaf node with `engine`; its harness set up. */
  setUp(prefix: string, engine?: string): Promise<{ ws: string }>;
}

/** Per spec: a fresh folder, its containers removed after it; the image built once. */
export function deafContainers(): DeafContainers {
  const world = subagentWorld({}, { gates: false, perTest: true });
  let base = '';
  let image = '';
  before(function () {
    this.timeout(600_000);
    const missing = engineMissing();
    if (missing) throw new Error(`the container placement needs a real engine: ${missing}`);
    image = arborImage();
  });
  const listed = (all: boolean) =>
    execFileSync(ENGINE, ['ps', ...(all ? ['--all'] : []), '--format', '{{.Names}} {{.Mounts}}'], { encoding: 'utf8' })
      .split('\n')
      .filter((l) => base && l.includes(base))
      .map((l) => l.split(' ')[0]!);
  const running = () => listed(false);
  afterEach(() => {
    // (A failed run leaves its container: this spec's own, by its mounts.)
    for (const name of listed(true)) execFileSync(ENGINE, ['rm', '--force', '--time', '0', name], { stdio: 'ignore' });
    if (base) fs.rmSync(base, { recursive: true, force: true });
  });
  return {
    world,
    base: () => base,
    running,
    async setUp(prefix, engine = ENGINE) {
      base = fs.realpathSync(fs.mkdtempSync(path.join('/var/tmp', prefix)));
      const ws = makeRepo(base);
      // The node's "arbor" is `sh` running this file of the workspace: it ignores every stop signal and keeps writing.
      fs.writeFileSync(path.join(ws, 'acp'), 'trap "" TERM INT HUP\nwhile :; do date >> still-working.txt; sleep 0.2; done\n');
      const t = new ContainerTransport(
        { name: 'pod', kind: 'container', engine, image, runArgs: RUN_ARGS, arbor: 'sh' },
        { version: VERSION, workDir: path.join(base, 'placed') },
      );
      // (Its check would ask `sh --version`: the image is known to be there, the rest is real.)
      t.check = async () => ({ name: 'pod', kind: 'container', where: image });
      await world.setup({ workspace: [ws], storeDir: path.join(ws, '.arbor', 'store'), rows: [placementRow([t])] });
      return { ws };
    },
  };
}
