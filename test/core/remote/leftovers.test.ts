import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { HarnessConfig } from '../../../src/core/harness';
import { groupHasLiveMember } from '../../../src/core/process/proc-stat';
import { pidNamespace } from '../../../src/core/remote/pid-namespace';
import type { SessionEvent } from '../../../src/core/session/events';
import { makeHarness, type TestHarness } from '../../support/harness';
import { goneWithin, killLeftovers, type Leaver, leaver, living, sleepersRunning } from '../../support/leftovers';
import { ModelServer } from '../../support/model-server';

const remoteOf = (events: readonly SessionEvent[]) => events.find((e): e is Extract<SessionEvent, { type: 'subagent/remote' }> => e.type === 'subagent/remote');

// Issue 20 (finding 7, 6b): a remote program that ignores SIGTERM and leaves a sleeper in its
// group and one in a session of its own (setsid). A Stop must leave none of them running.
describe('remote: a Stop leaves no process of the program behind', function () {
  this.timeout(60_000);
  let server: ModelServer;
  let t: TestHarness | undefined;
  let dir: string;
  let l: Leaver;
  before(async () => (server = await ModelServer.start()));
  after(() => server.stop());
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arbor-leftovers-'));
    l = leaver(dir);
  });
  afterEach(async () => {
    killLeftovers(l.token);
    await t?.cleanup();
    t = undefined;
    delete process.env.ARBOR_BWRAP;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Starts the leaver as `provider`, waits for its sleepers, stops it; returns the child's recorded identity. */
  async function startAndStop(provider: string, remote: HarnessConfig['remote']) {
    t = await makeHarness(server, { remote });
    const root = await t.h.createSession();
    const run = await t.h.subagents.start(root, provider, { prompt: 'go' });
    await sleepersRunning(l);
    assert.ok(living(l.token).length >= 3, 'the program and both sleepers run');
    let id = remoteOf(t.h.resident(run.id)?.session.events ?? []);
    for (let i = 0; i < 500 && !id; i++) {
      await new Promise((r) => setTimeout(r, 10));
      id = remoteOf(t.h.resident(run.id)?.session.events ?? []);
    }
    assert.ok(id?.pgid, 'subagent/remote recorded the group');
    await t.h.interruptSubtree(run.id);
    const r = await run.result;
    await run.dispose();
    assert.equal(r.stopReason, 'interrupted');
    return id;
  }

  for (const [provider, remote] of [
    ['codex', () => ({ codex: l.codex })],
    ['acp:leaver', () => ({ acp: [l.acp] })],
  ] as const)
    it(`${provider} in its own PID namespace: Stop ends the program (deaf to SIGTERM), its same-group sleeper and its setsid sleeper`, async () => {
      const ns = await pidNamespace();
      if (!ns.available) throw new Error(`This test needs bubblewrap, and ${ns.reason}. Run "npm run setup:e2e" (it installs bubblewrap).`);
      const id = await startAndStop(provider, remote());
      assert.equal(typeof id.startTime, 'number', 'the leader start time is recorded');
      assert.equal(id.bootId, fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim());
      assert.deepEqual(await goneWithin(l.token, 2000), [], 'nothing with its token runs');
      assert.equal(groupHasLiveMember(id.pgid!), false, 'its group is gone');
    });

  it('where bwrap cannot start (the fallback): Stop still ends the program and its whole group; only a setsid helper escapes', async () => {
    process.env.ARBOR_BWRAP = path.join(dir, 'no-bwrap');
    const id = await startAndStop('codex', { codex: l.codex });
    assert.equal(groupHasLiveMember(id.pgid!), false, 'its group is gone');
    assert.deepEqual(await goneWithin(`${l.token}1`, 2000), [], 'the same-group sleeper is gone');
    assert.equal(living(l.token).length, 1, 'the program is gone; what is left is the one helper that left the group');
    assert.equal(living(`${l.token}2`).length, 1, 'the documented gap of the fallback: a setsid helper (killed by the test)');
  });
});
