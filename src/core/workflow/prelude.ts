// The code that runs inside the script's `vm` context before the script (issue 20 point 1).
// It makes the six globals, and it is the only code the script process's own realm ever
// calls in the context. Its contract with `workflow-child.ts`:
//
// - The host side hands it one function, `bridge(kind, text)`: strings in, a string out,
//   never a throw (it catches everything on its own side). The prelude still calls it
//   inside try/catch and, should anything escape (a stack overflow at the call's entry),
//   drops that error unseen and throws one made here: no object of the host's realm is
//   ever bound to a name the script can reach.
// - It returns `{ run, deliver }`, taken by the host before the script exists. The host calls
//   only these two, only with primitives (`run` with the compiled script function), and never
//   reads or settles anything they return, so a script that patches `Promise.prototype.then`,
//   `Object.prototype` getters or `Symbol.species` only ever meets its own realm's values.
// - Everything it relies on (`JSON.stringify`/`parse`, `Object.defineProperty`, `String`) is
//   taken before the script runs; the script may overwrite the globals, not these.
// - `Error.prepareStackTrace` is fixed to `undefined` and `Error` made read-only, so no
//   script-made formatter is ever handed V8's call sites.
//
// This file is a string constant: `workflow-child.ts` (which imports nothing of ours at run
// time) inlines it through the bundler and tsc alike.

export const PRELUDE = `(function (bridge, argsJson) {
  'use strict';
  const stringify = JSON.stringify;
  const parse = JSON.parse;
  const defineProperty = Object.defineProperty;
  const freeze = Object.freeze;
  const isArray = Array.isArray;
  const StringOf = String;
  const ErrorOf = Error;
  const TypeErrorOf = TypeError;
  const PromiseOf = Promise;
  const pending = Object.create(null);
  let nextId = 0;

  class WorkflowError extends ErrorOf {
    constructor(code, message) { super(message); this.name = 'WorkflowError'; this.code = code; }
  }
  // The one way out. The host answers '' (done) or a reason; a throw at the call is replaced.
  const call = (kind, body) => {
    let text;
    try { text = stringify(body); } catch (e) { return 'not JSON'; }
    if (typeof text !== 'string') return 'not JSON';
    let answer;
    try { answer = bridge(kind, text); } catch { answer = 'the bridge failed'; }
    return typeof answer === 'string' ? answer : 'the bridge failed';
  };
  const show = (v) => {
    if (typeof v === 'string') return v;
    try { const t = stringify(v); return typeof t === 'string' ? t : StringOf(v); } catch { try { return StringOf(v); } catch { return '(a value that cannot be shown)'; } }
  };
  const deepFreeze = (v) => { if (v && typeof v === 'object') { for (const k in v) deepFreeze(v[k]); freeze(v); } return v; };

  const agent = (prompt, opts) => new PromiseOf((resolve, reject) => {
    const id = nextId++;
    pending[id] = { resolve, reject };
    let why;
    try { why = call('agent', { id, prompt, opts: opts === undefined ? {} : opts }); }
    catch { why = 'not JSON'; }
    if (why !== '') {
      delete pending[id];
      reject(new WorkflowError('BAD_AGENT_REQUEST', 'agent(prompt, opts): prompt and opts must be JSON (' + why + ')'));
    }
  });
  const fns = (what, v) => {
    if (!isArray(v) || v.some((f) => typeof f !== 'function')) throw new TypeErrorOf(what + ' takes an array of functions, e.g. parallel(items.map((x) => () => agent(x)))');
  };
  // Fatal errors pass straight up: Promise.all rejects with the first one.
  const parallel = async (thunks) => { fns('parallel()', thunks); return PromiseOf.all(thunks.map((t) => PromiseOf.resolve().then(t))); };
  const pipeline = async (items, ...stages) => {
    if (!isArray(items)) throw new TypeErrorOf('pipeline(items, ...stages) takes an array of items');
    fns('pipeline() stages', stages);
    return PromiseOf.all(items.map(async (item, i) => { let v = item; for (const s of stages) v = await s(v, i); return v; }));
  };
  const phase = (title) => { call('phase', { title: show(title) }); };
  const log = (message) => { call('log', { message: show(message) }); };

  const globals = { agent, parallel, pipeline, phase, log, args: deepFreeze(parse(argsJson)) };
  for (const k in globals) {
    const v = globals[k];
    defineProperty(globalThis, k, { value: typeof v === 'function' ? freeze(v) : v, writable: false, configurable: false, enumerable: true });
  }
  defineProperty(ErrorOf, 'prepareStackTrace', { value: undefined, writable: false, configurable: false });
  defineProperty(globalThis, 'Error', { value: ErrorOf, writable: false, configurable: false, enumerable: false });

  const fail = (e) => {
    let code = 'SCRIPT_ERROR';
    let message = '(the script threw a value that cannot be shown)';
    let stack = '';
    try { if (e && e.name === 'WorkflowError' && typeof e.code === 'string') code = e.code; } catch {}
    try { message = StringOf(e !== null && typeof e === 'object' && 'message' in e ? e.message : e); } catch {}
    try { stack = StringOf(e && e.stack); } catch {}
    call('done', { ok: false, code, message, stack });
  };
  // Runs the compiled script and reports how it ended; never throws, returns nothing the host reads.
  const run = (fn) => {
    (async () => {
      let value;
      try { value = await fn(); } catch (e) { return fail(e); }
      let json;
      try { json = stringify(value); } catch (e) {
        let m = '';
        try { m = StringOf(e && e.message); } catch {}
        return call('done', { ok: false, code: 'RESULT_NOT_JSON', message: "The script's return value is not JSON: " + m });
      }
      call('done', { ok: true, json: typeof json === 'string' ? json : null });
    })();
  };
  // An agent() call's answer, as JSON text the host made from its own values.
  const deliver = (id, text) => {
    const p = pending[id];
    if (!p) return;
    delete pending[id];
    let r;
    try { r = parse(text); } catch { return p.reject(new WorkflowError('SCRIPT_PROTOCOL', 'an unreadable answer')); }
    if (r.ok) p.resolve(r.value); else p.reject(new WorkflowError(StringOf(r.code), StringOf(r.message)));
  };
  return freeze({ run, deliver });
})`;
