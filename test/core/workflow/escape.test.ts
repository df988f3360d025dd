import assert from 'node:assert/strict';
import { runProcesses } from '../../../src/core/workflow/spare';
import { workflowWorld } from './helpers';

// Issue 20, point 1: known `vm` escapes, each tried by a real script in a real script
// process. A vector "reaches the host" when it gets the script process's own `process`
// (a host-realm `Function` evaluates `return process`). Every vector reports what it got;
// the test asserts that none got a `process`, and that the vector really ran (its marker).
//
// `grab(x)` is the attacker's probe: from any value, climb to a Function and ask it for
// `process`. Inside the context `Function('return process')()` is undefined (no such
// global); a host-realm Function answers with the real one.
const PROBE = `
  const ESC = [];
  const grab = (x, how) => {
    for (const f of [x, x && x.constructor, x && x.constructor && x.constructor.constructor]) {
      try {
        if (typeof f !== 'function') continue;
        const p = f.constructor('return typeof process === "object" ? process : undefined')();
        if (p && typeof p.pid === 'number') { ESC.push(how + ':' + p.pid); try { p.send && p.send({ op: 'done', ok: true, json: JSON.stringify('ESCAPED ' + how) }); } catch {} return p; }
      } catch {}
    }
    return undefined;
  };
`;

interface Vector {
  what: string;
  /** The attack; it ends with `return ['ran', ...]` and pushes into ESC on success. */
  body: string;
}

