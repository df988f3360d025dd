import * as assert from 'node:assert/strict';
import { createSearchFilesTool } from '../../../src/core/tools/search-files';
import { call, makeWorkspace, type Workspace } from './fixture';

// JavaScript regexes backtrack: /(a+)+$/ on "aaa…ab" takes time exponential in the run of
// a's, inside one uninterruptible exec(). The search must stop at its time limit, say why,
// and never freeze the host's event loop meanwhile.
describe('search_files: a catastrophic pattern cannot stall the host', () => {
  let ws: Workspace;
  beforeEach(() => {
    ws = makeWorkspace();
    ws.write('a-first.txt', 'found before the slow line\n');
    ws.write('b-slow.txt', `${'a'.repeat(40)}b\n`);
  });
  afterEach(() => ws.cleanup());

  it("(a+)+$ on a long run of a's then b stops at the limit with a clear message, while timers keep firing", async function () {
    this.timeout(20_000);
    const limit = 1000;
    const tool = createSearchFilesTool({ timeLimitMs: limit });
    let ticks = 0;
    const timer = setInterval(() => ticks++, 20);
    const started = Date.now();
    let r: Awaited<ReturnType<typeof call>>;
    try {
      r = await call(tool, { pattern: '(a+)+$' }, ws.ctx());
    } finally {
      clearInterval(timer);
    }
    const took = Date.now() - started;
    assert.equal(r.isError, true);
    assert.equal(r.code, 'TIMEOUT', r.content);
    assert.match(r.content, /^search_files: search stopped after 1 s: the pattern \/\(a\+\)\+\$\/ is too slow \(catastrophic backtracking\?\); simplify it/);
    assert.ok(took >= limit && took < limit + 1500, `returned after ${took} ms, limit ${limit} ms`);
    // A 20 ms timer during a ~1 s search: a blocked loop would fire it once at most.
    assert.ok(ticks >= (limit / 20) * 0.5, `the event loop stayed responsive: ${ticks} ticks in ${took} ms`);
  });

  it('a fast pattern is answered as before, and a slow one stops on a single file too', async function () {
    this.timeout(20_000);
    const tool = createSearchFilesTool({ timeLimitMs: 1000 });
    const fast = await call(tool, { pattern: 'found' }, ws.ctx());
    assert.deepEqual(fast, { isError: false, content: 'a-first.txt:1: found before the slow line' });
    const slowOnly = await call(tool, { pattern: '(a+)+$', path: 'b-slow.txt' }, ws.ctx());
    assert.equal(slowOnly.code, 'TIMEOUT');
  });

  it('an interrupted turn stops a slow search at once (the worker is terminated)', async function () {
    this.timeout(20_000);
    const tool = createSearchFilesTool({ timeLimitMs: 10_000 });
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 200);
    const started = Date.now();
    const r = await call(tool, { pattern: '(a+)+$' }, ws.ctx({ signal: ac.signal }));
    assert.equal(r.code, 'CANCELLED', r.content);
    assert.ok(Date.now() - started < 2000, `stopped after ${Date.now() - started} ms`);
  });
});
