import assert from 'node:assert/strict';
import { runProcesses } from '../../../src/core/workflow/spare';
import { workflowWorld } from './helpers';

// Decision 0027: the five runaway scripts of issue 12 end their own process, never the host.
// The host stays responsive throughout: its own timer keeps firing while the script runs.
describe('workflow isolation: runaway scripts end, the host lives', () => {
  const x = workflowWorld({ workflow: { wallClockMs: 8000, isolate: { heapMb: 64, rssMb: 256 } } });

  const RUNAWAYS: [string, string, string][] = [
    ['new Array(1e8) filled by index', 'const a = new Array(1e8); for (let i = 0; i < 1e8; i++) a[i] = i + 0.5; return 1;', 'SCRIPT_OOM'],
    ['a long push() loop', 'const a = []; for (let i = 0; i < 1e9; i++) a.push(i + 0.5); return 1;', 'SCRIPT_OOM'],
    ['an ArrayBuffer flood', 'const k = []; for (;;) { const b = new Uint8Array(32 * 1024 * 1024); b.fill(1); k.push(b); }', 'SCRIPT_OOM'],
    ['a synchronous while(true){}', 'while (true) {}', 'WALL_CLOCK'],
    ['a never-resolving promise', 'await new Promise(() => {}); return 1;', 'SCRIPT_STALLED'],
  ];
  for (const [what, script, code] of RUNAWAYS) {
    it(`${what}: ${code}, the host alive and its event loop turning`, async () => {
      let ticks = 0;
      const timer = setInterval(() => ticks++, 20);
      try {
        const o = await x.run(script);
        assert.equal(o.status, 'failed');
        assert.equal(o.code, code, o.error);
        assert.ok(ticks > 0, 'the host’s own timer fired while the script ran');
      } finally {
        clearInterval(timer);
      }
      assert.equal(runProcesses(), 0, "no run's script process is left");
      // The host goes on: the same harness runs the next workflow.
      const next = await x.run('return await agent("after");');
      assert.equal(next.status, 'completed', next.error);
    });
  }

  it('the script cannot read the host’s ARBOR_API_KEY, by the globals or by an escape through a function’s constructor', async () => {
    process.env.ARBOR_API_KEY = 'sk-must-not-leak';
    try {
      const o = await x.run(`
        const found = [];
        const tries = [
          () => process.env.ARBOR_API_KEY,
          () => agent.constructor.constructor('return process')().env.ARBOR_API_KEY,
          () => log.constructor.constructor('return this.process')().env.ARBOR_API_KEY,
          () => args.constructor.constructor('return globalThis.process.env.ARBOR_API_KEY')(),
          () => (async () => {}).constructor('return process')().env.ARBOR_API_KEY,
          () => { try { agent(1n); } catch (e) { return e.constructor.constructor('return process')().env.ARBOR_API_KEY; } },
        ];
        for (const t of tries) { try { found.push(String(t())); } catch (e) { found.push('blocked: ' + e.name); } }
        return found;`);
      assert.equal(o.status, 'completed', o.error);
      assert.ok(!o.resultJson!.includes('sk-must-not-leak'), o.resultJson);
    } finally {
      delete process.env.ARBOR_API_KEY;
    }
  });
});
