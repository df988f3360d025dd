import assert from 'node:assert/strict';
import type * as acp from '@agentclientprotocol/sdk/unstable';
import { Feed } from '../../src/acp/feed';
import { SessionTable } from '../../src/acp/sessions';
import type { Update } from '../../src/acp/updates';
import { harnessPerTest } from '../support/harness';

// Issue 22: a goal and its arming reach `arbor acp` as they reach the panel — on the one change
// stream, arming included (no event records it) — as `session_info_update` `_meta.arbor.goal`.

describe('acp: a root session’s goal and its arming reach the client', () => {
  const w = harnessPerTest({ goalMaxRounds: 1 });

  it('set arms it, the round blocks it at its limit (disarmed), a clear is said too', async () => {
    const root = await w.t.h.createSession();
    const table = new SessionTable();
    table.add({ id: root.id, harness: w.t.h, root: w.t.workspace, owner: root.id });
    const goals: ({ phase: string; armed: boolean } | null)[] = [];
    const feed = new Feed(
      w.t.h,
      w.t.workspace,
      table,
      async (to: string, u: Update) => {
        const up = u as acp.SessionUpdate;
        if (to === root.id && up.sessionUpdate === 'session_info_update')
          goals.push((up._meta as { arbor: { goal: { phase: string; armed: boolean } | null } }).arbor.goal);
      },
      true,
      (err) => assert.fail(String(err)),
    );
    try {
      w.server.enqueue({ text: 'working on it' });
      await w.t.h.goals.set(root.id, 'make the tests pass', 1);
      await w.t.h.settle();
      await feed.drain();
      assert.deepEqual(goals[0] && { phase: goals[0].phase, armed: goals[0].armed }, { phase: 'active', armed: true }, 'set: active and armed');
      const blocked = goals.at(-1)!;
      assert.equal(blocked.phase, 'blocked', 'one round, then blocked at the limit');
      assert.equal(blocked.armed, false);
      await w.t.h.goals.clear(root.id);
      await feed.drain();
      assert.equal(goals.at(-1), null, 'cleared');
      for (let i = 1; i < goals.length; i++) assert.notDeepEqual(goals[i], goals[i - 1], 'only changes are sent');
    } finally {
      feed.dispose();
    }
  });
});
