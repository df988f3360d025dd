import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { scriptConfinement } from '../../../src/core/workflow/confine';
import { DEFAULT_ISOLATE, Isolate } from '../../../src/core/workflow/isolate';
import { runProcesses, SpareIsolates, type SpareKey } from '../../../src/core/workflow/spare';
import { workflowWorld } from './helpers';

// Decision 0096: after a run, one script process is started for the next; a run takes it only
// when it would have started the same process, and each process serves one run.
describe('workflow spare script process', () => {
  let key: SpareKey;
  before(async () => {
    const { confinement } = await scriptConfinement(undefined);
    // bubblewrap is installed by the project's setup (npm test), as the confinement suite requires.
    assert.equal(confinement.kind, 'bubblewrap');
    key = { limits: DEFAULT_ISOLATE, permission: true, confinement };
  });

  describe('the pool', () => {
    const pools: SpareIsolates[] = [];
    const pool = (idleMs?: number) => {
      const p = new SpareIsolates(idleMs);
      pools.push(p);
      return p;
    };
    /** Script processes a test took from a pool or made itself: ended after the checks below, whatever the test asserted. */
    const owned: Isolate[] = [];
    const own = <T extends Isolate | undefined>(iso: T): T => {
      if (iso) owned.push(iso);
      return iso;
    };
    afterEach(async () => {
      try {
        await Promise.all(pools.splice(0).map((p) => p.close()));
        // A spare ended by `take` (started otherwise) is gone once its exit is seen.
        const deadline = Date.now() + 10_000;
        while (Isolate.alive > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
        assert.equal(SpareIsolates.alive, 0);
        assert.equal(Isolate.alive, 0, 'no script process is left');
      } finally {
        // Only a failed test leaves one (each ends what it took): never past the test.
        for (const iso of owned.splice(0)) {
          iso.kill();
          await iso.ended;
        }
      }
    });

    it('a spare never keeps its host alive: a process that forgot to close its engine exits, and the spare goes with it', async () => {
      const mod = path.join(__dirname, '..', '..', '..', 'src', 'core', 'workflow', 'spare.js');
      const spares: number[] = [];
      for (const confinement of [key.confinement, { kind: 'none', reason: 'unconfined' } as const]) {
        // Once its spare is ready the host names every process below it (the spare: bubblewrap's and
        // the Node inside, or the fork), then has nothing left to do.
        const script = `
          const fs = require('fs');
          const { SpareIsolates } = require(${JSON.stringify(mod)});
          const { DEFAULT_ISOLATE } = require(${JSON.stringify(path.join(path.dirname(mod), 'isolate.js'))});
          const below = (pid) => fs.readFileSync('/proc/' + pid + '/task/' + pid + '/children', 'utf8').trim().split(/\\s+/).filter(Boolean).map(Number).flatMap((c) => [c, ...below(c)]);
          const p = new SpareIsolates();
          p.refill({ limits: DEFAULT_ISOLATE, permission: true, confinement: ${JSON.stringify(confinement)} });
          const wait = setTimeout(() => undefined, 15000); // only until the spare is ready: then nothing but the spare is left
          p.ready().then((ok) => { console.log(ok ? JSON.stringify(below(process.pid)) : 'failed'); clearTimeout(wait); });`;
        const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 20_000 });
        assert.equal(r.signal, null, `${confinement.kind}: the host did not exit on its own (killed at the timeout)`);
        const pids = JSON.parse(r.stdout.trim() || 'null') as number[] | null;
        assert.ok(Array.isArray(pids) && pids.length > 0, `${confinement.kind}: the spare was ready (${r.stdout.trim()} ${r.stderr})`);
        spares.push(...pids);
      }
      // The spares those hosts left: each went with its host (bubblewrap's --die-with-parent; a
      // Node child's IPC channel closing).
      const alive = (pid: number) => {
        try {
          return !fs.readFileSync(`/proc/${pid}/stat`, 'latin1').includes(') Z ') && fs.readFileSync(`/proc/${pid}/cmdline`, 'latin1').length > 0;
        } catch {
          return false;
        }
      };
      const left = () => spares.filter(alive).map((pid) => `${pid} ${fs.readFileSync(`/proc/${pid}/cmdline`, 'latin1').replace(/\0/g, ' ').slice(0, 200)}`);
      const deadline = Date.now() + 10_000;
      while (left().length > 0 && Date.now() < deadline) await new Promise((res) => setTimeout(res, 50));
      assert.deepEqual(left(), [], 'no script process outlived its host');
    });

    it('hands the spare to a run started the same, once, and keeps no second one', async () => {
      const p = pool();
      p.refill(key);
      p.refill(key);
      assert.equal(SpareIsolates.alive, 1, 'one spare at most');
      const iso = own(p.take(key));
      assert.ok(iso, 'the spare was taken');
      assert.equal(await iso.ready, true, `the spare started: ${iso.stderrTail}`);
      assert.equal(SpareIsolates.alive, 0);
      assert.equal(runProcesses(), 1, 'taken, it is a run’s');
      assert.equal(p.take(key), undefined, 'it serves one run only');
      iso.kill();
      await iso.ended;
    });

    it('ends a spare started otherwise (other limits, no permission flags) instead of handing it on', async () => {
      for (const other of [
        { ...key, limits: { heapMb: 128, rssMb: 512 } },
        { ...key, permission: false },
        { ...key, confinement: { kind: 'none', reason: 'r' } as const },
      ]) {
        const p = pool();
        p.refill(key);
        assert.equal(p.take(other), undefined, `a run started with ${JSON.stringify(other)} gets none`);
        assert.equal(SpareIsolates.alive, 0);
      }
    });

    it('ends a spare nobody takes within its idle time, and none after close', async () => {
      const p = pool(300);
      p.refill(key);
      const deadline = Date.now() + 10_000;
      while (SpareIsolates.alive > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      assert.equal(SpareIsolates.alive, 0, 'the idle spare was ended');
      while (Isolate.alive > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      assert.equal(Isolate.alive, 0, 'and its process is gone');
      await p.close();
      p.refill(key);
      assert.equal(SpareIsolates.alive, 0, 'a closed pool starts none');
    });

    it('forgets a spare whose process died, and hands out no dead one', async () => {
      const made: Isolate[] = [];
      const p = new SpareIsolates(undefined, (k) => {
        const iso = own(new Isolate(undefined, k.limits, k.permission, k.confinement));
        made.push(iso);
        return iso;
      });
      pools.push(p);
      p.refill(key);
      assert.equal(await made[0].ready, true, made[0].stderrTail);
      // Killed from outside while it waits, as the OOM killer or a user would.
      process.kill(-made[0].pid!, 'SIGKILL');
      await made[0].ended;
      assert.equal(SpareIsolates.alive, 0, 'the dead spare was forgotten');
      assert.equal(p.take(key), undefined, 'no dead process is handed to a run');
      p.refill(key);
      const next = p.take(key);
      assert.ok(next && next === made[1], 'a new one was started');
      next.kill();
      await next.ended;
    });

    it('starts none again after one could not start', async () => {
      const broken: SpareKey = { ...key, confinement: { kind: 'bubblewrap', bwrap: '/nonexistent/bwrap' } };
      const p = pool();
      p.refill(broken);
      const deadline = Date.now() + 10_000;
      while (SpareIsolates.alive > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      assert.equal(SpareIsolates.alive, 0, 'the spare that failed was forgotten');
      p.refill(key);
      assert.equal(SpareIsolates.alive, 0, 'and no other is started: each run starts its own, as before');
    });

    it('a script process that cannot be started ends at once, saying why (it used to wait for an exit that never came)', async () => {
      const iso = own(new Isolate(undefined, DEFAULT_ISOLATE, true, { kind: 'bubblewrap', bwrap: '/nonexistent/bwrap' }));
      assert.equal(await iso.ready, false);
      const { cause, detail } = await iso.ended;
      assert.equal(cause, 'exited');
      assert.match(detail, /ENOENT/);
      assert.match(iso.stderrTail, /could not start \/nonexistent\/bwrap/);
    });
  });

  describe('in the engine', () => {
    const x = workflowWorld();

    it('the next run starts on the spare; each run still gets a fresh process and context', async () => {
      const first = await x.run('globalThis.leak = "from the first run"; return await agent("one");');
      assert.equal(first.status, 'completed', first.error);
      assert.equal(await x.engine.spareReady(), true, 'a spare was started after the run');
      assert.equal(x.engine.stats().spares, 1, 'one process waits for the next run');
      const served = SpareIsolates.served;
      const second = await x.run('return typeof globalThis.leak;');
      assert.equal(second.status, 'completed', second.error);
      assert.equal(SpareIsolates.served, served + 1, 'the second run took the spare');
      assert.equal(JSON.parse(second.resultJson!), 'undefined', 'nothing of the first run is in the second');
      assert.equal(await x.engine.spareReady(), true);
      const third = await x.run('globalThis.leak = 1; return await agent("three");');
      assert.equal(third.status, 'completed', third.error);
      assert.equal(SpareIsolates.served, served + 2, 'the spare after the second run served the third');
      assert.equal(runProcesses(), 0, 'no run’s script process is left');
    });

    it('the outcome reaches its caller before the host forks the next run’s spare (the fork is not on the run’s tail)', async () => {
      const alive = SpareIsolates.alive;
      const outcome = await x.run('return 1;');
      assert.equal(outcome.status, 'completed', outcome.error);
      assert.equal(SpareIsolates.alive, alive, 'no spare was started before the outcome was handed back');
      assert.equal(await x.engine.spareReady(), true, 'the spare is started right after');
      assert.equal(SpareIsolates.alive, alive + 1);
    });

    it('a run that begins before the deferred spare started has it started for itself, and takes it', async () => {
      const alive = SpareIsolates.alive;
      assert.equal((await x.run('return 1;')).status, 'completed');
      assert.equal(SpareIsolates.alive, alive, 'its spare is not started yet');
      const served = SpareIsolates.served;
      const next = await x.run('return 2;');
      assert.equal(next.status, 'completed', next.error);
      assert.equal(SpareIsolates.served, served + 1, 'the run took the spare it started');
      assert.equal(runProcesses(), 0, 'no run’s script process is left');
    });

    it('new limits: the spare started before them serves no run', async () => {
      const first = await x.run('return 1;');
      assert.equal(first.status, 'completed', first.error);
      assert.equal(await x.engine.spareReady(), true);
      assert.equal(x.engine.stats().spares, 1);
      x.engine.setDeployment({ isolate: { heapMb: 96, rssMb: 512 } });
      const served = SpareIsolates.served;
      const oom = await x.run('const k = []; for (;;) k.push(new Array(1e6).fill(0.5));');
      assert.equal(oom.code, 'SCRIPT_OOM', 'the run ran under the new heap limit');
      assert.equal(SpareIsolates.served, served, 'the old spare was not used');
    });

    it('closing the harness ends the spare', async () => {
      assert.equal((await x.run('return 1;')).status, 'completed');
      assert.equal(await x.engine.spareReady(), true);
      assert.equal(x.engine.stats().spares, 1);
      await x.w.t.h.close();
      assert.equal(SpareIsolates.alive, 0);
      assert.equal(Isolate.alive, 0, 'no script process is left');
    });
  });
});
