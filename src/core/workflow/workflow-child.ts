// The script process (decisions 0027 and 0045): started by `isolate.ts` inside bubblewrap (no
// network, its own PID namespace, nothing of the file system but what Node needs to start),
// with an empty environment, a heap limit and Node's permission flags. It runs one workflow
// script in a fresh `vm` context whose only globals are agent, parallel, pipeline, phase, log
// and args (made by `prelude.ts`). Everything the script does outside itself is a JSON
// message to the host over the IPC pipe.
//
// What crosses between this file's realm and the context is primitives only: the prelude
// calls `bridge(kind, text)` (strings in, a string out, never a throw), and this file calls
// the prelude's `run` and `deliver` with strings and numbers and reads nothing they return.
//
// This file is an entry point of its own (out/…/workflow-child.js, dist/workflow-child.js):
// it imports nothing at run time but Node built-ins (`prelude.ts` is a string constant the
// bundler inlines), so the permission model need only let it read itself.
import * as vm from 'node:vm';
import { Worker } from 'node:worker_threads';
import type { FromChild, ToChild } from './bridge';
import { PRELUDE } from './prelude';

const EXIT_STALLED = 3; // bridge.EXIT_STALLED, kept literal: this file imports no module of ours
const MAX_STACK_CHARS = 4000;
// What one message may carry, well under the host's cap on a frame (channel-guard.ts MAX_FRAME_BYTES,
// 64 MiB: JSON's escapes may grow a text up to 6 times on the way): the host keeps far less of a log,
// a phase or an error, so the rest is cut here; a request or a result past it is refused as too large.
const MAX_TEXT_CHARS = 64 * 1024;
const MAX_REQUEST_CHARS = 8 * 1024 * 1024;
const MAX_RESULT_CHARS = 8 * 1024 * 1024;

let finished = false;
let outstanding = 0;
let deliver: ((id: number, text: string) => void) | undefined;

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

type Body = Record<string, unknown>;
const isBody = (v: unknown): v is Body => typeof v === 'object' && v !== null && !Array.isArray(v);

/** What each kind of bridge call does with its (already parsed, own-realm) body; '' = done. */
const KINDS: Record<string, (b: Body, text: string) => string> = {
  phase: (b) => (typeof b.title === 'string' ? (send({ op: 'phase', title: b.title.slice(0, MAX_TEXT_CHARS) }), '') : 'a phase title is text'),
  log: (b) => (typeof b.message === 'string' ? (send({ op: 'log', message: b.message.slice(0, MAX_TEXT_CHARS) }), '') : 'a log message is text'),
  agent: (b, text) => {
    if (!Number.isSafeInteger(b.id)) return 'bad call id';
    if (text.length > MAX_REQUEST_CHARS) return `the request is over ${MAX_REQUEST_CHARS} characters`;
    outstanding++;
    hold();
    send({ op: 'agent', id: b.id as number, prompt: b.prompt, opts: b.opts });
    return '';
  },
  done: (b) => {
    if (b.ok === true && typeof b.json === 'string' && b.json.length > MAX_RESULT_CHARS)
      return finish({
        op: 'done',
        ok: false,
        code: 'RESULT_TOO_LARGE',
        message: `The script's result is over ${MAX_RESULT_CHARS} characters. Return a summary and let agents write files.`,
      });
    if (b.ok === true) return finish({ op: 'done', ok: true, json: typeof b.json === 'string' ? b.json : null });
    const stack = typeof b.stack === 'string' ? b.stack.slice(0, MAX_STACK_CHARS) : '';
    const line = lineOf(stack);
    return finish({
      op: 'done',
      ok: false,
      code: typeof b.code === 'string' ? b.code.slice(0, 100) : 'SCRIPT_ERROR',
      message: typeof b.message === 'string' ? b.message.slice(0, MAX_TEXT_CHARS) : 'The script failed.',
      ...(line !== undefined ? { line } : {}),
    });
  },
};

/**
 * The only way out of the context. Strings in, a string out; it never throws, so no error
 * of this realm (whose constructor chain leads to `process`) can reach the script.
 */
