// What the hosts a crash test kills with -9 share: a harness on the test's store, workspace and
// model server, and a kill at a chosen file's rename (after that file landed, before anything after).
import * as path from 'node:path';
import { Harness, type HarnessConfig } from '../../src/core/harness';

// The module object itself (not a namespace copy): the code under test reads `fsp.rename` at each call.
import fsp = require('node:fs/promises');

/** A harness as a crash host opens it: workspace-write, approval never, the test's model server. */
export function openCrashHarness(storeDir: string, workspace: string, baseURL: string, more: Partial<HarnessConfig> = {}): Promise<Harness> {
  return Harness.open({
    storeDir,
    workspace: [workspace],
    model: { baseURL, name: 'test-model', apiKey: 'test', maxRetries: 0, timeoutMs: 60_000 },
    sandbox: 'workspace-write',
    approval: 'never',
    ...more,
  });
}

/** From now on, the first rename onto a file named `victim` is followed at once by SIGKILL. */
export function killAfterRenameOnto(victim: string): void {
  const rename = fsp.rename;
  fsp.rename = async (from: Parameters<typeof rename>[0], to: Parameters<typeof rename>[1]) => {
    await rename(from, to);
    if (path.basename(String(to)) === victim) process.kill(process.pid, 'SIGKILL');
  };
}
