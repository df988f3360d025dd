// The script process (decision 0027): forked by `isolate.ts` with an empty environment, a
// heap limit and Node's permission flags, it runs one workflow script in a fresh `vm`
// context whose only globals are agent, parallel, pipeline, phase, log and args. Everything
// the script does outside itself is a JSON message to the host. Containment, not a security
// boundary: the process, not the vm, is what keeps the host (the extension host) alive.
//
// This file is an entry point of its own (out/…/workflow-child.js, dist/workflow-child.js):
// it imports nothing at run time but Node built-ins, so the permission model need only let
// it read itself.
import * as vm from 'node:vm';
import { Worker } from 'node:worker_threads';
import type { FromChild, ToChild } from './bridge';

const EXIT_STALLED = 3; // bridge.EXIT_STALLED, kept literal: this file imports no module of ours
const FATAL = ['AGENT_CAP', 'CANCELLED', 'WALL_CLOCK', 'BUDGET', 'BAD_AGENT_REQUEST'];

let finished = false;
let outstanding = 0;
let nextId = 0;
const replies = new Map<number, (json: string) => void>();

const send = (m: FromChild, cb?: () => void) => {
  if (!process.send || !process.connected) return;
  process.send(m, undefined, {}, cb ? () => cb() : undefined);
};

// The loop stays alive only while an agent() call waits for the host: a script that awaits a
// promise nothing can settle empties the loop, and the process says so by its exit code.
const channel = (process as unknown as { channel?: { ref(): void; unref(): void } }).channel;
const hold = () => channel?.ref();
const letGo = () => {
  if (outstanding === 0) channel?.unref();
};
process.on('beforeExit', () => {
  if (!finished) process.exit(EXIT_STALLED);
});

const PRELUDE = `(function (bridge, argsJson) {
  'use strict';
  class WorkflowError extends Error {
    constructor(code, message) { super(message); this.name = 'WorkflowError'; this.code = code; }
  }
  const deepFreeze = (v) => { if (v && typeof v === 'object') { Object.values(v).forEach(deepFreeze); Object.freeze(v); } return v; };
  const agent = (prompt, opts) => new Promise((resolve, reject) => {
    let payload;
    try { payload = JSON.stringify({ prompt, opts: opts === undefined ? {} : opts }); }
    catch (e) { return reject(new WorkflowError('BAD_AGENT_REQUEST', 'agent(prompt, opts): prompt and opts must be JSON (' + e.message + ')')); }
    bridge('agent', payload, (json) => {
      const r = JSON.parse(json);
      if (r.ok) resolve(r.value); else reject(new WorkflowError(r.code, r.message));
    });
  });
  const fns = (what, v) => {
    if (!Array.isArray(v) || v.some((f) => typeof f !== 'function')) throw new TypeError(what + ' takes an array of functions, e.g. parallel(items.map((x) => () => agent(x)))');
  };
  // Fatal errors pass straight up: Promise.all rejects with the first one.
  const parallel = async (thunks) => { fns('parallel()', thunks); return Promise.all(thunks.map((t) => Promise.resolve().then(t))); };
  const pipeline = async (items, ...stages) => {
    if (!Array.isArray(items)) throw new TypeError('pipeline(items, ...stages) takes an array of items');
    fns('pipeline() stages', stages);
    return Promise.all(items.map(async (item, i) => { let v = item; for (const s of stages) v = await s(v, i); return v; }));
  };
  const text = (v) => { if (typeof v === 'string') return v; try { return JSON.stringify(v) ?? String(v); } catch { return String(v); } };
  const phase = (title) => { bridge('phase', JSON.stringify(text(title))); };
  const log = (message) => { bridge('log', JSON.stringify(text(message))); };
  const globals = { agent, parallel, pipeline, phase, log, args: deepFreeze(JSON.parse(argsJson)) };
  for (const [k, v] of Object.entries(globals)) {
    Object.defineProperty(globalThis, k, { value: typeof v === 'function' ? Object.freeze(v) : v, writable: false, configurable: false, enumerable: true });
  }
})`;