const VECTORS: Vector[] = [
  {
    what: 'a host-realm error from the bridge (JSON.stringify made to return invalid text before log/phase/agent)',
    body: `
      const real = JSON.stringify;
      JSON.stringify = () => '{not json';
      for (const f of [() => log('x'), () => phase('y')]) { try { f(); } catch (e) { grab(e, 'log/phase error'); } }
      try { await agent('x'); } catch (e) { grab(e, 'agent error'); }
      JSON.stringify = () => undefined;
      try { log('x'); } catch (e) { grab(e, 'undefined payload'); }
      JSON.stringify = () => 12;
      try { await agent('x'); } catch (e) { grab(e, 'number payload'); }
      JSON.stringify = real;
      JSON.parse = () => { throw new Error('context parse'); };
      try { await agent('z'); } catch (e) { grab(e, 'reply parse'); }
      return ['ran'];`,
  },
  {
    what: 'constructor chains from every global, `this` and the global object',
    body: `
      for (const [n, v] of Object.entries({ agent, log, phase, parallel, pipeline, args, g: globalThis, self: this, fn: function () {}, af: async () => {}, gen: function* () {} })) grab(v, n);
      grab(Object.getPrototypeOf(globalThis), 'global proto');
      try { grab(this.constructor, 'this.constructor'); } catch {}
      try { grab(globalThis.__proto__.__proto__, 'global proto proto'); } catch {}
      return ['ran'];`,
  },
  {
    what: 'Error.prepareStackTrace call sites (getThis, getFunction, the frames array)',
    body: `
      let set = true;
      try { Error.prepareStackTrace = (e, frames) => { grab(frames, 'frames'); for (const f of frames) { try { grab(f, 'callsite'); grab(f.getThis(), 'getThis'); grab(f.getFunction(), 'getFunction'); } catch {} } return 'x'; }; } catch { set = false; }
      try { globalThis.Error = { prepareStackTrace: (e, fr) => { grab(fr, 'replaced Error'); return 'x'; } }; } catch {}
      const e = new RangeError('probe'); void e.stack;
      try { log({ toJSON() { return new Error('inner').stack; } }); } catch (er) { grab(er, 'log error'); void er.stack; }
      const deep = (n) => (n ? deep(n - 1) : log('bottom'));
      try { deep(50); } catch (er) { grab(er, 'deep'); }
      JSON.stringify = () => '{bad';
      try { log('x'); } catch (er) { void (er && er.stack); grab(er, 'after stack'); }
      return ['ran', set];`,
  },
  {
    what: 'Proxy traps on everything handed to the bridge (prompt, opts, log text, args)',
    body: `
      const traps = {};
      for (const t of ['get', 'set', 'has', 'ownKeys', 'getOwnPropertyDescriptor', 'getPrototypeOf', 'defineProperty', 'deleteProperty', 'apply', 'construct', 'isExtensible', 'preventExtensions', 'setPrototypeOf']) {
        traps[t] = function (...a) { for (const x of a) grab(x, 'trap ' + t); for (const x of arguments) grab(x, 'trap args ' + t); grab(arguments, 'arguments ' + t); return Reflect[t](...a); };
      }
      const P = (o) => new Proxy(o, traps);
      try { log(P({ a: 1 })); } catch (e) { grab(e, 'proxy log'); }
      try { phase(P(['t'])); } catch (e) { grab(e, 'proxy phase'); }
      try { await agent(P({ toString() { return 'p'; } }), P({ label: 'x' })); } catch (e) { grab(e, 'proxy agent'); }
      try { await agent('ok', P({})); } catch (e) { grab(e, 'proxy opts'); }
      try { await parallel(P([() => agent('q')])); } catch (e) { grab(e, 'proxy parallel'); }
      return ['ran'];`,
  },
  {
    what: 'Symbol.species and a patched Promise.prototype.then (the host settling the script’s promise)',
    body: `
      const realThen = Promise.prototype.then;
      Promise.prototype.then = function (a, b) { grab(a, 'then onFulfilled'); grab(b, 'then onRejected'); return realThen.call(this, a, b); };
      class Evil extends Promise { static get [Symbol.species]() { return function (exec) { grab(exec, 'species executor'); return new Promise(exec); }; } }
      try { await parallel([() => Evil.resolve(1)]); } catch (e) { grab(e, 'species'); }
      Object.defineProperty(Object.prototype, 'then', { configurable: true, get() { grab(this, 'thenable getter'); return undefined; } });
      const r = await agent('t');
      delete Object.prototype.then;
      return ['ran', r];`,
  },
  {
    what: 'host promises and iterators (what the globals return, args, the reply values)',
    body: `
      const p = agent('i');
      grab(p, 'agent promise');
      const same = Object.getPrototypeOf(p) === Promise.prototype;
      const v = await p;
      const arr = await parallel([() => agent('a'), () => agent('b')]);
      grab(arr, 'parallel array'); grab(arr[Symbol.iterator](), 'array iterator');
      for (const x of Object.values(args)) grab(x, 'args value');
      grab(Object.getPrototypeOf(args), 'args proto');
      const it = args.list[Symbol.iterator](); grab(it, 'args iterator'); grab(Object.getPrototypeOf(it), 'iterator proto');
      return ['ran', same, v];`,
  },
  {
    what: 'arguments.callee.caller and Function.prototype.caller from code the host calls',
    body: `
      function sloppy() { try { grab(sloppy.caller, 'caller'); grab(arguments.callee.caller, 'callee.caller'); let c = sloppy.caller; for (let i = 0; c && i < 10; i++) { grab(c, 'chain ' + i); c = c.caller; } } catch {} return 'c'; }
      try { log({ toJSON: sloppy }); } catch (e) { grab(e, 'toJSON'); }
      Object.defineProperty(Object.prototype, 'ok', { configurable: true, get: function () { sloppy(); return undefined; } });
      Object.defineProperty(Object.prototype, 'value', { configurable: true, get: function () { sloppy(); return undefined; } });
      try { await agent('c'); } catch (e) { grab(e, 'agent getter'); }
      delete Object.prototype.ok; delete Object.prototype.value;
      Object.defineProperty(Array.prototype, 'then', { configurable: true, get: function () { sloppy(); return undefined; } });
      try { await parallel([() => agent('d')]); } catch (e) {}
      delete Array.prototype.then;
      return ['ran'];`,
  },
  {
    what: 'a stack overflow thrown while entering the bridge',
    body: `
      let n = 0;
      const dive = () => { n++; try { return dive(); } catch (e) { try { log('x'); } catch (er) { grab(er, 'overflow at log'); } try { phase('y'); } catch (er) { grab(er, 'overflow at phase'); } return n; } };
      dive();
      return ['ran'];`,
  },
];

describe('workflow escapes: no vm escape reaches the script process’s process (issue 20)', () => {
  const x = workflowWorld({ workflow: { wallClockMs: 20_000 } });

  for (const v of VECTORS) {
    it(v.what, async () => {
      const o = await x.run(`${PROBE}\nconst __r = await (async () => {${v.body}})();\nreturn { esc: ESC, r: __r };`, { args: { list: [1, 2] } });
      assert.ok(!String(o.resultJson).includes('ESCAPED'), `escaped through the host: ${o.resultJson}`);
      assert.equal(o.status, 'completed', `${o.code}: ${o.error}`);
      const { esc, r } = JSON.parse(o.resultJson!) as { esc: string[]; r: unknown[] };
      assert.deepEqual(esc, [], `reached process: ${esc.join(', ')}`);
      assert.equal(r[0], 'ran', 'the vector ran to its end');
      assert.equal(runProcesses(), 0, "no run's script process is left");
    });
  }
});
