// Crash with worktrees open (decision 0060): a separate process with a worktree child mid-turn
// and a worktree no session owns is killed with -9; the next start lists both as orphans (with
// why, and what to do), `clean` removes them — the child's durably, as a `discarded` event.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { makeHarness } from '../../support/harness';
import { ofType, Script } from '../subagent/helpers';
import { crashWorldPerTest, gitIn, makeRepo } from './fixture';

describe('worktrees after a crash (kill -9 with worktrees open)', () => {
  const world = crashWorldPerTest('arbor-wt-crash-');

  async function crashHost(storeDir: string, ws: string, tag: string): Promise<string> {
    const host = spawn(process.execPath, [path.join(__dirname, '..', '..', 'support', 'crash-worktree-host.js'), storeDir, ws, world.server.baseURL, tag], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      return await new Promise<string>((resolve, reject) => {
        let out = '';
        host.stdout.on('data', (b: Buffer) => {
          out += b.toString();
          const m = /child (\S+)\n/.exec(out);
          if (m) resolve(m[1]);
        });
        host.once('exit', (code) => reject(new Error(`the crash host exited (${code}) before its child ran: ${out}`)));
      });
    } finally {
      const gone = new Promise((r) => (host.exitCode === null ? host.once('exit', r) : r(undefined)));
      host.kill('SIGKILL');
      await gone;
    }
  }

  it('the next start lists every worktree nothing live owns, and cleans them', async () => {
    const ws = makeRepo(world.base);
    const storeDir = path.join(ws, '.arbor', 'store');
    const script = new Script(world.server);
    script.on('stuck', { text: 'working on it for a long while', fault: { kind: 'stall', afterChunks: 1 } });
    const childId = await crashHost(storeDir, ws, 'stuck');
    const wtDir = path.join(ws, '.arbor', 'worktrees');
    assert.equal(fs.readdirSync(wtDir).length, 2, 'two worktree folders left behind');

    const t = await makeHarness(world.server, { workspace: [ws], storeDir });
    try {
      assert.ok(t.h.recovered.includes(childId), 'recovery closed the cut turn');
      const orphans = await t.h.worktrees.orphans();
      assert.deepEqual(
        orphans.map((o) => [o.id.endsWith('.ghost0') ? 'ghost' : o.id, o.reason]),
        // Sorted by id: the child's 6 hex characters sort before "ghost0".
        [
          [childId, 'interrupted'],
          ['ghost', 'no-node'],
        ],
      );
      for (const o of orphans) assert.ok(o.why.length > 20, 'each says why');
      const ghost = orphans.find((o) => o.reason === 'no-node')!;
      assert.match(ghost.branch ?? '', /^arbor\/ghost-/);
      for (const o of orphans) await t.h.worktrees.clean(o.id);
      assert.deepEqual(await t.h.worktrees.orphans(), []);
      assert.deepEqual(fs.readdirSync(wtDir), []);
      assert.equal(gitIn(ws, 'worktree', 'list').trim().split('\n').length, 1, 'git knows only the main checkout');
      assert.equal(gitIn(ws, 'branch', '--list', 'arbor/*'), '');
      const states = ofType(await t.h.store.readEvents(childId), 'worktree').map((e) => e.state);
      assert.deepEqual(states, ['open', 'discarded']);
    } finally {
      await t.cleanup();
    }
  });
});