function bridge(kind: unknown, text: unknown): string {
  try {
    if (finished) return 'the workflow has ended';
    if (typeof kind !== 'string' || typeof text !== 'string') return 'bad bridge call';
    const handler = Object.hasOwn(KINDS, kind) ? KINDS[kind] : undefined;
    if (!handler) return 'bad bridge call';
    const body: unknown = JSON.parse(text);
    return isBody(body) ? handler(body, text) : 'bad bridge call';
  } catch {
    return 'bad bridge call';
  }
}

function lineOf(stack: string): number | undefined {
  const m = /workflow\.js:(\d+)/.exec(stack);
  return m ? Math.max(1, Number(m[1]) - 1) : undefined; // the wrapper adds one line
}

function finish(m: FromChild): string {
  if (finished) return '';
  finished = true;
  hold();
  send(m, () => process.exit(0));
  return '';
}

type Install = (
  b: typeof bridge,
  a: string,
) => {
  run: (fn: unknown) => void;
  deliver: (id: number, text: string) => void;
};

/** A fresh context with the prelude's code evaluated in it, not yet handed the bridge or the run's args. */
function freshContext(): { ctx: vm.Context; install: Install } {
  // A null-prototype sandbox: the global's own lookups never fall through to an object of this realm.
  const ctx = vm.createContext(Object.create(null), { name: 'workflow', codeGeneration: { strings: true, wasm: false } });
  return { ctx, install: new vm.Script(PRELUDE, { filename: 'prelude.js' }).runInContext(ctx) as Install };
}

// Made before `ready` (decision 0096, amended): a context costs a few ms to create, which a
// run's head no longer waits for. Nothing of a run is in it until `start` (the prelude has only
// defined its function); the process serves one run, so the context is that run's alone.
let made: ReturnType<typeof freshContext> | undefined = freshContext();

function start(script: string, args: unknown): void {
  const { ctx, install } = made ?? freshContext();
  made = undefined;
  const api = install(bridge, JSON.stringify(args ?? null));
  deliver = api.deliver;
  let fn: unknown;
  try {
    fn = new vm.Script(`(async function () {\n${script}\n})`, { filename: 'workflow.js' }).runInContext(ctx);
  } catch (err) {
    // A syntax error: made by V8 for the context, its message and stack are read here as text.
    const stack = String((err as Error)?.stack ?? '');
    const line = lineOf(stack);
    finish({ op: 'done', ok: false, code: 'SCRIPT_ERROR', message: String((err as Error)?.message ?? err), ...(line !== undefined ? { line } : {}) });
    return;
  }
  try {
    api.run(fn);
  } catch {
    finish({ op: 'done', ok: false, code: 'SCRIPT_ERROR', message: 'The script could not be started.' });
  }
  letGo();
}

// Dies with its host where no PID namespace does it: if the host is killed (kill -9, a crashed
// extension host) this process is re-parented; a watchdog thread notices even while the
// script spins in a synchronous loop, and ends the process.
const ORPHAN_WATCH = `const ppid = process.ppid; setInterval(() => { if (process.ppid !== ppid) process.kill(${process.pid}, 'SIGKILL'); }, 250);`;
try {
  new Worker(ORPHAN_WATCH, { eval: true, env: {}, resourceLimits: { maxOldGenerationSizeMb: 8 } }).unref();
} catch {
  // no worker (permission model without --allow-worker): the host's wall clock still applies while it lives
}

process.on('message', (raw: unknown) => {
  const m = raw as ToChild;
  if (m?.op === 'start') return start(m.script, m.args);
  if (m?.op === 'agent-result' && deliver && Number.isSafeInteger(m.id)) {
    outstanding = Math.max(0, outstanding - 1);
    const text = JSON.stringify(m.ok ? { ok: true, value: m.value ?? null } : { ok: false, code: String(m.code), message: String(m.message) });
    try {
      deliver(m.id, text);
    } catch {
      // the prelude never throws; whatever it did is the script's own business
    }
    letGo();
  }
});
send({ op: 'ready' });
