import { setFlagsFromString } from 'node:v8';

// sql.js is a 650 KB WebAssembly module. V8 runs it first as Liftoff (baseline) code and, under
// its default tiering budget, recompiles every function that ran a little with TurboFan on its
// worker threads — for the few statements a CLI command runs, hundreds of functions. On a
// 2-core machine those compiles take the cores from the command, and Node waits for them before
// the process exits: measured, a one-turn `arbor run` spent 100–300 ms of wall time and about
// as much CPU on code it never ran again (decision 0085). A budget 100 times the default
// (1,800,000) keeps Liftoff for a short command and still tiers up what a long one (`arbor acp`,
// a long goal) runs hot. V8 reads the budget when a module is instantiated, so this must run
// before the store first loads sql.js. Only the CLI sets it: the extension host shares its V8
// with other extensions.

const BUDGET = 180_000_000;
let done = false;

/** Once per process, before sql.js is first loaded. */
export function tierUpOnlyHotWasm(): void {
  if (done) return;
  done = true;
  setFlagsFromString(`--wasm-tiering-budget=${BUDGET}`);
}