/** The only way out of the context: strings in, strings out. */
function bridge(kind: string, payload: string, onReply?: (json: string) => void): void {
  if (finished) return;
  const v = JSON.parse(payload) as unknown;
  if (kind === 'phase') return send({ op: 'phase', title: v as string });
  if (kind === 'log') return send({ op: 'log', message: v as string });
  const id = nextId++;
  replies.set(id, onReply!);
  outstanding++;
  hold();
  const { prompt, opts } = v as { prompt: unknown; opts: unknown };
  send({ op: 'agent', id, prompt, opts });
}

function lineOf(err: unknown): number | undefined {
  const m = /workflow\.js:(\d+)/.exec(String((err as { stack?: unknown })?.stack ?? ''));
  return m ? Math.max(1, Number(m[1]) - 1) : undefined; // the wrapper adds one line
}

function finish(m: FromChild): void {
  if (finished) return;
  finished = true;
  hold();
  send(m, () => process.exit(0));
}

function start(script: string, args: unknown): void {
  const ctx = vm.createContext({}, { name: 'workflow', codeGeneration: { strings: true, wasm: false } });
  const install = new vm.Script(PRELUDE, { filename: 'prelude.js' }).runInContext(ctx) as (b: typeof bridge, a: string) => void;
  install(bridge, JSON.stringify(args ?? null));
  let p: Promise<unknown>;
  try {
    p = new vm.Script(`(async function () {\n${script}\n})()`, { filename: 'workflow.js' }).runInContext(ctx) as Promise<unknown>;
  } catch (err) {
    return finish({ op: 'done', ok: false, code: 'SCRIPT_ERROR', message: String((err as Error)?.message ?? err), ...withLine(err) });
  }
  letGo();
  p.then(
    (value) => {
      let json: string | null = null;
      try {
        json = JSON.stringify(value) ?? null;
      } catch (err) {
        return finish({
          op: 'done',
          ok: false,
          code: 'RESULT_NOT_JSON',
          message: `The script's return value is not JSON: ${String((err as Error)?.message ?? err)}`,
        });
      }
      finish({ op: 'done', ok: true, json });
    },
    (err: unknown) => {
      const e = err as { name?: unknown; code?: unknown; message?: unknown } | undefined;
      if (e?.name === 'WorkflowError' && typeof e.code === 'string' && FATAL.includes(e.code))
        return finish({ op: 'done', ok: false, code: e.code, message: String(e.message) });
      finish({ op: 'done', ok: false, code: 'SCRIPT_ERROR', message: String(e?.message ?? err), ...withLine(err) });
    },
  );
}

const withLine = (err: unknown) => {
  const line = lineOf(err);
  return line !== undefined ? { line } : {};
};

// Dies with its host: if the host is killed (kill -9, a crashed extension host) this
// process is re-parented; a watchdog thread notices even while the script spins in a
// synchronous loop, and ends the process.
const ORPHAN_WATCH = `const ppid = process.ppid; setInterval(() => { if (process.ppid !== ppid) process.kill(${process.pid}, 'SIGKILL'); }, 250);`;
try {
  new Worker(ORPHAN_WATCH, { eval: true, env: {}, resourceLimits: { maxOldGenerationSizeMb: 8 } }).unref();
} catch {
  // no worker (permission model without --allow-worker): the host's wall clock still applies while it lives
}

process.on('message', (raw: unknown) => {
  const m = raw as ToChild;
  if (m?.op === 'start') return start(m.script, m.args);
  if (m?.op === 'agent-result') {
    const reply = replies.get(m.id);
    if (!reply) return;
    replies.delete(m.id);
    outstanding--;
    reply(JSON.stringify(m.ok ? { ok: true, value: m.value } : { ok: false, code: m.code, message: m.message }));
    letGo();
  }
});
send({ op: 'ready' });
