// Loaded by the plain-Node mocha run (.mocharc.json `require`). After the whole run, its root
// hooks and every file's `after` included (a global teardown, not a root `afterAll`, which would
// run before a file's top-level `after`), no workflow script process may be left under mocha:
// one left is a WorkflowEngine, or a Harness owning one, that a test did not close (its spare,
// decision 0096, or a run's process). It fails the run naming them, then ends them.
import { describeScriptProcesses, scriptProcessesLeft } from './script-processes';

/** How long the spare of an engine closed by the last test may take to go. */
const SETTLE_MS = 2000;

export async function mochaGlobalTeardown(): Promise<void> {
  const left = await scriptProcessesLeft(SETTLE_MS);
  if (!left.length) return;
  for (const p of left)
    try {
      process.kill(-p.pid, 'SIGKILL'); // a script process leads a process group of its own (isolate.ts)
    } catch {
      try {
        process.kill(p.pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
  throw new Error(
    `${left.length} workflow script process(es) still alive after the run (waited ${SETTLE_MS} ms): ` +
      'a test left a WorkflowEngine (or a Harness owning one) unclosed, keeping its spare (decision 0096) or a run alive. ' +
      'Close it on every path (h.close(), engine.closeAll(), in finally or afterEach). Ended now:\n' +
      describeScriptProcesses(left),
  );
}
