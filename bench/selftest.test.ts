// The benchmark's own machinery: a figure that cannot be measured still prints (as a MISS
// with its reason), a crashed module's figures do not vanish, disk waits are counted once,
// and the bare request replays the very bytes a turn sent.
import * as assert from 'node:assert/strict';
import { OpenAICompatibleClient } from '../src/core/model/openai-client';
import type { ModelRequest } from '../src/core/model/types';
import { ModelServer } from '../test/support/model-server';
import { DiskWait } from './disk-wait';
import { bootstrapInterval, hodgesLehmann, hodgesLehmannRatio, orders } from './paired';
import { runModules } from './run-modules';
import { type BenchModule, type FigureSpec, formatFigure, missed } from './support';
import { bareRequestMs, TimedClient } from './timed-client';
import { cpuVerdict, floorVerdict } from './verdicts';

const A: FigureSpec = { id: 'x.a', op: '<=', target: 2 };
const B: FigureSpec = { id: 'x.b', op: '>=', target: 50 };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('bench figures', () => {
  it('prints a measured figure with its verdict, and one that could not be measured as MISS with the reason', () => {
    assert.equal(formatFigure({ ...A, value: 1.234 }), 'bench x.a 1.23 <=2 ok');
    assert.equal(formatFigure({ ...B, value: 12 }), 'bench x.b 12.0 >=50 MISS');
    assert.equal(
      formatFigure(missed(A, 'chromium is not installed\n  (run npm run setup:e2e)')),
      'bench x.a - <=2 MISS (chromium is not installed (run npm run setup:e2e))',
    );
    assert.equal(formatFigure({ ...A, value: Number.NaN }), 'bench x.a - <=2 MISS (not a number: NaN)');
  });

  it('gives every declared figure of a crashed module, and one a module forgot, as MISS with why', async () => {
    const notes: string[] = [];
    const crashing: BenchModule = { name: 'boom', figures: [A, B], run: () => Promise.reject(new Error('server refused\nstack…')) };
    const forgetful: BenchModule = { name: 'half', figures: [A, B], run: async () => [{ ...B, value: 60 }] };
    const { figures, crashed } = await runModules([crashing, forgetful], { quick: true, note: (l) => notes.push(l) });
    assert.equal(crashed, true);
    assert.deepEqual(figures.map(formatFigure), [
      'bench x.a - <=2 MISS (the boom bench crashed: server refused)',
      'bench x.b - >=50 MISS (the boom bench crashed: server refused)',
      'bench x.b 60.0 >=50 ok',
      'bench x.a - <=2 MISS (the half bench did not report it)',
    ]);
    assert.ok(notes.some((n) => n.startsWith('boom: FAILED')));
  });

  it('says a durable-floor figure is at its floor only when bare commits (through the thread pool) would still miss', () => {
    // bare 2.6 ms, target ≤ 2: the target leaves 2.6 ms over the bare request.
    const atFloor = floorVerdict(A, 1.24, 2.6, 4, 6.6, { viaPool: 0.8, onThread: 0.5 });
    assert.match(
      atFloor,
      /AT ITS FLOOR: without the durable writes the figure is 1\.24 \(target ≤ 2\); its 4\.00 commits wait 6\.60 ms, of which bare commits would take 3\.20 ms \(.*0\.80 ms each through the thread pool, 0\.50 ms on the event loop's own thread\); were each commit only that, the figure would still be 2\.47/,
    );
    assert.match(atFloor, /the target needs a decision$/);
    const ownPath = floorVerdict(A, 1.24, 2.6, 4, 6.6, { viaPool: 0.3, onThread: 0.2 });
    assert.doesNotMatch(ownPath, /AT ITS FLOOR/, 'the disk alone would fit: the commits’ own path misses, which is code');
    assert.match(ownPath, /the commits' own path misses, not the disk: .* the figure would be 1\.70$/);
    assert.equal(floorVerdict(A, 2.4, 2.6, 4, 6.6, { viaPool: 0.8, onThread: 0.5 }), '', 'the runtime itself misses: not the floor');
    assert.equal(floorVerdict(A, 1.2, 2.6, 2, 2.0, { viaPool: 0.8, onThread: 0.5 }), '', 'the commits fit in what the target leaves');
    assert.equal(floorVerdict(B, 1.2, 2.6, 4, 6.6, { viaPool: 0.8, onThread: 0.5 }), '', 'only ≤ figures over a bare request');
  });

  it('says a fan-out efficiency figure is CPU-bound only when a wave needs more of the event loop than the target leaves', () => {
    const eff: FigureSpec = { id: 'x.eff', op: '>=', target: 0.9 };
    // 8 waves of 50 ms: ≥ 0.9 leaves 44.4 ms in all, 5.56 ms a wave, 0.69 ms per child of eight.
    assert.match(
      cpuVerdict(eff, 64, 8, 50, 4.51),
      /CPU-BOUND: the 8 children of a wave need 8 × 4\.51 = 36\.1 ms .* leaves 5\.56 ms a wave .*\(≤ 0\.69 ms of CPU per child\)/,
    );
    assert.match(
      cpuVerdict(eff, 64, 8, 50, 2.2, 0.9),
      /the model client alone .* takes 0\.90 ms a request, the runtime and the store the other 1\.30 ms: the client alone needs 7\.20 ms a wave, past the target/,
    );
    assert.match(cpuVerdict(eff, 64, 8, 50, 2.2, 0.5), /the floor with this client is 4\.00 ms a wave$/);
    assert.equal(cpuVerdict(eff, 64, 8, 50, 0.5), '', 'the CPU fits');
    assert.equal(cpuVerdict(A, 64, 8, 50, 4.51), '', 'only ≥ efficiency figures');
  });

  it('counts overlapping durable writes once and starts again after take()', async () => {
    const disk = new DiskWait();
    const store = { write: (ms: number) => sleep(ms) };
    disk.wrap(store, 'write');
    const t = performance.now();
    await Promise.all([store.write(60), sleep(20).then(() => store.write(60))]);
    const wall = performance.now() - t;
    const ms = disk.take();
    // ~80 ms of wall time with a write in flight, not the 120 ms the two writes sum to.
    assert.ok(ms >= 75 && ms <= wall + 1, `disk wait ${ms} ms for ${wall} ms of wall time`);
    assert.equal(disk.take(), 0);
  });

  describe('the bare request', () => {
    let server: ModelServer;
    before(async () => {
      server = await ModelServer.start();
    });
    after(() => server.stop());

    it('sends the bytes the wrapped client sent, through the same client, and times it', async () => {
      const inner = new OpenAICompatibleClient({ baseURL: server.baseURL, apiKey: 'k', maxRetries: 0 });
      const timed = new TimedClient(inner);
      server.reset();
      server.setFallback(() => ({ text: 'done' }));
      const req: ModelRequest = {
        model: 'bench',
        system: 'be brief',
        tools: [],
        messages: [{ role: 'user', content: 'hello', source: { kind: 'user' }, seq: 1 }],
      };
      for await (const _ of timed.stream(req)) {
        // read it all, as a turn does
      }
      assert.equal(timed.lastRequest, req);
      assert.ok(timed.modelMs > 0);
      const ms = await bareRequestMs(timed.inner, timed.lastRequest);
      assert.ok(ms > 0);
      assert.equal(server.requests.length, 2);
      assert.equal(server.requests[1].raw, server.requests[0].raw);
    });

    it('fails, saying so, when the server answers with an error', async () => {
      const inner = new OpenAICompatibleClient({ baseURL: server.baseURL, apiKey: 'k', maxRetries: 0 });
      server.reset();
      server.enqueue({ fault: { kind: 'status', status: 500, message: 'scripted outage' } });
      const req: ModelRequest = { model: 'bench', system: '', tools: [], messages: [{ role: 'user', content: 'hello', source: { kind: 'user' }, seq: 1 }] };
      await assert.rejects(bareRequestMs(inner, req), /the bare request failed/);
    });
  });
  describe('paired rounds (decision 0116)', () => {
    it('rotates every order of the measures, so each follows each other equally often and none is always first', () => {
      const all = orders(3);
      assert.equal(all.length, 6);
      assert.equal(new Set(all.map((o) => o.join())).size, 6);
      for (const o of all) assert.deepEqual([...o].sort(), [0, 1, 2]);
      for (let m = 0; m < 3; m++) assert.equal(all.filter((o) => o[0] === m).length, 2, `measure ${m} first in two of six rounds`);
      // Over one rotation, each measure runs right after each other one the same number of times.
      const follows = new Map<string, number>();
      for (const o of all) for (let i = 1; i < o.length; i++) follows.set(`${o[i - 1]}>${o[i]}`, (follows.get(`${o[i - 1]}>${o[i]}`) ?? 0) + 1);
      assert.equal(follows.size, 6);
      assert.deepEqual(new Set(follows.values()), new Set([2]));
      assert.deepEqual(orders(1), [[0]]);
    });

    it('estimates a location as the median of the pairwise means: a wild value moves it little', () => {
      assert.equal(hodgesLehmann([1, 2, 3]), 2);
      assert.equal(hodgesLehmann([3, 1, 2, 100]), 2.75, 'the mean would be 26.5');
      assert.equal(hodgesLehmann([5]), 5);
    });

    it('estimates a ratio on the log scale: swapped sides give its reciprocal, and a skewed spread does not lift it', () => {
      const ratios = [0.5, 2, 0.25, 4, 0.5, 2, 1];
      assert.ok(Math.abs(hodgesLehmannRatio(ratios) - 1) < 1e-12, 'symmetric in the logs: 1');
      assert.ok(hodgesLehmann(ratios) > 1.2, 'the pairwise means of the ratios themselves lean above it');
      const rounds = [1.1, 1.3, 0.9, 1.05, 2.2];
      assert.ok(Math.abs(hodgesLehmannRatio(rounds) * hodgesLehmannRatio(rounds.map((r) => 1 / r)) - 1) < 1e-12);
      assert.equal(hodgesLehmannRatio([1.07]), 1.07);
    });

    it('gives a bootstrap interval that is repeatable, contains the estimate, and is a point for noiseless rounds', () => {
      const xs = [10, 12, 9, 30, 11, 10, 13, 8, 12, 11];
      const stat = (rs: readonly number[]) => hodgesLehmann(rs.map((r) => xs[r]));
      const [low, high] = bootstrapInterval(xs.length, stat);
      assert.deepEqual(bootstrapInterval(xs.length, stat), [low, high]);
      const all = stat(xs.map((_, i) => i));
      assert.ok(low <= all && all <= high && low < high, `${low} ≤ ${all} ≤ ${high}`);
      assert.deepEqual(
        bootstrapInterval(5, (rs) => hodgesLehmann(rs.map(() => 7))),
        [7, 7],
      );
    });
  });
});
