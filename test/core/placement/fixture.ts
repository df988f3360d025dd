import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { placementRow } from '../../../src/core/placement/row';
import type { SessionEvent } from '../../../src/core/session/events';
import type { TestHarness } from '../../support/harness';
import { type LocalAcpOptions, type LocalAcpTransport, localAcpTransport } from '../../support/local-acp-transport';
import { eventsOf, subagentWorld, type WorldParts, withWorldParts } from '../subagent/helpers';
import { makeRepo } from '../worktree/fixture';

// The placed node's world (decision 0074): a real git repository as the workspace, a harness on
// it with the placements row over two real transports ("far" and "near": this repository's own
// `arbor acp` in a worktree copy under a folder of its own), and the scripted model server both
// sides talk to (the child's requests carry its `[[tag]]`, as a local child's do).

/** A placed spec's world: the parts of its subagent world, its repository and the two transports. */
export interface PlacedWorld extends WorldParts {
  readonly ws: string;
  readonly far: LocalAcpTransport;
  readonly near: LocalAcpTransport;
}

/** `far` and `near` take these options on top of their own (the workspace over the link: `{ linkSync: true }`). */
export function placedWorld(own: { far?: Partial<LocalAcpOptions>; near?: Partial<LocalAcpOptions> } = {}): PlacedWorld {
  const world = subagentWorld({}, { gates: false, perTest: true });
  let base: string;
  let ws: string;
  let far: LocalAcpTransport;
  let near: LocalAcpTransport;
  beforeEach(async () => {
    base = fs.realpathSync(fs.mkdtempSync('/var/tmp/arbor-placed-test-'));
    ws = makeRepo(base);
    const url = world.server.baseURL;
    far = localAcpTransport({ name: 'far', remoteDir: path.join(base, 'far'), baseUrl: url, model: 'test-model', ...own.far });
    near = localAcpTransport({ name: 'near', remoteDir: path.join(base, 'near'), baseUrl: url, model: 'test-model', ...own.near });
    await world.setup({ workspace: [ws], storeDir: path.join(ws, '.arbor', 'store'), rows: [placementRow([far, near])] });
  });
  afterEach(() => fs.rmSync(base, { recursive: true, force: true }));
  return withWorldParts(world, {
    get ws() {
      return ws;
    },
    get far() {
      return far;
    },
    get near() {
      return near;
    },
  });
}

/** Poll a session's log until `pred` holds (the store's copy: a placed child is mirrored into it as it goes). */
export async function untilLog(w: PlacedWorld, id: string, pred: (evs: SessionEvent[]) => boolean, what: string, ms = 60_000): Promise<SessionEvent[]> {
  const end = Date.now() + ms;
  for (;;) {
    const evs = await eventsOf(w.t.h, id);
    if (pred(evs)) return evs;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what} (${id}: ${evs.map((e) => e.type).join(', ')})`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The log holds `n` turn ends (the mirror of a placed child's turns). */
export const ended =
  (n: number) =>
  (evs: SessionEvent[]): boolean =>
    evs.filter((e) => e.type === 'turn/end').length >= n;

type SpawnInput = Parameters<TestHarness['h']['subagents']['start']>[2];

/**
 * Spawns a child of the root with `input`, waits for its one turn to complete (its result says
 * `completed`, else the assertion names its error), disposes it, and returns its id with the
 * local log once that turn's end is mirrored into it.
 */
export async function runOnce(w: PlacedWorld, input: SpawnInput): Promise<{ id: string; events: SessionEvent[] }> {
  const run = await w.t.h.subagents.start(w.root, 'spawn', input);
  const r = await run.result;
  await run.dispose();
  assert.equal(r.stopReason, 'completed', r.error);
  return { id: run.id, events: await untilLog(w, run.id, ended(1), 'the turn end') };
}
